// The pages repo (src/modules/pages/repo.ts) on PostgreSQL and on SQLite: one script of every
// method run on both gives the same answers and leaves the same events; then what only PostgreSQL's
// concurrency can break: editors saving one page at once keep one whole tree with dense positions, two
// deletes publish one event, and a count flush racing a delete neither fails nor resurrects the page.
import { registerEvents } from '../../src/events/catalogue'
import { PAGE_EVENTS } from '../../src/modules/pages/model'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { asc } from 'drizzle-orm'
import type { SQL } from 'bun'
import * as pgSchema from '../../src/db/pg/schema.generated'
import * as sqliteSchema from '../../src/db/schema'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import type { PublishInput } from '../../src/events/outbox'
import type { PageRow, PagesRepo } from '../../src/modules/pages/port'
import { createPagesRepo } from '../../src/modules/pages/repo'
import { createPagesSyncReads } from '../../src/modules/pages/repo-sqlite'
import type { Theme, TreeSection } from '../../src/modules/pages/tree'
import { openEngines, type Engines } from '../setup/engines'

// No runtime is made here, which would register the events the repo publishes: run alone, the file does it.
registerEvents(PAGE_EVENTS)

const T0 = 1_700_000_000_000
const THEME: Theme = {
  light: { background: '#ffffff', text: '#1f1f1f', accent: '#0b57d0', accentText: '#ffffff' },
  dark: { background: '#121212', text: '#ececec', accent: '#8ab4f8', accentText: '#0b1d3a' },
  font: 'system',
  buttonShape: 'rounded',
}

let engines: Engines
let sqliteRepo: PagesRepo
let pgRepo: PagesRepo

const workspace = (id: string) => ({ id, slug: id, name: id, createdAt: T0 })
const link = (id: string, workspaceId: string, extra: { isActive?: boolean; isArchived?: boolean } = {}) => ({
  id,
  workspaceId,
  domain: 'lnk.test',
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
  isArchived: false,
  isTest: false,
  totalClicks: 0,
  uniqueClicks: 0,
  searchText: id,
  createdAt: T0,
  updatedAt: T0,
  ...extra,
})

/** The same parent rows in both databases. */
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

const page = (id: string, workspaceId: string, slug: string, extra: Partial<PageRow> = {}): PageRow => ({
  id,
  workspaceId,
  isTest: false,
  domain: 'lnk.test',
  slug,
  title: `Page ${id}`,
  description: null,
  lang: 'en',
  theme: THEME,
  ogImageUrl: null,
  templateSlug: null,
  savedTemplateId: null,
  version: 1,
  createdAt: T0,
  updatedAt: T0,
  ...extra,
})

const tree = (prefix: string): TreeSection[] => [
  {
    id: `${prefix}_s1`,
    layout: '1-1',
    columns: [
      {
        id: `${prefix}_c1`,
        width: 6,
        blocks: [
          { id: `${prefix}_b1`, type: 'heading', fields: { text: 'Hello', level: 1 } },
          { id: `${prefix}_b2`, type: 'button', fields: { label: 'Go', linkId: 'lnk_a', style: { outline: true, tags: ['x', 'y'] } } },
        ],
      },
      { id: `${prefix}_c2`, width: 6, blocks: [] },
    ],
  },
  {
    id: `${prefix}_s2`,
    layout: 'full',
    columns: [{ id: `${prefix}_c3`, width: 12, blocks: [{ id: `${prefix}_b3`, type: 'text', fields: { markdown: 'a' } }] }],
  },
]

const event =
  (type: string) =>
  (row: PageRow): PublishInput => ({
    type,
    workspaceId: row.workspaceId,
    mode: row.isTest ? 'test' : 'live',
    data: { id: row.id, version: row.version, slug: row.slug },
  })

async function outboxOf(which: 'sqlite' | 'pg') {
  const columns = {
    type: pgSchema.outbox.type,
    mode: pgSchema.outbox.mode,
    workspaceId: pgSchema.outbox.workspaceId,
    data: pgSchema.outbox.data,
    createdAt: pgSchema.outbox.createdAt,
  }
  if (which === 'pg') return engines.pg.select(columns).from(pgSchema.outbox).orderBy(asc(pgSchema.outbox.seq))
  const s = sqliteSchema.outbox
  return engines.sqlite.db
    .select({ type: s.type, mode: s.mode, workspaceId: s.workspaceId, data: s.data, createdAt: s.createdAt })
    .from(s)
    .orderBy(asc(s.seq))
    .all()
}

