// The click flush of the one clicks repo (src/modules/clicks/repo.ts with analytics' rollup-writer.ts) on
// PostgreSQL, set by set, against the same repo on SQLite, whose flush is repo-sqlite.ts's prepared one: the
// same batches must leave the same clicks, visitors, admitted addresses, link counters, link.clicked events
// and every rollup row. Then what only PostgreSQL can get wrong: two nodes flushing the
// same links, visitors and buckets at once, and a flush failing halfway.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { asc, inArray } from 'drizzle-orm'
import * as lite from '../../src/db/schema'
import * as pgs from '../../src/db/pg/schema.generated'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import type { Enricher, Enrichment } from '../../src/modules/analytics/enrich'
import type { ClickBatch, ClickRecord, ClicksRepo } from '../../src/modules/clicks/port'
import { createClicksRepo } from '../../src/modules/clicks/repo'
import { createClickFlush } from '../../src/modules/clicks/repo-sqlite'
import { registerEvents } from '../../src/events/catalogue'
import { LINK_EVENTS } from '../../src/modules/links/model'
import { openEngines, type Engines } from '../setup/engines'

// No runtime is made here, which would register the event the flush writes: run alone, the file does it.
registerEvents(LINK_EVENTS)

const T0 = 1_800_000_000_000
// Two hours either side of a UTC midnight, so a batch touches two days of every grain.
const START = T0 - (T0 % 86_400_000) + 86_400_000 - 3_600_000
const KEY = Buffer.alloc(32, 7)
const BASE_URL = 'https://lnk.test'
type Repo = ClicksRepo

/** Deterministic enrichment that varies with the input, a UA parser's 'bot' verdict on a person's click included. */
const enricher: Enricher = {
  enrich(ip: string, ua: string | null): Enrichment {
    const n = [...ip].reduce((a, ch) => a + ch.charCodeAt(0), 0)
    return {
      country: n % 5 === 0 ? null : ['DE', 'FR', 'US', 'JP'][n % 4]!,
      city: n % 3 === 0 ? null : `City ${n % 7}`,
      device: ua?.includes('bot') ? 'bot' : (['desktop', 'mobile', 'tablet'] as const)[n % 3]!,
      browser: ua ? `B${ua.length % 4}` : null,
      os: ua ? `O${ua.length % 3}` : null,
    }
  },
}

/** Small, seeded: every run draws the same batches. */
function prng(seed: number) {
  let s = seed >>> 0
  return (n: number) => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0
    return s % n
  }
}

const AGENTS = ['Mozilla/5.0 a', 'Mozilla/5.0 "quoted", {braced} \\ back\\slash', 'Ünïcode ☃ agent', 'crawler bot/1.0', null]

interface BatchOptions {
  seed: number
  links: string[]
  workspaceOf: (linkId: string) => string
  n: number
  /** Ids of clicks: distinct per batch. */
  prefix: string
  announceAll?: boolean
  /** Added to every click's time: a round of its own buckets. */
  shift?: number
}

function batchOf(o: BatchOptions): ClickBatch {
  const r = prng(o.seed)
  const clicks: ClickRecord[] = []
  for (let i = 0; i < o.n; i++) {
    const linkId = o.links[r(o.links.length)]!
    const ip = `198.51.100.${r(12)}`
    const referrer = r(3) === 0 ? null : `https://ref${r(3)}.example/path?q=${i}`
    clicks.push({
      id: `${o.prefix}_${String(i).padStart(6, '0')}`,
      linkId,
      workspaceId: o.workspaceOf(linkId),
      clickedAt: START + (o.shift ?? 0) + r(4) * 1_800_000 + r(3) * 60_000 + r(2) * 1_000 + r(1000),
      ip,
      userAgent: AGENTS[r(AGENTS.length)]!,
      referrer,
      referrerHost: referrer ? new URL(referrer).host : null,
      // Routed on some clicks: both engines store the rule and variant and name them in link.clicked alike.
      ruleId: r(3) === 0 ? `rr_${r(2)}` : null,
      variantId: r(3) === 0 ? `var_${r(2)}` : null,
      destinationUrl: `https://dest${r(2)}.example/`,
      newAddress: r(4) === 0 ? `addr_${ip}` : null,
      isBot: r(8) === 0,
      announce: o.announceAll || r(2) === 0,
    })
  }
  const counts = o.links.slice(0, 3).map((linkId, i) => ({ linkId, workspaceId: o.workspaceOf(linkId), hour: START, clicks: i + 2, bots: i }))
  return { clicks, counts }
}

