// The links repo's external ids on both engines (contract 7.3): an insert refused for a taken externalId
// says so (not slug_taken), an update onto a taken one is refused, and the lookups by externalId and by
// domain + slug answer the same. Each script runs on SQLite as the server runs it (bulk statements prepared),
// on SQLite through the builder alone, and on PostgreSQL; answers and rows must match. Then PostgreSQL alone:
// writers creating one externalId at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { asc } from 'drizzle-orm'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase, type DbHandle } from '../../src/db/client'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import { migrate } from '../../src/db/migrate'
import * as lite from '../../src/db/schema'
import * as pgs from '../../src/db/pg/schema.generated'
import { registerEvents } from '../../src/events/catalogue'
import { LINK_EVENTS } from '../../src/modules/links/model'
import { LinkWriteRefused, type LinkInsert, type LinkRow, type LinksRepo, type NewLink, type PlanUsage } from '../../src/modules/links/port'
import { createLinksRepo } from '../../src/modules/links/repo'
import { createLinkStatements } from '../../src/modules/links/repo-sqlite'
import { tempDir } from '../helpers'
import { openEngines, type Engines } from '../setup/engines'

// No runtime is made here, which would register the events the repo publishes: run alone, the file does it.
registerEvents(LINK_EVENTS)

const T0 = 1_700_000_000_000
let engines: Engines
let plain: DbHandle
let plainDir: string
let repos: { name: string; repo: LinksRepo; state: () => Promise<unknown> }[]

const sqliteState = (db: DbHandle['db']) => async () => ({
  links: db.select().from(lite.links).orderBy(asc(lite.links.id)).all(),
  events: db
    .select()
    .from(lite.outbox)
    .orderBy(asc(lite.outbox.seq))
    .all()
    .map(({ seq: _, id: __, ...e }) => e),
})

beforeAll(async () => {
  engines = await openEngines()
  plainDir = tempDir('lnk-ext-plain-')
  plain = openDatabase(join(plainDir, 'lnk.db'))
  migrate(plain.sqlite)
  const workspaces = ['ws_a', 'ws_b', 'ws_race'].map((id) => ({ id, slug: id, name: id, createdAt: T0 }))
  engines.sqlite.db.insert(lite.workspaces).values(workspaces).run()
  plain.db.insert(lite.workspaces).values(workspaces).run()
  await engines.pg.insert(pgs.workspaces).values(workspaces)
  const db = engines.sqlite.db
  const pg = engines.pg
  repos = [
    { name: 'sqlite', repo: createLinksRepo(sqliteEngine(db), createLinkStatements(db)), state: sqliteState(db) },
    { name: 'sqlite, builder only', repo: createLinksRepo(sqliteEngine(plain.db)), state: sqliteState(plain.db) },
    {
      name: 'postgres',
      repo: createLinksRepo(pgEngine(pg)),
      state: async () => ({
        // Ids here are ASCII of one case, so the database's order is the bytes' order.
        links: await pg.select().from(pgs.links).orderBy(asc(pgs.links.id)),
        events: (await pg.select().from(pgs.outbox).orderBy(asc(pgs.outbox.seq))).map(({ seq: _, id: __, ...e }) => e),
      }),
    },
  ]
})

afterAll(async () => {
  plain?.close()
  if (plainDir) rmSync(plainDir, { recursive: true, force: true })
  await engines?.close()
})

function show(v: unknown): unknown {
  if (v instanceof LinkWriteRefused) return { refused: v.reason, index: v.index }
  if (Array.isArray(v)) return v.map(show)
  return v
}

async function same(script: (repo: LinksRepo) => Promise<unknown>): Promise<unknown> {
  const answers: unknown[] = []
  const states: unknown[] = []
  for (const { repo, state } of repos) {
    answers.push(show(await script(repo)))
    states.push(await state())
  }
  for (let i = 1; i < repos.length; i++) {
    expect({ on: repos[i]!.name, answer: answers[i] }).toEqual({ on: repos[i]!.name, answer: answers[0] })
    expect({ on: repos[i]!.name, state: states[i] }).toEqual({ on: repos[i]!.name, state: states[0] })
  }
  return answers[0]
}

function link(id: string, over: Partial<NewLink> = {}): NewLink {
  const slug = over.slug ?? id.slice(4)
  return {
    id,
    workspaceId: 'ws_a',
    domain: 'a.test',
    slug,
    destinationUrl: `https://example.com/${id}`,
    tags: [],
    redirectStatus: 302,
    publicStatsEnabled: false,
    deepLinkEnabled: false,
    captchaEnabled: false,
    consentRequired: false,
    conversionTracking: false,
    isActive: true,
    isArchived: false,
    isTest: false,
    totalClicks: 0,
    uniqueClicks: 0,
    searchText: slug,
    createdAt: T0,
    updatedAt: T0,
    ...over,
  }
}