beforeAll(async () => {
  engines = await openEngines()
  sqliteRepo = createPagesRepo(sqliteEngine(engines.sqlite.db), () => T0)
  pgRepo = createPagesRepo(pgEngine(engines.pg), () => T0)
  await seed({
    workspaces: [workspace('ws_a'), workspace('ws_b')],
    links: [link('lnk_a', 'ws_a'), link('lnk_archived', 'ws_a', { isArchived: true }), link('lnk_other', 'ws_b'), link('lnk_off', 'ws_a', { isActive: false })],
  })
})

afterAll(async () => {
  await engines?.close()
})

/** Every method of the port, in an order that reaches each outcome; answers what each call answered. */
async function script(repo: PagesRepo, setBridge: (linkId: string, pageId: string | null) => Promise<void>) {
  const out: Record<string, unknown> = {}
  out.insert1 = await repo.insert(page('bp_1', 'ws_a', 'one'), tree('p1'), event('bridge_page.created'))
  out.insertTaken = await repo.insert(page('bp_x', 'ws_a', 'one'), tree('px'), event('bridge_page.created'))
  out.insert2 = await repo.insert(page('bp_2', 'ws_a', 'two', { isTest: true, createdAt: T0 + 1, domain: 'other.test' }), [], event('bridge_page.created'))
  out.insert3 = await repo.insert(page('bp_3', 'ws_a', 'three', { createdAt: T0 + 1 }), tree('p3'), event('bridge_page.created'))
  out.insertB = await repo.insert(page('bp_b', 'ws_b', 'bee'), [], event('bridge_page.created'))
  out.find = await repo.find('ws_a', 'bp_1')
  out.findElsewhere = await repo.find('ws_b', 'bp_1')
  out.listAll = await repo.list('ws_a', {}, 0, 10)
  out.listPaged = await repo.list('ws_a', {}, 1, 1)
  out.listLive = await repo.list('ws_a', { isTest: false }, 0, 10)
  out.listDomains = await repo.list('ws_a', { domains: ['other.test'] }, 0, 10)
  out.tree = await repo.tree('bp_1')
  out.treeEmpty = await repo.tree('bp_2')
  out.blockCounts = [...(await repo.blockCounts(['bp_1', 'bp_2', 'bp_3']))].sort()
  out.blockCountsNone = [...(await repo.blockCounts([]))]
  out.saveFields = await repo.save('bp_1', 'ws_a', 1, { title: 'Renamed', description: 'd' }, null, T0 + 5, event('bridge_page.updated'))
  out.treeAfterFields = await repo.tree('bp_1')
  const moved = structuredClone(tree('p1')).reverse()
  moved[1]!.columns[0]!.blocks.reverse()
  moved[1]!.columns[1]!.blocks.push({ id: 'p1_b4', type: 'text', fields: { markdown: 'new' } })
  out.saveTree = await repo.save('bp_1', 'ws_a', 2, {}, moved, T0 + 6, event('bridge_page.updated'))
  out.treeMoved = await repo.tree('bp_1')
  out.saveStale = await repo.save('bp_1', 'ws_a', 2, { title: 'late' }, [], T0 + 7, event('bridge_page.updated'))
  out.saveGone = await repo.save('bp_missing', 'ws_a', 1, {}, null, T0 + 7, event('bridge_page.updated'))
  out.saveOtherWorkspace = await repo.save('bp_1', 'ws_b', 3, {}, null, T0 + 7, event('bridge_page.updated'))
  out.saveSlugTaken = await repo.save('bp_3', 'ws_a', 1, { slug: 'one' }, null, T0 + 7, event('bridge_page.updated'))
  out.treeAfterSlugTaken = await repo.tree('bp_3')
  out.slugsInUse = [...(await repo.slugsInUse('lnk.test', ['one', 'three', 'nope', 'two']))].sort()
  out.slugsNone = [...(await repo.slugsInUse('lnk.test', []))]
  out.linkTargets = await repo.linkTargets('ws_a', ['lnk_off', 'lnk_a', 'lnk_other', 'lnk_archived', 'lnk_missing'])
  out.findBySlug = await repo.findBySlug('lnk.test', 'one')
  out.findBySlugMissing = await repo.findBySlug('other.test', 'one')
  out.findById = await repo.findById('bp_3')
  out.findByIdMissing = await repo.findById('bp_nope')
  out.blockOwner = await repo.blockOwner('p1_b2')
  out.blockOwnerMissing = await repo.blockOwner('nope')
  await repo.addCounts([
    { pageId: 'bp_1', blockId: '', day: 10, count: 3 },
    { pageId: 'bp_1', blockId: 'p1_b2', day: 10, count: 2 },
    { pageId: 'bp_1', blockId: 'p1_b2', day: 10, count: 5 },
    { pageId: 'bp_1', blockId: 'p1_b2', day: 11, count: 1 },
    { pageId: 'bp_gone', blockId: '', day: 10, count: 9 },
  ])
  await repo.addCounts([{ pageId: 'bp_1', blockId: '', day: 10, count: 4 }])
  await repo.addCounts([])
  out.counts = [...(await repo.counts(['bp_1', 'bp_3']))]
  out.countsNone = [...(await repo.counts([]))]
  await setBridge('lnk_a', 'bp_3')
  await setBridge('lnk_off', 'bp_3')
  out.deleteInUse = await repo.delete('bp_3', 'ws_a', { type: 'bridge_page.deleted', workspaceId: 'ws_a', mode: 'live', data: { id: 'bp_3' } })
  await setBridge('lnk_a', null)
  await setBridge('lnk_off', null)
  out.deleteOtherWorkspace = await repo.delete('bp_3', 'ws_b', { type: 'bridge_page.deleted', workspaceId: 'ws_b', mode: 'live', data: { id: 'bp_3' } })
  out.delete = await repo.delete('bp_3', 'ws_a', { type: 'bridge_page.deleted', workspaceId: 'ws_a', mode: 'live', data: { id: 'bp_3' } })
  out.deleteAgain = await repo.delete('bp_3', 'ws_a', { type: 'bridge_page.deleted', workspaceId: 'ws_a', mode: 'live', data: { id: 'bp_3' } })
  out.treeDeleted = await repo.tree('bp_3')
  out.blockOwnerDeleted = await repo.blockOwner('p3_b1')

  const saved = {
    workspaceId: 'ws_a',
    description: null,
    sourcePageId: 'bp_1',
    title: 'T',
    lang: 'en',
    theme: THEME,
    sections: [{ layout: 'full' as const, columns: [{ width: 12, blocks: [{ type: 'text', fields: { markdown: 'x' } }] }] }],
  }
  await repo.insertSavedTemplate({ ...saved, id: 'st_2', name: 'Second', createdAt: T0 + 1 })
  await repo.insertSavedTemplate({ ...saved, id: 'st_1', name: 'First', createdAt: T0 + 1 })
  await repo.insertSavedTemplate({ ...saved, id: 'st_0', name: 'Zero', createdAt: T0 })
  out.findSaved = await repo.findSavedTemplate('ws_a', 'st_1')
  out.findSavedElsewhere = await repo.findSavedTemplate('ws_b', 'st_1')
  out.listSaved = await repo.listSavedTemplates('ws_a')
  out.deleteSaved = await repo.deleteSavedTemplate('ws_a', 'st_1')
  out.deleteSavedAgain = await repo.deleteSavedTemplate('ws_a', 'st_1')
  out.deleteSavedElsewhere = await repo.deleteSavedTemplate('ws_b', 'st_2')
  out.listSavedAfter = await repo.listSavedTemplates('ws_a')
  return out
}