let engines: Engines
let sqliteRepo: Repo
let pgRepo: Repo
/** SQLite's redirect path reads the admitted addresses without awaiting: the same list. */
let sqliteHot: ReturnType<typeof createClickFlush>

function linkRow(id: string, workspaceId: string) {
  return {
    id,
    workspaceId,
    domain: 'lnk.test',
    slug: id,
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
    searchText: id,
    createdAt: T0,
    updatedAt: T0,
  }
}

async function seed(workspaces: string[], links: [string, string][]) {
  const ws = workspaces.map((id) => ({ id, slug: id, name: id, createdAt: T0 }))
  const ls = links.map(([id, w]) => linkRow(id, w))
  engines.sqlite.db.insert(lite.workspaces).values(ws).run()
  engines.sqlite.db.insert(lite.links).values(ls).run()
  await engines.pg.insert(pgs.workspaces).values(ws)
  await engines.pg.insert(pgs.links).values(ls)
}

beforeAll(async () => {
  engines = await openEngines()
  sqliteRepo = createClicksRepo(sqliteEngine(engines.sqlite.db), KEY, enricher, BASE_URL)
  pgRepo = createClicksRepo(pgEngine(engines.pg), KEY, enricher, BASE_URL)
  sqliteHot = createClickFlush(engines.sqlite.db, KEY, enricher, BASE_URL)
})

afterAll(async () => {
  await engines?.close()
})

/** Sorted by UTF-8 bytes, as SQLite's ORDER BY on text. */
function byBytes<T>(rows: T[], key: (r: T) => string): T[] {
  return rows.sort((a, b) => Buffer.compare(Buffer.from(key(a)), Buffer.from(key(b))))
}

const hex = (v: Uint8Array | null) => (v ? Buffer.from(v).toString('hex') : null)

/**
 * A sketch by its meaning: a sparse one lists its 4-byte entries in slot order, which depends on the order they
 * were added in; two flushes merged in either order hold the same entries.
 */
function sketchSet(v: Uint8Array | null): string | null {
  if (!v || v[0] === 1) return hex(v)
  const words: string[] = []
  for (let o = 1; o < v.length; o += 4) words.push(Buffer.from(v.subarray(o, o + 4)).toString('hex'))
  return words.sort().join('')
}

type State = Awaited<ReturnType<typeof state>>
type StoredRollup = State['linkRollups'][number]

const rollupBySketchSet = (r: StoredRollup) => ({ ...r, visitors: sketchSet(r.visitors ? Buffer.from(r.visitors, 'hex') : null) })
const bySketchSet = (s: State) => ({ ...s, linkRollups: s.linkRollups.map(rollupBySketchSet), workspaceRollups: s.workspaceRollups.map(rollupBySketchSet) })

/** The dimensions text by its meaning: each line's value/count pairs in any order. */
function dimsSet(text: string): string[][] {
  return text.split('\n').map((line) => {
    const parts = line ? line.split('\t') : []
    const pairs: string[] = []
    for (let i = 0; i + 1 < parts.length; i += 2) pairs.push(`${parts[i]}=${parts[i + 1]}`)
    return pairs.sort()
  })
}

type Rollup = { id: string; grain: string; bucket: number; clicks: number; bots: number; visitors: Uint8Array | null; dims: string }

