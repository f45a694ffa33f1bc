// Forwarding sessions on both engines (issue 18): one script run against the repo and queue statements on
// SQLite and on PostgreSQL gives the same answers and rows. On PostgreSQL, with several connections at
// once: a key gets one secret however many polls make it, a session's queue never passes its cap, every
// queued event is handed over exactly once, and polls hand a session's events over in `seq` order even when
// a dispatch transaction that drew a lower number is still open.
import { afterAll, beforeAll, beforeEach, expect, test } from 'bun:test'
import * as pgTables from '../../src/db/pg/schema.generated'
import * as liteTables from '../../src/db/schema'
import type { Engine } from '../../src/db/engine'
import { pgEngine } from '../../src/db/engine/pg'
import type { PgDb } from '../../src/db/pg/client'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import type { ForwardingRepo, SessionRow } from '../../src/modules/forwarding/port'
import { createForwardingRepo, enqueuing, openSessionsOf } from '../../src/modules/forwarding/repo'
import { openEngines, type Engines } from '../setup/engines'

const T0 = 1_700_000_000_000

let e: Engines
let liteEngine: Engine
let pgE: Engine
let lite: ForwardingRepo
let pg: ForwardingRepo

/** Queues one event in a transaction of its own, as a dispatch does. */
const enqueueOn = (engine: Engine, sessionId: string, n: number, cap: number, now: number) =>
  engine.transaction(function* (tx) {
    return yield* enqueuing(engine, tx, sessionId, event(n), cap, now)
  })
const openOn = (engine: Engine) => engine.run((db) => openSessionsOf(engine, db, 'ws_1', 'live', T0 + 20))

/** The same row in both databases (the generated tables carry the SQLite property names). */
async function seed(table: 'workspaces' | 'users' | 'apiKeys', row: Record<string, unknown>) {
  e.sqlite.db
    .insert(liteTables[table] as any)
    .values(row)
    .run()
  await e.pg.insert(pgTables[table] as any).values(row)
}

const key = (id: string) => ({
  id,
  workspaceId: 'ws_1',
  userId: 'usr_1',
  name: id,
  keyHash: `hash_${id}`,
  keyPrefix: id,
  mode: 'live',
  permissions: ['*'],
  allowedIps: [],
  createdAt: T0,
})

const session = (id: string, extra: Partial<SessionRow> = {}): SessionRow => ({
  id,
  workspaceId: 'ws_1',
  keyId: 'key_1',
  mode: 'live',
  events: ['link.*', 'conversion.created'],
  deviceName: null,
  dropped: 0,
  createdAt: T0,
  lastPollAt: null,
  expiresAt: T0 + 60_000,
  ...extra,
})

const event = (n: number) => ({ eventId: `evt_${n}`, type: 'link.clicked', body: JSON.stringify({ n }) })

/** Polls `done` a bounded number of times: waits are bounded, never timed assertions. */
async function until(done: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 400 && !(await done()); i++) await Bun.sleep(25)
  return done()
}

beforeAll(async () => {
  e = await openEngines()
  liteEngine = sqliteEngine(e.sqlite.db)
  pgE = pgEngine(e.pg)
  lite = createForwardingRepo(liteEngine)
  pg = createForwardingRepo(pgE)
  await seed('workspaces', { id: 'ws_1', slug: 'one', name: 'One', createdAt: T0 })
  await seed('users', { id: 'usr_1', email: 'a@b.test', createdAt: T0 })
  for (const id of ['key_1', 'key_2', 'key_race']) await seed('apiKeys', key(id))
})

beforeEach(async () => {
  e.sqlite.db.delete(liteTables.cliSessions).run()
  await e.pg.delete(pgTables.cliSessions)
})

afterAll(async () => {
  await e?.close()
})

test('secrets: made once per key hash, kept while the hash stays, remade when it changes', async () => {
  const script = async (repo: ForwardingRepo) => {
    let made = 0
    const make = () => `secret_${++made}`
    const answers = [
      await repo.secretFor('key_1', 'h1', make, T0),
      await repo.secretFor('key_1', 'h1', make, T0 + 1),
      await repo.secretFor('key_1', 'h2', make, T0 + 2),
      await repo.secretFor('key_2', 'h1', make, T0 + 3),
    ]
    return { answers, made }
  }
  const onLite = await script(lite)
  expect(await script(pg)).toEqual(onLite)
  expect(onLite).toEqual({ answers: ['secret_1', 'secret_1', 'secret_2', 'secret_3'], made: 3 })
  const liteRows = e.sqlite.db.select().from(liteTables.cliSecrets).orderBy(liteTables.cliSecrets.keyId).all()
  expect(await e.pg.select().from(pgTables.cliSecrets).orderBy(pgTables.cliSecrets.keyId)).toEqual(liteRows)
})

