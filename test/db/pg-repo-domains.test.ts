// The domains repo (src/modules/domains/repo.ts) on PostgreSQL and on SQLite: one script of
// every method run on both gives the same answers, events and jobs; then what only PostgreSQL's concurrency
// can break: a claim added while another workspace verifies the name, several workspaces verifying one name
// at once (one holds it, the others are told, nothing deadlocks), one workspace adding a name twice at once,
// and two deletes of one domain.
import { registerEvents } from '../../src/events/catalogue'
import { DOMAIN_EVENTS } from '../../src/modules/domains/model'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { asc } from 'drizzle-orm'
import type { SQL } from 'bun'
import * as pgSchema from '../../src/db/pg/schema.generated'
import * as sqliteSchema from '../../src/db/schema'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import type { DomainRow, DomainsRepo, Effects } from '../../src/modules/domains/port'
import { createDomainsRepo } from '../../src/modules/domains/repo'
import { openEngines, type Engines } from '../setup/engines'

// No runtime is made here, which would register the events the repo publishes: run alone, the file does it.
registerEvents(DOMAIN_EVENTS)

const T0 = 1_700_000_000_000
const NAME = 'go.example'

let engines: Engines
let sqliteRepo: DomainsRepo
let pgRepo: DomainsRepo

const workspace = (id: string) => ({ id, slug: id, name: id, createdAt: T0 })
const link = (id: string, workspaceId: string, domain: string, isArchived = false) => ({
  id,
  workspaceId,
  domain,
  slug: id,
  destinationUrl: 'https://example.com/',
  tags: [],
  redirectStatus: 302,
  publicStatsEnabled: false,
  deepLinkEnabled: false,
  captchaEnabled: false,
  consentRequired: false,
  conversionTracking: false,
  isActive: true,
  isArchived,
  isTest: false,
  totalClicks: 0,
  uniqueClicks: 0,
  searchText: id,
  createdAt: T0,
  updatedAt: T0,
})

async function seed(rows: { workspaces?: ReturnType<typeof workspace>[]; links?: ReturnType<typeof link>[] }) {
  for (const w of rows.workspaces ?? []) {
    engines.sqlite.db.insert(sqliteSchema.workspaces).values(w).run()
    await engines.pg.insert(pgSchema.workspaces).values(w)
  }
  for (const l of rows.links ?? []) {
    engines.sqlite.db.insert(sqliteSchema.links).values(l).run()
    await engines.pg.insert(pgSchema.links).values(l)
  }
}

const domain = (id: string, workspaceId: string, name: string, createdAt = T0): DomainRow => ({
  id,
  workspaceId,
  domain: name,
  verificationStatus: 'pending',
  dnsStatus: 'unknown',
  sslStatus: 'unmanaged',
  token: `tok_${id}`,
  failureReason: null,
  seen: null,
  rootRedirectUrl: null,
  notFoundUrl: null,
  expiredUrl: null,
  lastCheckedAt: null,
  nextCheckAt: createdAt + 60_000,
  verifiedAt: null,
  misconfiguredAt: null,
  createdAt,
  updatedAt: createdAt,
})

const effects = (type: string, row: Pick<DomainRow, 'id' | 'workspaceId'>, at = T0): Effects => ({
  events: [{ type, workspaceId: row.workspaceId, mode: 'live', data: { id: row.id } }],
  job: { type: 'domain.check', payload: { id: row.id, at }, runAt: at, maxAttempts: 3 },
})

const verify = (at: number) => ({
  verificationStatus: 'verified' as const,
  verifiedAt: at,
  failureReason: null,
  lastCheckedAt: at,
  updatedAt: at,
  seen: { txt: ['lnk-verify=x'], cname: null, a: [], aaaa: [], http: null, errors: [] },
})
const claim = (at: number) => ({ reason: 'Another workspace verified it first', now: at })

// jsonb keeps keys in its own order, so jobs are sorted by what they are for, not by their text.
const byPurpose = <T extends { payload: unknown; runAt: number }>(jobs: T[]) =>
  jobs.sort((a, b) => JSON.stringify([(a.payload as { id: string }).id, a.runAt]).localeCompare(JSON.stringify([(b.payload as { id: string }).id, b.runAt])))