/** Everything a flush writes, for the links given, read from one engine and laid out the same for both. */
async function state(engine: 'sqlite' | 'postgres', linkIds: string[], workspaceIds: string[]) {
  let raw
  if (engine === 'sqlite') {
    const db = engines.sqlite.db
    raw = {
      clicks: db.select().from(lite.clicks).where(inArray(lite.clicks.linkId, linkIds)).all(),
      visitors: db.select().from(lite.linkVisitors).where(inArray(lite.linkVisitors.linkId, linkIds)).all(),
      addresses: db.select().from(lite.linkAddresses).where(inArray(lite.linkAddresses.linkId, linkIds)).all(),
      links: db
        .select({ id: lite.links.id, total: lite.links.totalClicks, unique: lite.links.uniqueClicks })
        .from(lite.links)
        .where(inArray(lite.links.id, linkIds))
        .all(),
      linkRollups: db
        .select()
        .from(lite.linkRollups)
        .where(inArray(lite.linkRollups.linkId, linkIds))
        .all()
        .map(({ linkId, ...r }) => ({ id: linkId, ...r }) as Rollup),
      workspaceRollups: db
        .select()
        .from(lite.workspaceRollups)
        .where(inArray(lite.workspaceRollups.workspaceId, workspaceIds))
        .all()
        .map(({ workspaceId, ...r }) => ({ id: workspaceId, ...r }) as Rollup),
      events: db.select().from(lite.outbox).where(inArray(lite.outbox.workspaceId, workspaceIds)).orderBy(asc(lite.outbox.seq)).all(),
    }
  } else {
    const pg = engines.pg
    raw = {
      clicks: await pg.select().from(pgs.clicks).where(inArray(pgs.clicks.linkId, linkIds)),
      visitors: await pg.select().from(pgs.linkVisitors).where(inArray(pgs.linkVisitors.linkId, linkIds)),
      addresses: await pg.select().from(pgs.linkAddresses).where(inArray(pgs.linkAddresses.linkId, linkIds)),
      links: await pg
        .select({ id: pgs.links.id, total: pgs.links.totalClicks, unique: pgs.links.uniqueClicks })
        .from(pgs.links)
        .where(inArray(pgs.links.id, linkIds)),
      linkRollups: (await pg.select().from(pgs.linkRollups).where(inArray(pgs.linkRollups.linkId, linkIds))).map(
        ({ linkId, ...r }) => ({ id: linkId, ...r }) as Rollup,
      ),
      workspaceRollups: (await pg.select().from(pgs.workspaceRollups).where(inArray(pgs.workspaceRollups.workspaceId, workspaceIds))).map(
        ({ workspaceId, ...r }) => ({ id: workspaceId, ...r }) as Rollup,
      ),
      events: await pg.select().from(pgs.outbox).where(inArray(pgs.outbox.workspaceId, workspaceIds)).orderBy(asc(pgs.outbox.seq)),
    }
  }
  const rollups = (rows: Rollup[]) =>
    byBytes(rows, (r) => `${r.id}\n${r.grain}\n${String(r.bucket).padStart(16, '0')}`).map((r) => ({ ...r, visitors: hex(r.visitors) }))
  return {
    clicks: byBytes(raw.clicks, (r) => r.id),
    visitors: byBytes(raw.visitors, (r) => `${r.linkId}\n${r.visitorHash}`),
    addresses: byBytes(raw.addresses, (r) => `${r.linkId}\n${r.ipHash}`),
    links: byBytes(raw.links, (r) => r.id),
    linkRollups: rollups(raw.linkRollups),
    workspaceRollups: rollups(raw.workspaceRollups),
    // Event ids are random; their order, content and time are what must agree.
    events: raw.events.map(({ seq: _, id: __, ...e }) => e),
  }
}

