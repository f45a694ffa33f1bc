// The links repo and the domain-slugs repo on both engines: each script runs on SQLite as the server runs it
// (the bulk statements and the redirect's reads prepared, repo-sqlite.ts), on SQLite through the builder alone,
// and on PostgreSQL, and all must answer the same and leave the same rows (links, link_tags, link_usage, outbox
// events). Then what only PostgreSQL can get wrong: nodes creating links at once against a plan allowance, or
// on the same slug.
import { registerEvents } from '../../src/events/catalogue'
import { LINK_EVENTS } from '../../src/modules/links/model'
import { TAG_EVENTS } from '../../src/modules/tags/model'
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
import { LinkWriteRefused, type LinkInsert, type LinkRow, type LinksRepo, type NewLink, type PlanUsage } from '../../src/modules/links/port'
import { createLinksRepo } from '../../src/modules/links/repo'
import type { LinkListRepo, ListFilter } from '../../src/modules/links/list-port'
import { createLinkListRepo } from '../../src/modules/links/repo-list'
import { createLinkStatements, createRedirectReads } from '../../src/modules/links/repo-sqlite'
import { createDomainSlugsRepo } from '../../src/modules/redirect/repo-domain-slugs'
import { createRedirectSyncReads } from '../../src/modules/redirect/repo-sqlite'
import { tempDir } from '../helpers'
import { openEngines, type Engines } from '../setup/engines'

// No runtime is made here, which would register the events the repo publishes: run alone, the file does it.
registerEvents(LINK_EVENTS)
// A link's new tag names become tags, with their events (contract 7.3).
registerEvents(TAG_EVENTS)

const T0 = 1_700_000_000_000
type Repo = LinksRepo

let engines: Engines
/** A second SQLite database, for the repo without its prepared statements. */
let plain: DbHandle
let plainDir: string
/** GET /links' repo (repo-list.ts) beside each links repo, on the same database. */
const lists = new Map<Repo, LinkListRepo>()
let repos: { name: string; repo: Repo; slugs: (domain: string) => Promise<string[]>; state: () => Promise<unknown> }[]

/** The rows a script leaves in a SQLite database. */
/** A new tag's id is random on each engine (tag.created, published by a link write): compared by shape. */
function randomTagId<E extends { type: string; data: unknown }>(e: E): E {
  if (!e.type.startsWith('tag.')) return e
  const data = e.data as { id: string }
  expect(data.id).toMatch(/^tag_[0-9A-Za-z]{20}$/)
  return { ...e, data: { ...data, id: 'tag_…' } }
}

const sqliteState = (db: DbHandle['db']) => async () => ({
  links: db.select().from(lite.links).orderBy(asc(lite.links.id)).all(),
  tags: db.select().from(lite.linkTags).orderBy(asc(lite.linkTags.linkId), asc(lite.linkTags.tag)).all(),
  usage: db.select().from(lite.linkUsage).orderBy(asc(lite.linkUsage.workspaceId), asc(lite.linkUsage.month)).all(),
  events: db
    .select()
    .from(lite.outbox)
    .orderBy(asc(lite.outbox.seq))
    .all()
    .map(({ seq: _, id: __, ...e }) => randomTagId(e)),
})

/** The workspaces on every engine. */
async function seedWorkspaces(workspaces: (typeof lite.workspaces.$inferInsert)[]) {
  engines.sqlite.db.insert(lite.workspaces).values(workspaces).run()
  plain.db.insert(lite.workspaces).values(workspaces).run()
  await engines.pg.insert(pgs.workspaces).values(workspaces)
}