describe('the same script on both engines', () => {
  test('answers and events match, method by method', async () => {
    const onSqlite = await script(sqliteRepo, async (id, pageId) => {
      engines.sqlite.sqlite.query('UPDATE links SET bridge_page_id = ? WHERE id = ?').run(pageId, id)
    })
    const onPg = await script(pgRepo, async (id, pageId) => {
      await engines.sql`UPDATE links SET bridge_page_id = ${pageId} WHERE id = ${id}`
    })
    // The script reaches what it means to reach (on SQLite, the reference).
    expect(onSqlite.insertTaken).toEqual({ ok: false, reason: 'slug_taken' })
    expect(onSqlite.saveStale).toEqual({ ok: false, reason: 'stale' })
    expect(onSqlite.saveGone).toEqual({ ok: false, reason: 'gone' })
    expect(onSqlite.saveSlugTaken).toEqual({ ok: false, reason: 'slug_taken' })
    expect(onSqlite.deleteInUse).toEqual({ ok: false, reason: 'in_use', links: 2 })
    expect(onSqlite.delete).toEqual({ ok: true })
    expect((onSqlite.treeMoved as TreeSection[])[0]!.id).toBe('p1_s2')
    expect((onSqlite.counts as [string, unknown][])[0]).toEqual(['bp_1', { views: 7, buttonClicks: 8, blocks: { p1_b2: 8 } }])
    for (const key of Object.keys(onSqlite)) expect({ [key]: onPg[key] }).toEqual({ [key]: onSqlite[key] })
    expect(await outboxOf('pg')).toEqual(await outboxOf('sqlite'))
    expect((await outboxOf('pg')).map((e) => e.type)).toEqual([
      'bridge_page.created',
      'bridge_page.created',
      'bridge_page.created',
      'bridge_page.created',
      'bridge_page.updated',
      'bridge_page.updated',
      'bridge_page.deleted',
    ])
  })
  test("SQLite's synchronous serving reads answer what the repo answers", async () => {
    const sync = createPagesSyncReads(engines.sqlite.db)
    expect(sync.findBySlugSync('lnk.test', 'one')).toEqual(await sqliteRepo.findBySlug('lnk.test', 'one'))
    expect(sync.findBySlugSync('lnk.test', 'one')?.id).toBe('bp_1')
    expect(sync.findBySlugSync('other.test', 'one')).toBeUndefined()
    expect(sync.findByIdSync('bp_1')).toEqual(await sqliteRepo.findById('bp_1'))
    expect(sync.findByIdSync('bp_nope')).toBeUndefined()
    expect(sync.treeSync('bp_1')).toEqual(await sqliteRepo.tree('bp_1'))
    expect(sync.treeSync('bp_1').length).toBeGreaterThan(0)
    expect(sync.blockOwnerSync('p1_b2')).toEqual(await sqliteRepo.blockOwner('p1_b2'))
    expect(sync.blockOwnerSync('p1_b2')?.pageId).toBe('bp_1')
    expect(sync.linkTargetsSync(['lnk_a', 'lnk_missing'])).toEqual(await sqliteRepo.linkTargets('ws_a', ['lnk_a', 'lnk_missing']))
    expect(sync.linkTargetsSync([])).toEqual([])
  })
})