describe('one flush', () => {
  const links = Array.from({ length: 12 }, (_, i) => `lnk_s${String(i).padStart(2, '0')}`)
  const workspaceOf = (id: string) => (Number(id.slice(-2)) % 3 === 0 ? 'ws_s2' : 'ws_s1')

  beforeAll(() =>
    seed(
      ['ws_s1', 'ws_s2'],
      links.map((id) => [id, workspaceOf(id)]),
    ),
  )

  /**
   * `exact`: sketches byte for byte. SQLite's writer keeps the buckets it wrote decoded, and a sparse sketch
   * lists its entries in the slot order of how it was built, so after a first flush only their entries agree.
   */
  const check = async (exact: boolean) => {
    const [a, b] = [await state('sqlite', links, ['ws_s1', 'ws_s2']), await state('postgres', links, ['ws_s1', 'ws_s2'])]
    expect(exact ? b : bySketchSet(b)).toEqual(exact ? a : bySketchSet(a))
    for (const id of links) {
      expect(await pgRepo.admittedAddresses(id)).toEqual(await sqliteRepo.admittedAddresses(id))
      expect(sqliteHot.admittedAddressesSync(id)).toEqual(await sqliteRepo.admittedAddresses(id))
    }
    return a
  }

  test('writes the same clicks, visitors, addresses, counters, events and rollups on both engines', async () => {
    // A link deleted since its clicks were served: its clicks and counts are dropped on both.
    const batch = batchOf({ seed: 1, links: [...links, 'lnk_gone'], workspaceOf, n: 900, prefix: 'clk_one' })
    await sqliteRepo.writeBatch(batch, T0)
    await pgRepo.writeBatch(batch, T0)
    const a = await check(true)
    // The script must exercise what it compares.
    expect(a.clicks.length).toBeGreaterThan(700)
    expect(a.clicks.some((c) => c.isBot)).toBe(true)
    expect(a.addresses.length).toBeGreaterThan(10)
    expect(a.events.length).toBeGreaterThan(300)
    expect(a.events.some((e) => (e.data as { click: { unique: boolean } }).click.unique)).toBe(true)
    expect(a.events.some((e) => !(e.data as { click: { unique: boolean } }).click.unique)).toBe(true)
    // The route each click was sent by is stored, and named with the chosen destination in its event.
    expect(a.clicks.some((c) => c.ruleId !== null) && a.clicks.some((c) => c.ruleId === null && c.variantId !== null)).toBe(true)
    type Routed = { click: { ruleId: string | null; variantId: string | null; destinationUrl: string } }
    expect(a.events.some((e) => (e.data as Routed).click.ruleId !== null && (e.data as Routed).click.destinationUrl.startsWith('https://dest'))).toBe(true)
    expect(new Set(a.workspaceRollups.map((r) => r.grain))).toEqual(new Set(['second', 'minute', 'hour', 'day']))
    expect(a.links.reduce((n, l) => n + l.total, 0)).toBe(a.clicks.filter((c) => !c.isBot).length + 2 + 3 + 4)
  })

  test('a second flush merges into the stored buckets and visitors the same way', async () => {
    const batch = batchOf({ seed: 2, links, workspaceOf, n: 700, prefix: 'clk_two' })
    await sqliteRepo.writeBatch(batch, T0 + 1)
    await pgRepo.writeBatch(batch, T0 + 1)
    await check(false)
  })

  test('an empty flush writes nothing', async () => {
    const before = await state('postgres', links, ['ws_s1', 'ws_s2'])
    await pgRepo.writeBatch({ clicks: [], counts: [] }, T0)
    expect(await state('postgres', links, ['ws_s1', 'ws_s2'])).toEqual(before)
  })
})