beforeAll(async () => {
  engines = await openEngines()
  plainDir = tempDir('lnk-links-plain-')
  plain = openDatabase(join(plainDir, 'lnk.db'))
  migrate(plain.sqlite)
  // A database made under a linguistic locale (en_US.UTF-8, the usual default) orders text unlike SQLite; the
  // test cluster's C.UTF-8 would hide that, so the columns whose order the ports promise get ICU's root order.
  await engines.sql`ALTER TABLE links ALTER COLUMN id TYPE text COLLATE "und-x-icu", ALTER COLUMN slug TYPE text COLLATE "und-x-icu"`
  await seedWorkspaces(['ws_a', 'ws_b', 'ws_race'].map((id) => ({ id, slug: id, name: id, createdAt: T0 })))
  const db = engines.sqlite.db
  const sq = createLinksRepo(sqliteEngine(db), createLinkStatements(db))
  const reads = createRedirectReads(db)
  const syncReads = createRedirectSyncReads(db)
  const plainSlugs = createDomainSlugsRepo(sqliteEngine(plain.db))
  const pgSlugs = createDomainSlugsRepo(pgEngine(engines.pg))
  const pg = engines.pg
  repos = [
    {
      name: 'sqlite',
      // What the redirect reads on SQLite: the synchronous reads.
      repo: { ...sq, findRedirect: async (d, s) => reads.findRedirectSync(d, s), redirectLinks: async (a, l) => reads.redirectLinksSync(a, l) },
      slugs: async (domain) => syncReads.slugsSync(domain),
      state: sqliteState(db),
    },
    {
      name: 'sqlite, builder only',
      repo: createLinksRepo(sqliteEngine(plain.db)),
      slugs: (domain) => plainSlugs.slugs(domain),
      state: sqliteState(plain.db),
    },
    {
      name: 'postgres',
      repo: createLinksRepo(pgEngine(pg)),
      slugs: (domain) => pgSlugs.slugs(domain),
      state: async () => ({
        links: byBytes(await pg.select().from(pgs.links), (r) => r.id),
        tags: byBytes(await pg.select().from(pgs.linkTags), (r) => `${r.linkId}\n${r.tag}`),
        usage: byBytes(await pg.select().from(pgs.linkUsage), (r) => `${r.workspaceId}\n${r.month}`),
        events: (await pg.select().from(pgs.outbox).orderBy(asc(pgs.outbox.seq))).map(({ seq: _, id: __, ...e }) => randomTagId(e)),
      }),
    },
  ]
  lists.set(repos[0]!.repo, createLinkListRepo(sqliteEngine(db)))
  lists.set(repos[1]!.repo, createLinkListRepo(sqliteEngine(plain.db)))
  lists.set(repos[2]!.repo, createLinkListRepo(pgEngine(pg)))
})

afterAll(async () => {
  plain?.close()
  if (plainDir) rmSync(plainDir, { recursive: true, force: true })
  await engines?.close()
})

/** Sorted by UTF-8 bytes, as SQLite's ORDER BY on text. */
function byBytes<T>(rows: T[], key: (r: T) => string): T[] {
  return rows.sort((a, b) => Buffer.compare(Buffer.from(key(a)), Buffer.from(key(b))))
}

/** Runs the script on each in turn; every answer (as show() gives them) and every final state must equal SQLite's. */
async function same(script: (repo: Repo, slugs: (domain: string) => Promise<string[]>) => Promise<unknown>): Promise<unknown> {
  const answers: unknown[] = []
  const states: unknown[] = []
  for (const { repo, slugs, state } of repos) {
    answers.push(show(await script(repo, slugs)))
    states.push(await state())
  }
  for (let i = 1; i < repos.length; i++) {
    expect({ on: repos[i]!.name, answer: answers[i] }).toEqual({ on: repos[i]!.name, answer: answers[0] })
    expect({ on: repos[i]!.name, state: states[i] }).toEqual({ on: repos[i]!.name, state: states[0] })
  }
  return answers[0]
}

/** Refusals as plain data, so answers compare with toEqual. */
function show(v: unknown): unknown {
  if (v instanceof LinkWriteRefused) return { refused: v.reason, index: v.index }
  if (v instanceof Set) return [...v].sort()
  if (Array.isArray(v)) return v.map(show)
  return v
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
    searchText: `${slug}\nexample.com/${id}`,
    createdAt: T0,
    updatedAt: T0,
    ...over,
  }
}

const created = (row: LinkRow) => ({
  type: 'link.created',
  workspaceId: row.workspaceId,
  mode: row.isTest ? ('test' as const) : ('live' as const),
  data: { id: row.id, tags: row.tags },
})
const item = (row: NewLink, countsTowardsPlan = !row.isTest): LinkInsert => ({ row, event: created, countsTowardsPlan })
const unlimited = (workspaceId = 'ws_a'): PlanUsage => ({ workspaceId, month: '2023-11', allowance: null })

