// The analytics reads, the maintenance jobs' rows and the public stats page on both engines (issue 18): the
// same clicks, rollups, links, conversions and settings seeded into each, then every method of the one
// analytics repo and the one maintenance repo, built on each engine, asked the same questions answers alike
// (as numbers, sketches as bytes), SQLite's prepared uniques reads too, and maintenance leaves the same rows. On
// PostgreSQL: concurrent backfills roll the clicks up once, concurrent prunes delete each click once, and
// clicksPerLinkOutside reads one snapshot while flushes commit.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import * as pgTables from '../../src/db/pg/schema.generated'
import * as liteTables from '../../src/db/schema'
import { rows, type Builder, type Engine } from '../../src/db/engine'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import { Figures } from '../../src/modules/analytics/figures'
import type { Grain } from '../../src/modules/analytics/plan'
import {
  MINUTES_FROM,
  MONTHS_BEFORE,
  SECONDS_FROM,
  WEEKS_BEFORE,
  type AnalyticsRepo,
  type AnalyticsScope,
  type MaintenanceRepo,
  type UniquesReads,
} from '../../src/modules/analytics/port'
import { createAnalyticsRepo } from '../../src/modules/analytics/repo'
import { createMaintenanceRepo } from '../../src/modules/analytics/repo-maintenance'
import { createUniquesReads } from '../../src/modules/analytics/repo-uniques-sqlite'
import type { RollupClick } from '../../src/modules/analytics/rollup-writer'
import { createRollupWriter } from '../../src/modules/analytics/rollup-writer-sqlite'
import { createRedirectSyncReads } from '../../src/modules/redirect/repo-sqlite'
import { createStatsRepo } from '../../src/modules/redirect/repo-stats'
import { openEngines, type Engines } from '../setup/engines'

const HOUR = 3_600_000
const DAY = 86_400_000
/** The hour the questions look into; clicks span the 40 days before it and the hour itself. */
const H = Date.UTC(2024, 2, 14, 12)

type Table = keyof typeof liteTables & keyof typeof pgTables

/** The same rows in both databases (the generated tables carry the SQLite property names). */
async function seed(e: Engines, table: Table, rows: Record<string, unknown>[]) {
  if (!rows.length) return
  for (let i = 0; i < rows.length; i += 500) {
    e.sqlite.db
      .insert(liteTables[table] as any)
      .values(rows.slice(i, i + 500))
      .run()
    await e.pg.insert(pgTables[table] as any).values(rows.slice(i, i + 500))
  }
}