test('sessions and queues: one script, the same answers and rows on both engines', async () => {
  const script = async (
    repo: ForwardingRepo,
    enqueue: (id: string, n: number) => Promise<boolean>,
    open: () => Promise<{ id: string; events: string[] }[]>,
  ) => {
    const out: Record<string, unknown> = {}
    await repo.insert(session('cls_b', { createdAt: T0 + 1, deviceName: 'laptop' }))
    await repo.insert(session('cls_a'))
    await repo.insert(session('cls_c', { expiresAt: T0 + 10 }))
    await repo.insert(session('cls_d', { keyId: 'key_2', mode: 'test', events: ['*'] }))
    out.find = [await repo.find('cls_b'), await repo.find('cls_none')]
    out.open = (await open()).sort((x, y) => x.id.localeCompare(y.id))
    out.queued = [] as boolean[]
    for (let n = 1; n <= 5; n++) (out.queued as boolean[]).push(await enqueue('cls_a', n))
    ;(out.queued as boolean[]).push(await enqueue('cls_b', 6))
    out.list = await repo.listOpen('key_1', T0 + 20)
    out.touch = [await repo.touch('cls_a', T0 + 30, T0 + 90_000), await repo.touch('cls_none', T0 + 30, T0 + 90_000)]
    out.take = [await repo.take('cls_a', 2), await repo.take('cls_a', 10), await repo.take('cls_a', 10)]
    out.delete = [await repo.delete('cls_b', 'key_2'), await repo.delete('cls_b', 'key_1'), await repo.delete('cls_b', 'key_1')]
    out.pruned = await repo.pruneExpired(T0 + 60_000)
    out.left = await repo.listOpen('key_1', T0)
    return out
  }
  const onLite = await script(
    lite,
    (id, n) => enqueueOn(liteEngine, id, n, 3, T0 + n),
    () => openOn(liteEngine),
  )
  const onPg = await script(
    pg,
    (id, n) => enqueueOn(pgE, id, n, 3, T0 + n),
    () => openOn(pgE),
  )
  expect(onPg).toEqual(onLite)
  // What the script means, beyond both engines agreeing.
  expect(onLite.open).toEqual([
    { id: 'cls_a', events: ['link.*', 'conversion.created'] },
    { id: 'cls_b', events: ['link.*', 'conversion.created'] },
  ])
  expect(onLite.queued).toEqual([true, true, true, false, false, true])
  expect((onLite.list as (SessionRow & { queued: number })[]).map((s) => [s.id, s.queued, s.dropped])).toEqual([
    ['cls_a', 3, 2],
    ['cls_b', 1, 0],
  ])
  expect((onLite.take as { eventId: string }[][]).map((t) => t.map((q) => q.eventId))).toEqual([['evt_1', 'evt_2'], ['evt_3'], []])
  expect(onLite.delete).toEqual([false, true, false])
  expect(onLite.pruned).toBe(2)
  expect((onLite.left as SessionRow[]).map((s) => [s.id, s.lastPollAt])).toEqual([['cls_a', T0 + 30]])
})

test('a session that went away since it was listed takes nothing and stops no dispatch', async () => {
  expect(await enqueueOn(pgE, 'cls_gone', 1, 3, T0)).toBe(false)
  // On SQLite too: its fan-out lists sessions from a cache.
  expect(await enqueueOn(liteEngine, 'cls_gone', 1, 3, T0)).toBe(false)
})

test('many nodes making the same key secret at once all answer the one that was stored', async () => {
  for (let round = 0; round < 5; round++) {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => pg.secretFor('key_race', `race_${round}`, () => `s_${round}_${i}`, T0)))
    const [stored] = await e.sql`SELECT secret FROM cli_secrets WHERE key_id = 'key_race'`
    expect(new Set(answers)).toEqual(new Set([stored.secret]))
  }
})

test('dispatches queueing into one session at once never pass its cap; the rest are counted as dropped', async () => {
  const cap = 5
  for (let round = 0; round < 4; round++) {
    const id = `cls_cap_${round}`
    await pg.insert(session(id))
    const answers = await Promise.all(Array.from({ length: 24 }, (_, n) => enqueueOn(pgE, id, n, cap, T0)))
    expect(answers.filter(Boolean).length).toBe(cap)
    const [row] =
      await e.sql`SELECT (SELECT count(*) FROM cli_session_events WHERE session_id = ${id})::int AS held, dropped::int FROM cli_sessions WHERE id = ${id}`
    expect(row).toEqual({ held: cap, dropped: 24 - cap })
  }
})

test('polls of one session at once hand every event over exactly once, each answer in order', async () => {
  await pg.insert(session('cls_poll'))
  await pgE.transaction(function* (tx) {
    for (let n = 0; n < 120; n++) yield* enqueuing(pgE, tx, 'cls_poll', event(n), 500, T0)
  })
  const seen: string[] = []
  for (let round = 0; round < 20; round++) {
    const answers = await Promise.all(Array.from({ length: 6 }, () => pg.take('cls_poll', 7)))
    for (const a of answers) {
      expect(a.map((q) => q.seq)).toEqual(a.map((q) => q.seq).sort((x, y) => x - y))
      seen.push(...a.map((q) => q.eventId))
    }
    if (answers.every((a) => !a.length)) break
  }
  expect(seen.length).toBe(120)
  expect(new Set(seen).size).toBe(120)
})

test('a poll never sees a later number before an open dispatch commits a lower one', async () => {
  await pg.insert(session('cls_order'))
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  // Dispatch 1 queues an event and stays open; dispatch 2 then queues into the same session.
  let firstQueued = false
  const first = e.pg.transaction(async (tx) => {
    const onTx = pgEngine(tx as unknown as PgDb)
    await onTx.run((t) => enqueuing(onTx, t, 'cls_order', event(1), 500, T0))
    firstQueued = true
    await gate
  })
  expect(await until(() => firstQueued)).toBe(true)
  let secondDone = false
  const second = enqueueOn(pgE, 'cls_order', 2, 500, T0).then(() => (secondDone = true))
  const waiting = async () =>
    (await e.sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)[0].n > 0
  expect(await until(async () => secondDone || (await waiting()))).toBe(true)
  // Whatever dispatch 2 did, a poll now must not hand over its event ahead of dispatch 1's.
  const early = await pg.take('cls_order', 10)
  release()
  await Promise.all([first, second])
  const late = await pg.take('cls_order', 10)
  expect(early).toEqual([])
  expect(late.map((q) => q.eventId)).toEqual(['evt_1', 'evt_2'])
  expect(late[0]!.seq).toBeLessThan(late[1]!.seq)
})