describe('the same answers and rows on both engines', () => {
  test('insertMany: rows with tags, events and the counter; slugs taken in the batch and before refused', async () => {
    const answer = await same((repo) =>
      repo.insertMany(
        [
          item(link('lnk_B1', { title: 'Bee', tags: ['x', 'y', 'x'], utmSource: 'nl', twitterCard: 'summary', expiresAt: T0 + 5, clickLimit: 3 })),
          item(link('lnk_a1', { slug: 'B1' })),
          item(link('lnk_a2', { isTest: true, publicStatsEnabled: true, domain: 'b.test' })),
          item(link('lnk_B1', { slug: 'other' })),
        ],
        unlimited(),
        T0 + 1,
      ),
    )
    expect(answer).toMatchObject([
      { id: 'lnk_B1', tags: ['x', 'y', 'x'] },
      { refused: 'slug_taken', index: 1 },
      { id: 'lnk_a2' },
      { refused: 'slug_taken', index: 3 },
    ])
    await same((repo) => repo.insertMany([item(link('lnk_c1', { slug: 'B1' })), item(link('lnk_0z'))], unlimited(), T0 + 2))
  })

  test('findById, findRedirect, redirectLinks in byte order of ids, slugsInUse, domain slugs', async () => {
    await same((repo) =>
      repo.insertMany(
        ['lnk_Zz', 'lnk_a9', 'lnk_AA', 'lnk_9a', 'lnk_aa'].map((id) => item(link(id, { domain: 'r.test', slug: `s${id.slice(4)}` }))),
        unlimited(),
        T0,
      ),
    )
    const found = await same(async (repo) => [
      await repo.findById('ws_a', 'lnk_Zz'),
      await repo.findById('ws_b', 'lnk_Zz'),
      await repo.findById('ws_a', 'lnk_none'),
    ])
    expect(found).toMatchObject([{ id: 'lnk_Zz' }, undefined, undefined])
    const redirect = await same(async (repo) => [
      await repo.findRedirect('a.test', 'B1'),
      await repo.findRedirect('a.test', 'nope'),
      await repo.findRedirect('b.test', 'a2'),
    ])
    expect(redirect).toMatchObject([
      { id: 'lnk_B1', clickLimit: 3, twitterCard: 'summary', isActive: true },
      undefined,
      { publicStatsEnabled: true, isTest: true },
    ])
    expect(Object.keys((redirect as object[])[0]!)).not.toContain('tags')
    const pages = await same(async (repo) => [await repo.redirectLinks('', 3), await repo.redirectLinks('lnk_AA', 100), await repo.redirectLinks('lnk_zz', 3)])
    expect((pages as { id: string }[][]).map((p) => p.map((r) => r.id))).toEqual([
      ['lnk_0z', 'lnk_9a', 'lnk_AA'],
      ['lnk_B1', 'lnk_Zz', 'lnk_a2', 'lnk_a9', 'lnk_aa'],
      [],
    ])
    const inUse = await same(async (repo) => [
      await repo.slugsInUse('r.test', ['sZz', 'szz', 'sAA', 'x', 's9a', 'y1', 'y2', 'y3', 'y4', 'saa', 'sa9']),
      await repo.slugsInUse('r.test', []),
      await repo.slugsInUse('q.test', ['sZz']),
    ])
    expect(inUse).toEqual([['s9a', 'sAA', 'sZz', 'sa9', 'saa'], [], []])
    const slugs = await same(async (_, slugs) => [await slugs('r.test'), await slugs('none.test')])
    expect(slugs).toEqual([['s9a', 'sAA', 'sZz', 'sa9', 'saa'], []])
  })

  test('the plan allowance: refused past it, test links uncounted, a refused batch leaves no counter', async () => {
    const usage = { workspaceId: 'ws_b', month: '2023-11', allowance: 3 }
    const first = await same((repo) =>
      repo.insertMany(
        [
          item(link('lnk_p1', { workspaceId: 'ws_b', domain: 'p.test' })),
          item(link('lnk_p2', { workspaceId: 'ws_b', domain: 'p.test', isTest: true })),
          item(link('lnk_p3', { workspaceId: 'ws_b', domain: 'p.test' })),
        ],
        usage,
        T0,
      ),
    )
    expect(first).toMatchObject([{ id: 'lnk_p1' }, { id: 'lnk_p2' }, { id: 'lnk_p3' }])
    const second = await same((repo) =>
      repo.insertMany(
        ['lnk_p4', 'lnk_p5', 'lnk_p6']
          .map((id) => item(link(id, { workspaceId: 'ws_b', domain: 'p.test' })))
          .concat(item(link('lnk_p7', { workspaceId: 'ws_b', domain: 'p.test', isTest: true }))),
        usage,
        T0,
      ),
    )
    expect(second).toMatchObject([{ id: 'lnk_p4' }, { refused: 'plan_limit_reached', index: 1 }, { refused: 'plan_limit_reached', index: 2 }, { id: 'lnk_p7' }])
    // Nothing counted in a month without a row: no row is left behind, whether refused by slug or allowance.
    await same((repo) => repo.insertMany([item(link('lnk_p8', { workspaceId: 'ws_b', domain: 'p.test', slug: 'p1' }))], { ...usage, month: '2023-12' }, T0))
    await same((repo) => repo.insertMany([item(link('lnk_p9', { workspaceId: 'ws_b', domain: 'p.test' }))], { ...usage, month: '2024-01', allowance: 0 }, T0))
    const counters = (await repos.find((r) => r.name === 'postgres')!.state()) as { usage: unknown[] }
    expect(counters.usage).toContainEqual({ workspaceId: 'ws_b', month: '2023-11', created: 3 })
    expect(counters.usage).toHaveLength(2)
  })

  test('list: filters, ASCII-only case folding, literal wildcards, scope, newest first with ties in byte order, pages', async () => {
    const l = (id: string, over: Partial<NewLink>) => item(link(id, { workspaceId: 'ws_c', domain: 'l.test', ...over }))
    await seedWorkspaces([{ id: 'ws_c', slug: 'ws_c', name: 'c', createdAt: T0 }])
    await same((repo) =>
      repo.insertMany(
        [
          l('lnk_L1', { searchText: 'summer sale\nABC', tags: ['promo'], createdAt: T0 + 1 }),
          l('lnk_l1', { searchText: 'café\n100%_off', tags: ['promo', 'fr'], createdAt: T0 + 1 }),
          l('lnk_L2', { searchText: 'CAFÉ\n100x off', domain: 'm.test', isArchived: true, createdAt: T0 + 2 }),
          l('lnk_l2', { searchText: 'a\\b', isTest: true, tags: ['fr'], createdAt: T0 }),
          l('lnk_l3', { searchText: 'x', workspaceId: 'ws_a', createdAt: T0 + 9 }),
        ],
        unlimited('ws_c'),
        T0,
      ),
    )
    const ids = async (repo: Repo, f: Omit<ListFilter, 'workspaceId'>, page = 1, perPage = 10) => {
      const list = lists.get(repo)!
      const filter = { workspaceId: 'ws_c', ...f }
      const rows = await list.page({ filter, sort: 'createdAt', order: 'desc', limit: perPage, offset: (page - 1) * perPage })
      return { ids: rows.map((r) => r.id), total: await list.count(filter) }
    }
    const answers = await same(async (repo) => ({
      all: await ids(repo, {}),
      abc: await ids(repo, { search: 'abc' }),
      upper: await ids(repo, { search: 'SUMMER' }),
      cafe: await ids(repo, { search: 'café' }),
      percent: await ids(repo, { search: '100%' }),
      underscore: await ids(repo, { search: '%_o' }),
      backslash: await ids(repo, { search: 'a\\b' }),
      tag: await ids(repo, { tag: 'fr' }),
      domain: await ids(repo, { domain: 'm.test' }),
      archived: await ids(repo, { isArchived: false }),
      test: await ids(repo, { isTest: true }),
      scopeDomains: await ids(repo, { scope: { domains: ['m.test'] } }),
      scopeTags: await ids(repo, { scope: { tags: ['promo', 'none'] } }),
      scopeEmpty: await ids(repo, { scope: { domains: [], tags: [] } }),
      page2: await ids(repo, {}, 2, 3),
      combined: await ids(repo, { tag: 'promo', search: 'off', isArchived: false }),
    }))
    expect(answers).toEqual({
      all: { ids: ['lnk_L2', 'lnk_l1', 'lnk_L1', 'lnk_l2'], total: 4 },
      // The service stores search text lower-cased; SQLite's LIKE still folds ASCII letters, not É.
      abc: { ids: ['lnk_L1'], total: 1 },
      upper: { ids: ['lnk_L1'], total: 1 },
      cafe: { ids: ['lnk_l1'], total: 1 },
      percent: { ids: ['lnk_l1'], total: 1 },
      underscore: { ids: ['lnk_l1'], total: 1 },
      backslash: { ids: ['lnk_l2'], total: 1 },
      tag: { ids: ['lnk_l1', 'lnk_l2'], total: 2 },
      domain: { ids: ['lnk_L2'], total: 1 },
      archived: { ids: ['lnk_l1', 'lnk_L1', 'lnk_l2'], total: 3 },
      test: { ids: ['lnk_l2'], total: 1 },
      scopeDomains: { ids: ['lnk_L2'], total: 1 },
      scopeTags: { ids: ['lnk_l1', 'lnk_L1'], total: 2 },
      scopeEmpty: { ids: ['lnk_L2', 'lnk_l1', 'lnk_L1', 'lnk_l2'], total: 4 },
      page2: { ids: ['lnk_l2'], total: 4 },
      combined: { ids: ['lnk_l1'], total: 1 },
    })
  })

  test('update: fields, tags rewritten, its event; slug_taken and a missing link change nothing', async () => {
    const updated = (row: LinkRow) => ({ type: 'link.updated', workspaceId: row.workspaceId, mode: 'live' as const, data: { id: row.id, slug: row.slug } })
    const answers = await same(async (repo) => [
      await repo.update(
        'lnk_B1',
        { destinationUrl: 'https://example.org/', tags: ['z', 'x'], title: null, isActive: false, updatedAt: T0 + 7 },
        updated,
        T0 + 7,
      ),
      await repo.update('lnk_B1', { utmMedium: 'mail', updatedAt: T0 + 8 }, updated, T0 + 8),
      await repo.update('lnk_B1', { slug: 'a2', domain: 'b.test', updatedAt: T0 + 9 }, updated, T0 + 9),
      await repo.update('lnk_gone', { title: 't' }, updated, T0 + 9),
    ])
    expect(answers).toMatchObject([
      { id: 'lnk_B1', tags: ['z', 'x'], title: null, isActive: false, destinationUrl: 'https://example.org/' },
      { utmMedium: 'mail', tags: ['z', 'x'] },
      { refused: 'slug_taken', index: 0 },
      undefined,
    ])
  })

  test('delete: the link, its tags and its event; false the second time', async () => {
    const deleted = { type: 'link.deleted', workspaceId: 'ws_a', mode: 'live' as const, data: { id: 'lnk_B1' } }
    expect(await same(async (repo) => [await repo.delete('lnk_B1', deleted, T0 + 10), await repo.delete('lnk_B1', deleted, T0 + 11)])).toEqual([true, false])
  })
})