async function sideEffects(which: 'sqlite' | 'pg') {
  if (which === 'pg') {
    const o = pgSchema.outbox
    const j = pgSchema.jobs
    const events = await engines.pg.select({ type: o.type, workspaceId: o.workspaceId, data: o.data, createdAt: o.createdAt }).from(o).orderBy(asc(o.seq))
    const jobs = await engines.pg
      .select({
        type: j.type,
        payload: j.payload,
        status: j.status,
        runAt: j.runAt,
        maxAttempts: j.maxAttempts,
        uniqueKey: j.uniqueKey,
        createdAt: j.createdAt,
      })
      .from(j)
    return { events, jobs: byPurpose(jobs) }
  }
  const o = sqliteSchema.outbox
  const j = sqliteSchema.jobs
  const db = engines.sqlite.db
  const events = db.select({ type: o.type, workspaceId: o.workspaceId, data: o.data, createdAt: o.createdAt }).from(o).orderBy(asc(o.seq)).all()
  const jobs = db
    .select({ type: j.type, payload: j.payload, status: j.status, runAt: j.runAt, maxAttempts: j.maxAttempts, uniqueKey: j.uniqueKey, createdAt: j.createdAt })
    .from(j)
    .all()
  return { events, jobs: byPurpose(jobs) }
}

beforeAll(async () => {
  engines = await openEngines()
  sqliteRepo = createDomainsRepo(sqliteEngine(engines.sqlite.db), () => T0)
  pgRepo = createDomainsRepo(pgEngine(engines.pg), () => T0)
  await seed({
    workspaces: ['ws_a', 'ws_b', 'ws_c', 'ws_d'].map(workspace),
    links: [link('l1', 'ws_a', NAME), link('l2', 'ws_a', NAME), link('l3', 'ws_a', NAME, true), link('l4', 'ws_b', NAME), link('l5', 'ws_a', 'a.example')],
  })
})

afterAll(async () => {
  await engines?.close()
})

async function script(repo: DomainsRepo) {
  const out: Record<string, unknown> = {}
  const d1 = domain('dom_1', 'ws_a', NAME)
  out.insert = await repo.insert(d1, effects('domain.created', d1))
  out.insertTakenHere = await repo.insert(domain('dom_dup', 'ws_a', NAME), effects('domain.created', d1))
  out.insertB = await repo.insert(domain('dom_2', 'ws_b', NAME, T0 + 1), effects('domain.created', { id: 'dom_2', workspaceId: 'ws_b' }))
  out.insertC = await repo.insert(domain('dom_3', 'ws_c', NAME, T0 + 2), {})
  out.insertOther = await repo.insert(domain('dom_5', 'ws_b', 'a.example', T0 + 3), {})
  out.findById = await repo.findById('ws_a', 'dom_1')
  out.findByIdElsewhere = await repo.findById('ws_b', 'dom_1')
  out.findAnyById = await repo.findAnyById('dom_2')
  out.findAnyMissing = await repo.findAnyById('dom_nope')
  out.findByToken = await repo.findByToken('tok_dom_3')
  out.findByTokenMissing = await repo.findByToken('tok_nope')
  out.listA = await repo.list('ws_a')
  out.listAll = await repo.list()
  out.verifiedNone = await repo.verified()
  out.update = await repo.update(
    'dom_1',
    { rootRedirectUrl: 'https://root.example/', updatedAt: T0 + 4 },
    { events: [{ type: 'domain.misconfigured', workspaceId: 'ws_a', mode: 'live', data: {} }] },
  )
  out.updateMissing = await repo.update('dom_nope', { updatedAt: T0 + 4 }, effects('domain.misconfigured', d1))
  out.verifyFirst = await repo.recordCheck('dom_1', { ...verify(T0 + 5), dnsStatus: 'ok' }, effects('domain.verified', d1, T0 + 5), claim(T0 + 5))
  out.afterVerify = await repo.list()
  out.insertVerifiedElsewhere = await repo.insert(domain('dom_4', 'ws_d', NAME), effects('domain.created', { id: 'dom_4', workspaceId: 'ws_d' }))
  out.verifyLoser = await repo.recordCheck('dom_2', verify(T0 + 6), effects('domain.verified', { id: 'dom_2', workspaceId: 'ws_b' }), claim(T0 + 6))
  out.loserRecorded = await repo.recordCheck(
    'dom_2',
    { verificationStatus: 'failed', failureReason: 'lost', lastCheckedAt: T0 + 6, nextCheckAt: null },
    {},
    null,
  )
  out.checkGone = await repo.recordCheck('dom_nope', verify(T0 + 6), effects('domain.verified', d1), claim(T0 + 6))
  out.verifyOther = await repo.recordCheck('dom_5', verify(T0 + 7), {}, claim(T0 + 7))
  out.verified = await repo.verified()
  out.deleteElsewhere = await repo.delete('dom_1', 'ws_b', true, (n) => effects('domain.deleted', d1, n))
  out.deleteHasLinks = await repo.delete('dom_1', 'ws_a', false, (n) => effects('domain.deleted', d1, n))
  out.deleteArchiving = await repo.delete('dom_1', 'ws_a', true, (n) => effects('domain.deleted', d1, n))
  out.deleteAgain = await repo.delete('dom_1', 'ws_a', true, (n) => effects('domain.deleted', d1, n))
  out.deleteNoLinks = await repo.delete('dom_3', 'ws_c', false, (n) => effects('domain.deleted', { id: 'dom_3', workspaceId: 'ws_c' }, n))
  out.listAfter = await repo.list()
  return out
}