/** How many backends of this database wait for a lock. */
async function waiting(sql: SQL): Promise<number> {
  const [row] = await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
  return row.n
}

async function until(done: () => Promise<boolean>) {
  for (let i = 0; i < 400; i++) {
    if (await done()) return
    await Bun.sleep(10)
  }
  throw new Error('condition not reached')
}

/** Positions per parent are 0..n-1: no gap, no duplicate. */
async function positionsDense(pageId: string) {
  const rows = await engines.sql`
    SELECT parent, array_agg(position ORDER BY position) AS positions FROM (
      SELECT page_id AS parent, position FROM page_sections WHERE page_id = ${pageId}
      UNION ALL SELECT section_id, position FROM page_columns WHERE page_id = ${pageId}
      UNION ALL SELECT column_id, position FROM page_blocks WHERE page_id = ${pageId}) p
    GROUP BY parent`
  return rows.every((r: { positions: (string | number)[] }) => r.positions.every((p, i) => Number(p) === i))
}

describe('concurrency on PostgreSQL', () => {
  const N = 8

  test('editors saving one page at the same version: exactly one wins, its whole tree is stored', async () => {
    await seed({ workspaces: [workspace('ws_c1')] })
    await pgRepo.insert(page('bp_c1', 'ws_c1', 'c1'), tree('c1'), event('bridge_page.created'))
    const trees = Array.from({ length: N }, (_, i) => [
      {
        id: `c1_w${i}`,
        layout: 'full' as const,
        columns: [{ id: `c1_w${i}_c`, width: 12, blocks: Array.from({ length: i + 1 }, (_, b) => ({ id: `c1_w${i}_b${b}`, type: 'text', fields: { n: b } })) }],
      },
    ])
    const outcomes = await Promise.all(trees.map((t) => pgRepo.save('bp_c1', 'ws_c1', 1, { title: 'edited' }, t, T0 + 1, event('bridge_page.updated'))))
    const winners = outcomes.flatMap((o, i) => (o.ok ? [i] : []))
    expect(winners).toHaveLength(1)
    expect(outcomes.filter((o) => !o.ok)).toEqual(Array(N - 1).fill({ ok: false, reason: 'stale' }))
    expect(await pgRepo.tree('bp_c1')).toEqual(trees[winners[0]!]!)
    expect((await pgRepo.findById('bp_c1'))!.version).toBe(2)
    expect(await positionsDense('bp_c1')).toBe(true)
  })

  test('editors appending a block each, retrying when the page moved on, keep every block at a dense position', async () => {
    await seed({ workspaces: [workspace('ws_c2')] })
    await pgRepo.insert(page('bp_c2', 'ws_c2', 'c2'), tree('c2'), event('bridge_page.created'))
    const append = async (i: number) => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const current = (await pgRepo.find('ws_c2', 'bp_c2'))!
        const sections = await pgRepo.tree('bp_c2')
        // Inserted at the top of the column, so every earlier block moves down one place.
        sections[0]!.columns[0]!.blocks.unshift({ id: `c2_new${i}`, type: 'text', fields: { i } })
        const outcome = await pgRepo.save('bp_c2', 'ws_c2', current.version, {}, sections, T0 + 1, event('bridge_page.updated'))
        if (outcome.ok) return attempt
        expect(outcome).toEqual({ ok: false, reason: 'stale' })
      }
      throw new Error('never saved')
    }
    await Promise.all(Array.from({ length: N }, (_, i) => append(i)))
    const blocks = (await pgRepo.tree('bp_c2'))[0]!.columns[0]!.blocks.map((b) => b.id)
    expect(blocks).toHaveLength(N + 2)
    expect(blocks.slice(N)).toEqual(['c2_b1', 'c2_b2'])
    expect(blocks.slice(0, N).sort()).toEqual(Array.from({ length: N }, (_, i) => `c2_new${i}`).sort())
    expect((await pgRepo.findById('bp_c2'))!.version).toBe(N + 1)
    expect(await positionsDense('bp_c2')).toBe(true)
  })

  test('two deletes of one page: one deletes and publishes, the other finds it gone', async () => {
    await seed({ workspaces: [workspace('ws_c3')] })
    await pgRepo.insert(page('bp_c3', 'ws_c3', 'c3'), tree('c3'), event('bridge_page.created'))
    // A writer holding the page's row makes both deletes arrive before either can finish.
    const blocker = await engines.sql.reserve()
    try {
      await blocker`BEGIN`
      await blocker`SELECT id FROM bridge_pages WHERE id = 'bp_c3' FOR UPDATE`
      const del = { type: 'bridge_page.deleted', workspaceId: 'ws_c3', mode: 'live' as const, data: { id: 'bp_c3' } }
      const both = Promise.all([pgRepo.delete('bp_c3', 'ws_c3', del), pgRepo.delete('bp_c3', 'ws_c3', del)])
      await until(async () => (await waiting(engines.sql)) >= 2)
      await blocker`COMMIT`
      expect((await both).map((o) => o.ok).sort()).toEqual([false, true])
      expect((await both).find((o) => !o.ok)).toEqual({ ok: false, reason: 'gone' })
    } finally {
      blocker.release()
    }
    const [deleted] = await engines.sql`SELECT count(*)::int AS n FROM outbox WHERE type = 'bridge_page.deleted' AND workspace_id = 'ws_c3'`
    expect(deleted.n).toBe(1)
  })

  test('a count flush racing a delete of its page skips the page instead of failing', async () => {
    await seed({ workspaces: [workspace('ws_c4')] })
    await pgRepo.insert(page('bp_c4', 'ws_c4', 'c4'), [], event('bridge_page.created'))
    await pgRepo.insert(page('bp_c4b', 'ws_c4', 'c4b'), [], event('bridge_page.created'))
    const deleter = await engines.sql.reserve()
    try {
      await deleter`BEGIN`
      await deleter`DELETE FROM bridge_pages WHERE id = 'bp_c4'`
      const flush = pgRepo.addCounts([
        { pageId: 'bp_c4', blockId: '', day: 1, count: 1 },
        { pageId: 'bp_c4b', blockId: '', day: 1, count: 2 },
      ])
      await until(async () => (await waiting(engines.sql)) >= 1)
      await deleter`COMMIT`
      await flush
    } finally {
      deleter.release()
    }
    expect(await pgRepo.findById('bp_c4')).toBeUndefined()
    expect([...(await pgRepo.counts(['bp_c4', 'bp_c4b']))]).toEqual([
      ['bp_c4', { views: 0, buttonClicks: 0, blocks: {} }],
      ['bp_c4b', { views: 2, buttonClicks: 0, blocks: {} }],
    ])
  })

  test('count flushes of several nodes at once add up exactly', async () => {
    await seed({ workspaces: [workspace('ws_c5')] })
    await pgRepo.insert(page('bp_c5', 'ws_c5', 'c5'), [], event('bridge_page.created'))
    const flush = () =>
      pgRepo.addCounts([
        { pageId: 'bp_c5', blockId: '', day: 1, count: 1 },
        { pageId: 'bp_c5', blockId: 'b', day: 1, count: 2 },
        { pageId: 'bp_c5', blockId: '', day: 1, count: 1 },
      ])
    await Promise.all(Array.from({ length: 4 * N }, flush))
    expect((await pgRepo.counts(['bp_c5'])).get('bp_c5')).toEqual({ views: 8 * N, buttonClicks: 8 * N, blocks: { b: 8 * N } })
  })
})