/** A small deterministic generator, so a failure reproduces. */
function random(seedValue: number) {
  let s = seedValue >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const link = (id: string, workspaceId: string, domain: string, extra: Record<string, unknown> = {}) => ({
  id,
  workspaceId,
  domain,
  slug: id,
  destinationUrl: `https://dest.test/${id}`,
  title: id === 'lnk_a' ? 'Title A' : null,
  tags: [],
  redirectStatus: 302,
  publicStatsEnabled: true,
  deepLinkEnabled: false,
  captchaEnabled: false,
  consentRequired: false,
  conversionTracking: true,
  isActive: true,
  isArchived: false,
  isTest: false,
  totalClicks: 0,
  uniqueClicks: 0,
  searchText: id,
  createdAt: H - 50 * DAY,
  updatedAt: H - 50 * DAY,
  ...extra,
})

const LINKS = [
  link('lnk_a', 'ws_1', 'a.test', { totalClicks: 120, uniqueClicks: 30 }),
  link('lnk_b', 'ws_1', 'a.test', { totalClicks: 7, uniqueClicks: 5 }),
  link('lnk_c', 'ws_1', 'b.test'),
  link('lnk_quiet', 'ws_1', 'b.test'),
  link('lnk_t', 'ws_1', 'a.test', { isTest: true }),
  link('lnk_z', 'ws_2', 'a.test'),
]
const TAGS = [
  { linkId: 'lnk_a', tag: 'spring' },
  { linkId: 'lnk_c', tag: 'spring' },
  { linkId: 'lnk_c', tag: 'promo' },
  { linkId: 'lnk_t', tag: 'spring' },
]

function makeClicks(count: number, seedValue: number, linkIds: string[], from: number, to: number, prefix = 'clk') {
  const r = random(seedValue)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!
  const workspaceOf = new Map(LINKS.map((l) => [l.id, l.workspaceId]))
  const out = []
  for (let i = 0; i < count; i++) {
    const linkId = pick(linkIds)
    out.push({
      id: `${prefix}_${String(i).padStart(6, '0')}`,
      linkId,
      workspaceId: workspaceOf.get(linkId) ?? 'ws_race',
      clickedAt: from + Math.floor(r() * (to - from)),
      visitorHash: `${Math.floor(r() * 40)
        .toString(16)
        .padStart(4, '0')}${'9f3c1b7a2d5e'.repeat(5)}`,
      isBot: r() < 0.15,
      country: pick([null, 'DE', 'FR', 'US', 'JP']),
      referrerHost: pick([null, 'news.test', 'mail.test']),
      browser: pick([null, 'Firefox', 'Chrome']),
      os: pick([null, 'Linux', 'iOS']),
      device: pick([null, 'desktop', 'mobile']),
    })
  }
  return out
}

const asRollupClick = (c: ReturnType<typeof makeClicks>[number]): RollupClick => ({
  linkId: c.linkId,
  workspaceId: c.workspaceId,
  clickedAt: c.clickedAt,
  visitor: c.visitorHash,
  isBot: c.isBot,
  country: c.country,
  referrer: c.referrerHost,
  browser: c.browser,
  os: c.os,
  device: c.device,
})

/** Rolls `rows` up on SQLite with the flush's own writer, then copies the rollup tables to PostgreSQL. */
async function seedClicksAndRollups(e: Engines, rows: ReturnType<typeof makeClicks>) {
  await seed(e, 'clicks', rows)
  const add = createRollupWriter(e.sqlite.sqlite)
  e.sqlite.sqlite.transaction(() => add(rows.map(asRollupClick)))()
  await e.pg.delete(pgTables.linkRollups)
  await e.pg.delete(pgTables.workspaceRollups)
  for (const table of ['linkRollups', 'workspaceRollups'] as const) {
    const all = e.sqlite.db.select().from(liteTables[table]).all()
    for (let i = 0; i < all.length; i += 500) await e.pg.insert(pgTables[table]).values(all.slice(i, i + 500))
  }
}

/** Rows as comparable values, in one order whatever order an engine answered in. */
const sorted = <T>(rows: T[]) => rows.map((r) => JSON.stringify(r, (_k, v) => (v instanceof Uint8Array ? `bytes:${Buffer.from(v).toString('hex')}` : v))).sort()

let e: Engines
let lite: AnalyticsRepo
let pg: AnalyticsRepo
/** What SQLite's request and uniques threads read sketches and raw visitors through. */
let hot: UniquesReads
const allClicks = [
  // 40 days of clicks, then a burst in the hour H.
  ...makeClicks(1500, 1, ['lnk_a', 'lnk_b', 'lnk_c', 'lnk_t', 'lnk_z'], H - 40 * DAY, H),
  ...makeClicks(600, 2, ['lnk_a', 'lnk_b', 'lnk_c', 'lnk_t', 'lnk_z'], H, H + HOUR, 'burst'),
]

beforeAll(async () => {
  e = await openEngines()
  lite = createAnalyticsRepo(sqliteEngine(e.sqlite.db))
  pg = createAnalyticsRepo(pgEngine(e.pg))
  hot = createUniquesReads(e.sqlite.sqlite)
  await seed(e, 'workspaces', [
    { id: 'ws_1', slug: 'one', name: 'One', createdAt: H - 60 * DAY },
    { id: 'ws_2', slug: 'two', name: 'Two', createdAt: H - 60 * DAY },
    { id: 'ws_race', slug: 'race', name: 'Race', createdAt: H - 60 * DAY },
  ])
  await seed(e, 'links', [...LINKS, link('lnk_race', 'ws_race', 'r.test')])
  await seed(e, 'linkTags', TAGS)
  await seedClicksAndRollups(e, allClicks)
  await seed(e, 'conversions', [
    {
      id: 'cnv_1',
      clickId: 'clk_000001',
      linkId: 'lnk_a',
      workspaceId: 'ws_1',
      eventName: 'buy',
      value: 19.99,
      currency: 'EUR',
      metadata: null,
      fingerprint: 'f1',
      createdAt: H - 2 * DAY,
    },
    {
      id: 'cnv_2',
      clickId: 'clk_000002',
      linkId: 'lnk_c',
      workspaceId: 'ws_1',
      eventName: 'signup',
      value: null,
      currency: null,
      metadata: { a: 1 },
      fingerprint: 'f2',
      createdAt: H - DAY,
    },
    {
      id: 'cnv_3',
      clickId: 'clk_000003',
      linkId: 'lnk_t',
      workspaceId: 'ws_1',
      eventName: 'buy',
      value: 5,
      currency: 'USD',
      metadata: null,
      fingerprint: 'f3',
      createdAt: H + 10,
    },
    {
      id: 'cnv_4',
      clickId: 'clk_000004',
      linkId: 'lnk_z',
      workspaceId: 'ws_2',
      eventName: 'buy',
      value: 1.5,
      currency: 'USD',
      metadata: null,
      fingerprint: 'f4',
      createdAt: H - 3 * DAY,
    },
  ])
  await seed(e, 'settings', [
    { key: MINUTES_FROM, value: String(H - 30 * DAY), createdAt: H },
    { key: SECONDS_FROM, value: String(H - 30 * DAY), createdAt: H },
    { key: MONTHS_BEFORE, value: String(Date.UTC(2024, 2, 1)), createdAt: H },
    { key: 'unrelated', value: 'x', createdAt: H },
  ])
})

afterAll(async () => {
  await e?.close()
})

const SCOPES: AnalyticsScope[] = [
  { workspaceId: 'ws_1', test: false },
  { workspaceId: 'ws_1', test: true },
  { workspaceId: 'ws_1', test: false, linkId: 'lnk_a' },
  { workspaceId: 'ws_1', test: false, linkId: 'lnk_z' },
  { workspaceId: 'ws_1', test: false, domains: ['a.test'] },
  { workspaceId: 'ws_1', test: false, tags: ['spring', 'promo'] },
  { workspaceId: 'ws_1', test: false, domains: ['b.test', 'c.test'], tags: ['promo'] },
  { workspaceId: 'ws_1', test: true, tags: ['spring'] },
  { workspaceId: 'ws_2', test: false },
  { workspaceId: 'ws_none', test: false },
]
const RANGES: [Grain, number, number][] = [
  ['hour', H - 2 * DAY, H + HOUR],
  ['day', H - 40 * DAY, H + DAY],
  ['minute', H, H + HOUR],
  ['second', H + 600_000, H + 1_200_000],
  ['month', 0, H],
]

describe('analytics reads', () => {
  test('rollups, per-link sums and sketches: the same rows on both engines', async () => {
    let rows = 0
    for (const s of SCOPES) {
      for (const [grain, from, to] of RANGES) {
        for (const withDims of [false, true]) {
          const onLite = await lite.rollups(s, grain, from, to, withDims)
          const onPg = await pg.rollups(s, grain, from, to, withDims)
          expect(sorted(onPg)).toEqual(sorted(onLite))
          rows += onLite.length
        }
        expect(sorted(await pg.clicksPerLink(s, grain, from, to))).toEqual(sorted(await lite.clicksPerLink(s, grain, from, to)))
      }
      expect(await pg.countLinks(s)).toBe(await lite.countLinks(s))
    }
    expect(rows).toBeGreaterThan(1000)
    const ws = await pg.rollups(SCOPES[0]!, 'day', H - 40 * DAY, H + DAY, true)
    // What the service reads off them: numbers, bytes and text, not Bun's strings for bigint or Buffers.
    expect(typeof ws[0]!.bucket).toBe('number')
    expect(typeof ws[0]!.clicks).toBe('number')
    expect(ws.some((r) => r.visitors !== null && r.visitors.constructor === Uint8Array)).toBe(true)
    expect('linkId' in ws[0]!).toBe(false)
    const perLink = await pg.clicksPerLink(SCOPES[0]!, 'hour', H - 2 * DAY, H + HOUR)
    expect(perLink.find((r) => r.linkId === 'lnk_quiet')).toEqual({ linkId: 'lnk_quiet', clicks: null })
    expect(perLink.find((r) => r.linkId === 'lnk_a')!.clicks).toBeGreaterThan(0)
    expect(await pg.countLinks(SCOPES[0]!)).toBe(4)

    const ids = ['lnk_a', 'lnk_c', 'lnk_quiet', 'lnk_missing']
    for (const [grain, from, to] of RANGES) {
      const onLite = await lite.linkSketches(ids, grain, from, to)
      expect(sorted(await pg.linkSketches(ids, grain, from, to))).toEqual(sorted(onLite))
      expect(sorted(await hot.linkSketches(ids, grain, from, to))).toEqual(sorted(onLite))
    }
    expect(await pg.linkSketches([], 'day', 0, H)).toEqual([])
    expect(await hot.linkSketches([], 'day', 0, H)).toEqual([])
  })

  test('raw clicks, raw counts, the counts outside a part of an hour and packed visitors: the same on both engines', async () => {
    const parts: [number, number][] = [
      [H, H + HOUR],
      [H + 5 * 60_000, H + 50 * 60_000],
      [H, H + 20 * 60_000],
      [H + 40 * 60_000, H + HOUR],
      [H + 30 * 60_000, H + 30 * 60_000],
    ]
    let outsideNonEmpty = 0
    for (const s of SCOPES) {
      for (const [from, to] of parts) {
        const raw = await pg.rawClicks(s, from, to)
        expect(sorted(raw)).toEqual(sorted(await lite.rawClicks(s, from, to)))
        expect(sorted(await pg.rawClicksPerLink(s, from, to))).toEqual(sorted(await lite.rawClicksPerLink(s, from, to)))
        const outside = await pg.clicksPerLinkOutside(s, H, from, to)
        expect(sorted(outside)).toEqual(sorted(await lite.clicksPerLinkOutside(s, H, from, to)))
        // Within retention both sides of the hour tell the same: the raw count of the part.
        expect(sorted(outside)).toEqual(sorted(await pg.rawClicksPerLink(s, from, to)))
        if (outside.length) outsideNonEmpty++
      }
    }
    expect(outsideNonEmpty).toBeGreaterThan(10)
    const one = (await pg.rawClicks(SCOPES[0]!, H, H + HOUR)).find((c) => c.isBot === 1)!
    expect(typeof one.clickedAt).toBe('number')
    expect(one.isBot).toBe(1)

    const ids = ['lnk_c', 'lnk_a', 'lnk_quiet', 'lnk_t']
    for (const [from, to] of parts) {
      const packed = await pg.rawVisitors(ids, from, to)
      expect(packed).toEqual(await lite.rawVisitors(ids, from, to))
      expect(packed).toEqual(await hot.rawVisitors(ids, from, to))
    }
    const full = await pg.rawVisitors(ids, H, H + HOUR)
    expect(full.map((r) => r.linkId)).toEqual(ids)
    const people = allClicks.filter((c) => c.linkId === 'lnk_a' && !c.isBot && c.clickedAt >= H && c.clickedAt < H + HOUR).length
    expect(full[1]!.packed.length).toBe(11 * people)
    expect(full[2]!.packed).toBe('')
    expect(await pg.rawVisitors([], H, H + HOUR)).toEqual([])
  })

  test('conversions, marks and link details: the same on both engines', async () => {
    for (const s of SCOPES) {
      for (const [from, to] of [
        [0, H * 2],
        [H - 2 * DAY, H],
        [H, H + HOUR],
      ] as const) {
        expect(sorted(await pg.conversions(s, from, to))).toEqual(sorted(await lite.conversions(s, from, to)))
      }
    }
    expect(sorted(await pg.conversions(SCOPES[0]!, 0, H * 2))).toEqual(
      sorted([
        { linkId: 'lnk_a', createdAt: H - 2 * DAY, currency: 'EUR', value: 19.99 },
        { linkId: 'lnk_c', createdAt: H - DAY, currency: null, value: null },
      ]),
    )
    const marks = await pg.rollupMarks()
    expect(marks).toEqual(await lite.rollupMarks())
    expect(marks).toEqual({
      minutesFrom: H - 30 * DAY,
      secondsFrom: H - 30 * DAY,
      weeksBefore: undefined,
      monthsBefore: Date.UTC(2024, 2, 1),
      quartersBefore: undefined,
    })
    const ids = ['lnk_b', 'lnk_a', 'lnk_gone']
    expect(sorted(await pg.linkDetails(ids))).toEqual(sorted(await lite.linkDetails(ids)))
    expect((await pg.linkDetails(['lnk_a']))[0]).toEqual({
      id: 'lnk_a',
      slug: 'lnk_a',
      domain: 'a.test',
      destinationUrl: 'https://dest.test/lnk_a',
      title: 'Title A',
    })
    expect(await pg.linkDetails([])).toEqual([])
  })

  test('the public stats page: the same on both engines', async () => {
    // SQLite's redirect reads synchronously; the repo answers the same on either engine.
    const liteSync = createRedirectSyncReads(e.sqlite.db)
    const liteStats = createStatsRepo(sqliteEngine(e.sqlite.db))
    const pgStats = createStatsRepo(pgEngine(e.pg))
    for (const id of ['lnk_a', 'lnk_b', 'lnk_quiet', 'lnk_gone']) {
      for (const now of [H, H + 10 * DAY, H - 100 * DAY]) {
        const expected = liteSync.publicStatsSync(id, now)
        expect(await pgStats.publicStats(id, now)).toEqual(expected)
        expect(await liteStats.publicStats(id, now)).toEqual(expected)
      }
    }
    const page = (await pgStats.publicStats('lnk_a', H))!
    expect(page.totalClicks).toBe(120)
    expect(page.days.reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
    expect(page.countries.length).toBeGreaterThan(1)
    expect(await pgStats.publicStats('lnk_gone', H)).toBeNull()
  })

  test('on PostgreSQL the counts outside a part of an hour come from one snapshot while flushes commit', async () => {
    // A flush commits a click of the hour and its share of the hour's rollup together; the part asked for
    // excludes where the clicks land, so every answer is the same however the two interleave.
    const hourRow = { linkId: 'lnk_race', grain: 'hour' as const, bucket: H, clicks: 5, bots: 0, visitors: null, dims: '' }
    await e.pg.insert(pgTables.linkRollups).values(hourRow)
    const scope: AnalyticsScope = { workspaceId: 'ws_race', test: false }
    const from = H
    const to = H + 30 * 60_000
    let flushes = 0
    const flusher = (async () => {
      for (; flushes < 150; flushes++) {
        await e.sql.begin(async (tx) => {
          await tx`INSERT INTO clicks (id, link_id, workspace_id, clicked_at, visitor_hash, is_bot) VALUES (${`race_${flushes}`}, 'lnk_race', 'ws_race', ${H + 40 * 60_000}, 'v', false)`
          await tx`UPDATE link_rollups SET clicks = clicks + 1 WHERE link_id = 'lnk_race' AND grain = 'hour' AND bucket = ${H}`
        })
      }
    })()
    const answers: string[] = []
    const reader = async () => {
      for (let i = 0; i < 60; i++) answers.push(JSON.stringify(await pg.clicksPerLinkOutside(scope, H, from, to)))
    }
    await Promise.all([flusher, reader(), reader()])
    expect(flushes).toBe(150)
    expect(new Set(answers)).toEqual(new Set([JSON.stringify([{ linkId: 'lnk_race', clicks: 5 }])]))
    // Only PostgreSQL saw the race: the engines hold the same rows again for the tests that compare tables.
    await e.sql`DELETE FROM clicks WHERE link_id = 'lnk_race'`
    await e.sql`DELETE FROM link_rollups WHERE link_id = 'lnk_race'`
  })
})

describe('maintenance rows', () => {
  let mlite: MaintenanceRepo
  let mpg: MaintenanceRepo

  beforeAll(() => {
    mlite = createMaintenanceRepo(sqliteEngine(e.sqlite.db))
    mpg = createMaintenanceRepo(pgEngine(e.pg))
  })

  const tableRows = async (table: 'linkRollups' | 'workspaceRollups' | 'settings' | 'clicks') => {
    const onLite = e.sqlite.db
      .select()
      .from(liteTables[table] as any)
      .all()
    const onPg = await e.pg.select().from(pgTables[table] as any)
    return { onLite: sorted(onLite), onPg: sorted(onPg) }
  }

  test('marks, first day, links and rows read: the same on both engines', async () => {
    for (const key of [MINUTES_FROM, WEEKS_BEFORE, 'unrelated_missing']) expect(await mpg.mark(key)).toEqual(await mlite.mark(key))
    await mlite.setMark(WEEKS_BEFORE, H - 3 * DAY, H)
    await mpg.setMark(WEEKS_BEFORE, H - 3 * DAY, H)
    await mlite.setMark(WEEKS_BEFORE, H - 2 * DAY, H + 1)
    await mpg.setMark(WEEKS_BEFORE, H - 2 * DAY, H + 1)
    await mlite.setMarkOnce(MINUTES_FROM, 1, H + 2)
    await mpg.setMarkOnce(MINUTES_FROM, 1, H + 2)
    await mlite.setMarkOnce('fresh_mark', 7, H + 3)
    await mpg.setMarkOnce('fresh_mark', 7, H + 3)
    const marks = await tableRows('settings')
    expect(marks.onPg).toEqual(marks.onLite)
    expect(await mpg.mark(WEEKS_BEFORE)).toBe(H - 2 * DAY)
    expect(await mpg.mark(MINUTES_FROM)).toBe(H - 30 * DAY)
    expect(await mpg.mark('fresh_mark')).toBe(7)

    expect(await mpg.firstDay()).toBe((await mlite.firstDay())!)
    expect(await mpg.firstDay()).toBe(Math.min(...allClicks.map((c) => c.clickedAt - (c.clickedAt % DAY))))
    expect((await mpg.linkIds()).sort()).toEqual((await mlite.linkIds()).sort())
    for (const id of ['lnk_a', 'lnk_quiet']) {
      for (const at of [H - 41 * DAY, H - 10 * DAY, H + DAY]) expect(await mpg.hasClicksBefore(id, at)).toBe(await mlite.hasClicksBefore(id, at))
    }
    expect(await mpg.hasClicksBefore('lnk_a', H)).toBe(true)
    for (const id of ['lnk_a', 'lnk_b', 'lnk_quiet']) {
      const onPg = await mpg.linkRows(id, 'day', H - 40 * DAY, H)
      expect(sorted(onPg)).toEqual(sorted(await mlite.linkRows(id, 'day', H - 40 * DAY, H)))
    }
  })

  test('summed weeks, months and quarters: the same rows on both engines, written again in place', async () => {
    const spans: ['week' | 'month' | 'quarter', 'day' | 'month', number, number][] = [
      ['month', 'day', Date.UTC(2024, 1, 1), Date.UTC(2024, 2, 1)],
      ['week', 'day', Date.UTC(2024, 2, 4), Date.UTC(2024, 2, 11)],
      ['quarter', 'month', Date.UTC(2024, 0, 1), Date.UTC(2024, 3, 1)],
    ]
    for (let round = 0; round < 2; round++) {
      for (const [to, from, start, end] of spans) {
        const rows = []
        for (const linkId of await mlite.linkIds()) {
          const parts = await mlite.linkRows(linkId, from, start, end)
          if (!parts.length) continue
          const f = new Figures()
          f.addRows(parts)
          // The second round writes other figures over the first, as a re-run of a span would.
          rows.push({
            linkId,
            bucket: start,
            figures: { clicks: f.clicks + round, bots: f.bots, visitors: f.visitors.empty ? null : f.visitors.encode(), dims: f.dimsText() },
          })
        }
        expect(rows.length).toBeGreaterThan(0)
        await mlite.writeSums(to, rows)
        await mpg.writeSums(to, rows)
      }
    }
    await mpg.writeSums('month', [])
    const after = await tableRows('linkRollups')
    expect(after.onPg).toEqual(after.onLite)
    const [month] = await e.sql`SELECT count(*)::int AS n FROM link_rollups WHERE grain = 'month'`
    expect(month.n).toBeGreaterThan(0)
    // The same link twice in one call: the later figures stay, as SQLite's row-by-row upserts leave them.
    const twice = (clicks: number) => ({ linkId: 'lnk_b', bucket: 0, figures: { clicks, bots: 0, visitors: null, dims: '' } })
    await mlite.writeSums('quarter', [twice(1), twice(2)])
    await mpg.writeSums('quarter', [twice(1), twice(2)])
    const again = await tableRows('linkRollups')
    expect(again.onPg).toEqual(again.onLite)
    const [kept] = await e.sql`SELECT clicks FROM link_rollups WHERE link_id = 'lnk_b' AND grain = 'quarter' AND bucket = 0`
    expect(kept.clicks).toBe('2')
  })

  test('pruning minute and second rollups and raw clicks: the same counts and rows left on both engines', async () => {
    for (const [grain, at] of [
      ['second', H + 30 * 60_000],
      ['minute', H - 5 * DAY],
      ['minute', H + 20 * 60_000],
    ] as const) {
      const n = await mpg.deleteWorkspaceRowsBefore(grain, at)
      expect(n).toBe(await mlite.deleteWorkspaceRowsBefore(grain, at))
      expect(n).toBeGreaterThan(0)
    }
    const rollups = await tableRows('workspaceRollups')
    expect(rollups.onPg).toEqual(rollups.onLite)

    for (const [id, at, limit] of [
      ['lnk_a', H - 20 * DAY, 50],
      ['lnk_a', H - 20 * DAY, 50],
      ['lnk_b', H, 1_000],
      ['lnk_quiet', H, 10],
    ] as const) {
      const n = await mpg.deleteClicksBefore(id, at, limit)
      expect(n).toBe(await mlite.deleteClicksBefore(id, at, limit))
    }
    const left = await tableRows('clicks')
    expect(left.onPg).toEqual(left.onLite)
    expect(await mpg.hasClicksBefore('lnk_b', H)).toBe(false)
  })

  test('on PostgreSQL concurrent prunes of one link delete every old click once between them', async () => {
    const old = await e.sql`SELECT count(*)::int AS n FROM clicks WHERE link_id = 'lnk_c' AND clicked_at < ${H - 10 * DAY}`
    expect(old[0].n).toBeGreaterThan(100)
    const prune = async () => {
      let removed = 0
      for (let i = 0; i < 1_000; i++) {
        const n = await mpg.deleteClicksBefore('lnk_c', H - 10 * DAY, 7)
        removed += n
        if (n < 7) break
      }
      return removed
    }
    const counts = await Promise.all([prune(), prune(), prune(), prune()])
    expect(counts.reduce((a, b) => a + b, 0)).toBe(old[0].n)
    expect(await mpg.hasClicksBefore('lnk_c', H - 10 * DAY)).toBe(false)
    expect(await mpg.hasClicksBefore('lnk_c', H)).toBe(true)
  })
})

describe('the backfill', () => {
  let f: Engines
  const clicksBefore = makeClicks(230, 3, ['lnk_a', 'lnk_b', 'lnk_z'], H - 5 * DAY, H)

  beforeAll(async () => {
    f = await openEngines()
    await seed(f, 'workspaces', [
      { id: 'ws_1', slug: 'one', name: 'One', createdAt: H },
      { id: 'ws_2', slug: 'two', name: 'Two', createdAt: H },
    ])
    await seed(
      f,
      'links',
      LINKS.filter((l) => l.id !== 'lnk_t'),
    )
    await seed(f, 'clicks', clicksBefore)
  })

  afterAll(async () => {
    await f?.close()
  })

  /** What the writer would roll up: a workspace row per page, in the backfill's transaction. */
  const marker = (n: number) => ({ workspaceId: 'ws_1', grain: 'day' as const, bucket: n, clicks: 1, bots: 0, visitors: null, dims: '' })

  test('hands every click to the writer once, a page at a time, and marks it done: the same on both engines', async () => {
    const lite = sqliteEngine(f.sqlite.db)
    const pg = pgEngine(f.pg)
    const mlite = createMaintenanceRepo(lite)
    const mpg = createMaintenanceRepo(pg)
    expect(await mpg.backfillDone()).toBe(await mlite.backfillDone())
    expect(await mpg.backfillDone()).toBe(false)

    // A writer that fails rolls the whole backfill back, mark included.
    const failing = (engine: Engine) =>
      function* (tx: Builder) {
        yield* rows(tx.insert(engine.t.workspaceRollups).values(marker(1)))
        throw new Error('writer failed')
      }
    await expect(mpg.backfill(failing(pg), 100, H)).rejects.toThrow('writer failed')
    await expect(mlite.backfill(failing(lite), 100, H)).rejects.toThrow('writer failed')
    expect(await mpg.backfillDone()).toBe(false)
    expect(await mlite.backfillDone()).toBe(false)
    expect((await f.pg.select().from(pgTables.workspaceRollups)).length).toBe(0)
    expect(f.sqlite.db.select().from(liteTables.workspaceRollups).all().length).toBe(0)

    const pagesOf = (engine: Engine, pages: RollupClick[][]) =>
      function* (tx: Builder, page: RollupClick[]) {
        pages.push(page)
        yield* rows(tx.insert(engine.t.workspaceRollups).values(marker(pages.length)))
      }
    const litePages: RollupClick[][] = []
    const pgPages: RollupClick[][] = []
    const liteTotal = await mlite.backfill(pagesOf(lite, litePages), 100, H)
    const pgTotal = await mpg.backfill(pagesOf(pg, pgPages), 100, H)
    expect(pgTotal).toBe(liteTotal)
    expect(pgTotal).toBe(230)
    expect(pgPages.map((p) => p.length)).toEqual([100, 100, 30])
    expect(pgPages).toEqual(litePages)
    expect(await mpg.backfillDone()).toBe(true)
    expect(await mlite.backfillDone()).toBe(true)
    const marks = { onLite: sorted(f.sqlite.db.select().from(liteTables.settings).all()), onPg: sorted(await f.pg.select().from(pgTables.settings)) }
    expect(marks.onPg).toEqual(marks.onLite)
    expect((await f.pg.select().from(pgTables.workspaceRollups)).length).toBe(3)
    expect(f.sqlite.db.select().from(liteTables.workspaceRollups).all().length).toBe(3)
    // Once done, a backfill claims nothing and hands nothing over, on either engine.
    expect(await mlite.backfill(pagesOf(lite, litePages), 100, H)).toBe(0)
    expect(await mpg.backfill(pagesOf(pg, pgPages), 100, H)).toBe(0)
    expect([litePages.length, pgPages.length]).toEqual([3, 3])
  })

  test('on PostgreSQL backfills started at once on several connections roll the clicks up once', async () => {
    const pg = pgEngine(f.pg)
    const mpg = createMaintenanceRepo(pg)
    for (let round = 0; round < 5; round++) {
      await f.pg.delete(pgTables.settings)
      await f.pg.delete(pgTables.workspaceRollups)
      const handed: string[] = []
      const totals = await Promise.all(
        Array.from({ length: 4 }, () =>
          mpg.backfill(
            function* (tx, page) {
              for (const c of page) handed.push((c as RollupClick & { id: string }).id)
              // The writer's rows: what a second backfill in the same transaction would find and stop at.
              yield* rows(
                tx
                  .insert(pg.t.workspaceRollups)
                  .values(marker(handed.length + round * 1_000))
                  .onConflictDoNothing(),
              )
            },
            50,
            H,
          ),
        ),
      )
      expect(totals.sort((a, b) => b - a)).toEqual([230, 0, 0, 0])
      expect(handed.length).toBe(230)
      expect(new Set(handed).size).toBe(230)
      const [mark] = await f.sql`SELECT value FROM settings WHERE key = 'rollups_backfilled'`
      expect(mark.value).toBe('230')
    }
  })
})