const linkStates = async () => ({
  sqlite: (engines.sqlite.sqlite.query('SELECT id, is_archived AS archived FROM links ORDER BY id').all() as { id: string; archived: number }[]).map((r) => ({
    id: r.id,
    archived: Boolean(r.archived),
  })),
  pg: (
    (await engines.sql`SELECT id, is_archived AS archived FROM links WHERE workspace_id IN ('ws_a', 'ws_b') ORDER BY id`) as { id: string; archived: boolean }[]
  ).map((r) => ({ ...r })),
})

describe('the same script on both engines', () => {
  test('answers, events, jobs and archived links match, method by method', async () => {
    const onSqlite = await script(sqliteRepo)
    const onPg = await script(pgRepo)
    expect(onSqlite.insertTakenHere).toEqual({ ok: false, reason: 'taken_here', id: 'dom_1' })
    expect(onSqlite.verifyFirst).toMatchObject({ ok: true, failedElsewhere: ['dom_2', 'dom_3'] })
    expect(onSqlite.insertVerifiedElsewhere).toEqual({ ok: false, reason: 'verified_elsewhere' })
    expect(onSqlite.verifyLoser).toEqual({ ok: false, reason: 'claimed_elsewhere' })
    expect(onSqlite.checkGone).toEqual({ ok: false, reason: 'gone' })
    expect(onSqlite.deleteHasLinks).toEqual({ ok: false, reason: 'has_links', links: 2 })
    expect(onSqlite.deleteArchiving).toEqual({ ok: true, archivedLinks: 2 })
    expect((onSqlite.verified as DomainRow[]).map((d) => d.domain)).toEqual(['a.example', NAME])
    for (const key of Object.keys(onSqlite)) expect({ [key]: onPg[key] }).toEqual({ [key]: onSqlite[key] })
    const [sqliteEffects, pgEffects] = [await sideEffects('sqlite'), await sideEffects('pg')]
    expect(pgEffects).toEqual(sqliteEffects)
    expect(sqliteEffects.events.map((e) => e.type)).toEqual([
      'domain.created',
      'domain.created',
      'domain.misconfigured',
      'domain.verified',
      'domain.deleted',
      'domain.deleted',
    ])
    const links = await linkStates()
    expect(links.pg).toEqual(links.sqlite)
    expect(links.pg.filter((l) => l.archived).map((l) => l.id)).toEqual(['l1', 'l2', 'l3'])
  })
})

async function waiting(sql: SQL): Promise<number> {
  const [row] = await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
  return row.n
}

/** Polls until `done` or `settled` resolves; bounded. */
async function until(done: () => Promise<boolean>, settled?: Promise<unknown>) {
  let over = false
  void settled?.finally(() => (over = true))
  for (let i = 0; i < 400; i++) {
    if (over || (await done())) return
    await Bun.sleep(10)
  }
  throw new Error('condition not reached')
}