const created = (row: LinkRow) => ({ type: 'link.created', workspaceId: row.workspaceId, mode: 'live' as const, data: { id: row.id } })
const item = (row: NewLink): LinkInsert => ({ row, event: created, countsTowardsPlan: true })
const unlimited = (workspaceId = 'ws_a'): PlanUsage => ({ workspaceId, month: '2023-11', allowance: null })

describe('the same answers and rows on both engines', () => {
  test('insertMany: a taken externalId is refused as external_id_taken, in the batch and before; other workspaces and cases are free', async () => {
    const first = await same((repo) =>
      repo.insertMany(
        [
          item(link('lnk_e1', { externalId: 'X-1' })),
          item(link('lnk_e2', { externalId: 'X-1' })),
          item(link('lnk_e3', { externalId: 'x-1' })),
          item(link('lnk_e4', { slug: 'e1', externalId: 'fresh' })),
          item(link('lnk_e5', { slug: 'e1', externalId: 'X-1' })),
          item(link('lnk_e6', { slug: 'e1' })),
        ],
        unlimited(),
        T0,
      ),
    )
    expect(first).toMatchObject([
      { id: 'lnk_e1', externalId: 'X-1' },
      { refused: 'external_id_taken', index: 1 },
      { id: 'lnk_e3', externalId: 'x-1' },
      { refused: 'slug_taken', index: 3 },
      { refused: 'external_id_taken', index: 4 },
      { refused: 'slug_taken', index: 5 },
    ])
    const second = await same((repo) =>
      repo.insertMany([item(link('lnk_e7', { externalId: 'X-1' })), item(link('lnk_e8', { workspaceId: 'ws_b', externalId: 'X-1' }))], unlimited(), T0),
    )
    expect(second).toMatchObject([{ refused: 'external_id_taken', index: 0 }, { id: 'lnk_e8' }])
  })

  test('findByExternalId and findBySlug, within the workspace only', async () => {
    const found = await same(async (repo) => [
      await repo.findByExternalId('ws_a', 'X-1'),
      await repo.findByExternalId('ws_b', 'X-1'),
      await repo.findByExternalId('ws_a', 'x-1'),
      await repo.findByExternalId('ws_a', 'none'),
      await repo.findBySlug('ws_a', 'a.test', 'e3'),
      await repo.findBySlug('ws_b', 'a.test', 'e3'),
      await repo.findBySlug('ws_a', 'b.test', 'e3'),
    ])
    expect((found as (LinkRow | undefined)[]).map((r) => r?.id)).toEqual(['lnk_e1', 'lnk_e8', 'lnk_e3', undefined, 'lnk_e3', undefined, undefined])
  })

  test('update: onto a taken externalId is refused and changes nothing; null clears it and frees it', async () => {
    const updated = (row: LinkRow) => ({ type: 'link.updated', workspaceId: row.workspaceId, mode: 'live' as const, data: { id: row.id } })
    const answers = await same(async (repo) => [
      await repo.update('lnk_e3', { externalId: 'X-1', updatedAt: T0 + 1 }, updated, T0 + 1),
      await repo.update('lnk_e1', { externalId: null, updatedAt: T0 + 2 }, updated, T0 + 2),
      await repo.update('lnk_e3', { externalId: 'X-1', updatedAt: T0 + 3 }, updated, T0 + 3),
    ])
    expect(answers).toMatchObject([{ refused: 'external_id_taken' }, { id: 'lnk_e1', externalId: null }, { id: 'lnk_e3', externalId: 'X-1' }])
  })
})

describe('concurrent writers on PostgreSQL', () => {
  test('one externalId created at once by 10 writers: one gets it, the others are told external_id_taken', async () => {
    const pg = repos.find((r) => r.name === 'postgres')!.repo
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        pg.insertMany([item(link(`lnk_race${i}`, { workspaceId: 'ws_race', domain: 'race.test', externalId: 'one' }))], unlimited('ws_race'), T0),
      ),
    )
    const flat = results.flat()
    expect(flat.filter((r) => !(r instanceof LinkWriteRefused))).toHaveLength(1)
    expect(flat.filter((r) => r instanceof LinkWriteRefused && r.reason === 'external_id_taken')).toHaveLength(9)
    const [{ n }] = await engines.sql`SELECT count(*)::int AS n FROM links WHERE workspace_id = 'ws_race'`
    expect(n).toBe(1)
  })
})