describe('concurrent writers on PostgreSQL', () => {
  const pg = () => repos.find((r) => r.name === 'postgres')!.repo
  const race = (id: string, over: Partial<NewLink> = {}) => item(link(id, { workspaceId: 'ws_race', domain: 'race.test', ...over }))
  const usageRow = async (month: string) => (await engines.sql`SELECT created FROM link_usage WHERE workspace_id = 'ws_race' AND month = ${month}`)[0]?.created

  test('20 creates at once against an allowance of 7 (no counter row yet): exactly 7 links, counted 7', async () => {
    const usage = { workspaceId: 'ws_race', month: '2030-01', allowance: 7 }
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => pg().insertMany([race(`lnk_r${i}`)], usage, T0)))
    const made = results.flat().filter((r) => !(r instanceof LinkWriteRefused))
    expect(made).toHaveLength(7)
    expect(
      results
        .flat()
        .filter((r) => r instanceof LinkWriteRefused)
        .every((r) => (r as LinkWriteRefused).reason === 'plan_limit_reached'),
    ).toBe(true)
    expect(Number(await usageRow('2030-01'))).toBe(7)
    const [{ n }] = await engines.sql`SELECT count(*)::int AS n FROM links WHERE workspace_id = 'ws_race'`
    expect(n).toBe(7)
  })

  test('batches at once against an allowance already partly used: the total stops at the allowance exactly', async () => {
    const usage = { workspaceId: 'ws_race', month: '2030-02', allowance: 17 }
    await pg().insertMany([race('lnk_s_0')], usage, T0)
    const batches = Array.from({ length: 8 }, (_, b) => Array.from({ length: 3 }, (_, i) => race(`lnk_s${b}_${i}`)))
    const results = await Promise.all(batches.map((batch) => pg().insertMany(batch, usage, T0)))
    expect(results.flat().filter((r) => !(r instanceof LinkWriteRefused))).toHaveLength(16)
    expect(Number(await usageRow('2030-02'))).toBe(17)
  })

  test('without an allowance, concurrent creates all count', async () => {
    const usage = { workspaceId: 'ws_race', month: '2030-03', allowance: null }
    await Promise.all(Array.from({ length: 12 }, (_, i) => pg().insertMany([race(`lnk_u${i}`)], usage, T0)))
    expect(Number(await usageRow('2030-03'))).toBe(12)
  })

  test('the same slug created at once by 10 writers: one gets it, the others are told slug_taken', async () => {
    const usage = { workspaceId: 'ws_race', month: '2030-04', allowance: null }
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => pg().insertMany([race(`lnk_same${i}`, { slug: 'same' })], usage, T0)))
    const flat = results.flat()
    expect(flat.filter((r) => !(r instanceof LinkWriteRefused))).toHaveLength(1)
    expect(flat.filter((r) => r instanceof LinkWriteRefused && r.reason === 'slug_taken')).toHaveLength(9)
    expect(Number(await usageRow('2030-04'))).toBe(1)
    const [{ n }] = await engines.sql`SELECT count(*)::int AS n FROM outbox WHERE data->>'id' LIKE 'lnk_same%'`
    expect(n).toBe(1)
  })
})