describe('flushes of several nodes at once', () => {
  const links = Array.from({ length: 8 }, (_, i) => `lnk_c${i}`)
  const workspaceOf = (id: string) => (id === 'lnk_c7' ? 'ws_c2' : 'ws_c1')
  const all = ['ws_c1', 'ws_c2']

  beforeAll(() =>
    seed(
      all,
      links.map((id) => [id, workspaceOf(id)]),
    ),
  )

  /** Rows by meaning: which flush first saw a visitor (and so which click was its unique one) is the race's to decide. */
  const meaning = (s: State) => ({
    clicks: s.clicks,
    visitors: s.visitors.map((v) => `${v.linkId}\n${v.visitorHash}`),
    addresses: s.addresses.map((v) => `${v.linkId}\n${v.ipHash}`),
    links: s.links,
    rollups: [...s.linkRollups, ...s.workspaceRollups].map((r) => ({ ...rollupBySketchSet(r), dims: dimsSet(r.dims) })),
    events: s.events.length,
    uniqueEvents: s.events.filter((e) => (e.data as { click: { unique: boolean } }).click.unique).length,
  })

  test('two nodes flushing the same links, visitors and buckets together store exactly one flush of both', async () => {
    // Each round races flushes on separate connections: two over the same links (same visitors), or three
    // over disjoint links of one workspace (only the workspace's buckets shared). Every other round moves to
    // hours no flush has touched, so its flushes race to create the same buckets, and the next merges into them.
    const rounds: ClickBatch[][] = []
    const HOURS = 3_600_000
    for (let i = 0; i < 8; i++) {
      const shift = (i >> 1) * 6 * HOURS
      const batch = (seed: number, ls: string[], n: number, prefix: string, at: number) =>
        batchOf({ seed, links: ls, workspaceOf, n, prefix, announceAll: true, shift: at })
      rounds.push([batch(100 + i, links, 400, `clk_a${i}`, shift), batch(200 + i, links, 400, `clk_b${i}`, shift)])
      const disjoint = [links.slice(0, 2), links.slice(2, 4), links.slice(4, 6)]
      rounds.push(disjoint.map((ls, k) => batch(300 + 10 * i + k, ls, 300, `clk_d${i}_${k}`, shift + 3 * HOURS)))
    }
    const nodes = [1, 2, 3].map(() => createClicksRepo(pgEngine(engines.pg), KEY, enricher, BASE_URL))
    for (const round of rounds) await Promise.all(round.map((b, i) => nodes[i]!.writeBatch(b, T0)))
    const one: ClickBatch = { clicks: rounds.flat().flatMap((b) => b.clicks), counts: rounds.flat().flatMap((b) => b.counts) }
    await sqliteRepo.writeBatch(one, T0)
    const [expected, got] = [meaning(await state('sqlite', links, all)), meaning(await state('postgres', links, all))]
    expect(got).toEqual(expected)
    expect(got.uniqueEvents).toBe(got.links.reduce((n, l) => n + l.unique, 0))
    expect(got.visitors.length).toBe(got.uniqueEvents)
  })

  test('a flush failing halfway leaves nothing written', async () => {
    const ls = ['lnk_c0', 'lnk_c1']
    const batch = batchOf({ seed: 9, links: ls, workspaceOf, n: 200, prefix: 'clk_fail', announceAll: true })
    // Clicks, visitors, addresses, counters and the links' rollups are written before the workspace's
    // rollups, one of whose rows then names a workspace that does not exist.
    batch.clicks[150] = { ...batch.clicks[150]!, workspaceId: 'ws_missing' }
    for (const [engine, repo] of [
      ['sqlite', sqliteRepo],
      ['postgres', pgRepo],
    ] as const) {
      const before = await state(engine, links, [...all, 'ws_missing'])
      await expect(repo.writeBatch(batch, T0)).rejects.toThrow()
      expect(await state(engine, links, [...all, 'ws_missing'])).toEqual(before)
    }
  })

  test('a link deleted while a flush waits for it loses its clicks; the rest of the flush commits', async () => {
    await seed(
      ['ws_del'],
      [
        ['lnk_keep', 'ws_del'],
        ['lnk_del', 'ws_del'],
      ],
    )
    const batch = batchOf({ seed: 11, links: ['lnk_keep', 'lnk_del'], workspaceOf: () => 'ws_del', n: 100, prefix: 'clk_del', announceAll: true })
    let deleted!: () => void
    let commit!: () => void
    const didDelete = new Promise<void>((resolve) => (deleted = resolve))
    const gate = new Promise<void>((resolve) => (commit = resolve))
    const deleting = engines.sql.begin(async (tx) => {
      await tx`DELETE FROM links WHERE id = 'lnk_del'`
      deleted()
      await gate
    })
    await didDelete
    const flush = pgRepo.writeBatch(batch, T0)
    // The flush is waiting for the deleting transaction: commit it only then (bounded; it proves nothing if not).
    for (let i = 0; i < 500; i++) {
      const [row] = await engines.sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
      if (row.n > 0) break
      await Bun.sleep(10)
    }
    commit()
    await deleting
    await flush
    const kept = batch.clicks.filter((c) => c.linkId === 'lnk_keep')
    const stored = await engines.sql`SELECT link_id, count(*)::int AS n FROM clicks WHERE id LIKE 'clk_del_%' GROUP BY link_id`
    expect(stored.map((r: { link_id: string; n: number }) => [r.link_id, r.n])).toEqual([['lnk_keep', kept.length]])
    const [link] = await engines.sql`SELECT total_clicks::int AS total FROM links WHERE id = 'lnk_keep'`
    expect(link.total).toBe(kept.filter((c) => !c.isBot).length + 2)
  })
})