describe('concurrency on PostgreSQL', () => {
  test('a claim added while another workspace verifies the name never stays pending beside the verified one', async () => {
    const name = 'race.example'
    await seed({ workspaces: ['ws_r1', 'ws_r2'].map(workspace) })
    await pgRepo.insert(domain('dom_r1', 'ws_r1', name), {})
    // An uncommitted claim of the same workspace and name holds the insert between its check and its write.
    const blocker = await engines.sql.reserve()
    try {
      await blocker`BEGIN`
      await blocker`INSERT INTO domains (id, workspace_id, domain, verification_status, dns_status, ssl_status, token, created_at, updated_at)
        VALUES ('dom_hold', 'ws_r2', ${name}, 'pending', 'unknown', 'unmanaged', 'tok_hold', ${T0}, ${T0})`
      const inserting = pgRepo.insert(domain('dom_r2', 'ws_r2', name, T0 + 1), effects('domain.created', { id: 'dom_r2', workspaceId: 'ws_r2' }))
      await until(async () => (await waiting(engines.sql)) >= 1)
      const verifying = pgRepo.recordCheck('dom_r1', verify(T0 + 2), effects('domain.verified', { id: 'dom_r1', workspaceId: 'ws_r1' }), claim(T0 + 2))
      await until(async () => (await waiting(engines.sql)) >= 2, verifying)
      await blocker`ROLLBACK`
      const [inserted, verified] = await Promise.all([inserting, verifying])
      expect(verified.ok).toBe(true)
      if (inserted.ok) expect(verified).toMatchObject({ failedElsewhere: ['dom_r2'] })
    } finally {
      blocker.release()
    }
    const rows = await engines.sql`SELECT id, verification_status AS status FROM domains WHERE domain = ${name} ORDER BY id`
    expect(rows.filter((r: { status: string }) => r.status === 'verified').map((r: { id: string }) => r.id)).toEqual(['dom_r1'])
    expect(rows.filter((r: { status: string }) => r.status === 'pending')).toEqual([])
  })

  test('workspaces verifying one name at once: one holds it, every other is told claimed_elsewhere', async () => {
    const name = 'many.example'
    const ids = Array.from({ length: 6 }, (_, i) => `dom_m${i}`)
    await seed({ workspaces: ids.map((id) => workspace(`ws_${id}`)) })
    for (const [i, id] of ids.entries()) await pgRepo.insert(domain(id, `ws_${id}`, name, T0 + i), {})
    const outcomes = await Promise.all(
      ids.map((id) => pgRepo.recordCheck(id, verify(T0 + 10), effects('domain.verified', { id, workspaceId: `ws_${id}` }), claim(T0 + 10))),
    )
    const won = outcomes.filter((o) => o.ok)
    expect(won).toHaveLength(1)
    expect(outcomes.filter((o) => !o.ok)).toEqual(Array(ids.length - 1).fill({ ok: false, reason: 'claimed_elsewhere' }))
    const winner = (won[0] as { row: DomainRow }).row.id
    expect([...(won[0] as { failedElsewhere: string[] }).failedElsewhere].sort()).toEqual(ids.filter((id) => id !== winner))
    const [row] = await engines.sql`SELECT count(*)::int AS n FROM domains WHERE domain = ${name} AND verification_status = 'verified'`
    expect(row.n).toBe(1)
    const [events] = await engines.sql`SELECT count(*)::int AS n FROM outbox WHERE type = 'domain.verified' AND workspace_id LIKE 'ws_dom_m%'`
    expect(events.n).toBe(1)
  })

  test('one workspace adding a name several times at once gets one domain, the others are pointed at it', async () => {
    await seed({ workspaces: [workspace('ws_t')] })
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        pgRepo.insert(domain(`dom_t${i}`, 'ws_t', 'twice.example'), effects('domain.created', { id: `dom_t${i}`, workspaceId: 'ws_t' })),
      ),
    )
    const rows = await pgRepo.list('ws_t')
    expect(rows).toHaveLength(1)
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1)
    expect(outcomes.filter((o) => !o.ok)).toEqual(Array(5).fill({ ok: false, reason: 'taken_here', id: rows[0]!.id }))
    const [events] = await engines.sql`SELECT count(*)::int AS n FROM outbox WHERE workspace_id = 'ws_t'`
    expect(events.n).toBe(1)
  })

  test('two deletes of one domain: one deletes and publishes, the other finds it gone', async () => {
    await seed({ workspaces: [workspace('ws_del')] })
    await pgRepo.insert(domain('dom_del', 'ws_del', 'del.example'), {})
    const blocker = await engines.sql.reserve()
    try {
      await blocker`BEGIN`
      await blocker`SELECT id FROM domains WHERE id = 'dom_del' FOR UPDATE`
      const del = () => pgRepo.delete('dom_del', 'ws_del', false, (n) => effects('domain.deleted', { id: 'dom_del', workspaceId: 'ws_del' }, n))
      const both = Promise.all([del(), del()])
      await until(async () => (await waiting(engines.sql)) >= 2)
      await blocker`COMMIT`
      expect((await both).map((o) => o.ok).sort()).toEqual([false, true])
      expect((await both).find((o) => !o.ok)).toEqual({ ok: false, reason: 'gone' })
    } finally {
      blocker.release()
    }
    const [events] = await engines.sql`SELECT count(*)::int AS n FROM outbox WHERE type = 'domain.deleted' AND workspace_id = 'ws_del'`
    expect(events.n).toBe(1)
  })
})
