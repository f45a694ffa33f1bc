// The pieces analytics answers with: the visitor sketch (exactness while small, error bound when large,
// merging), the reading plan of a range, and calendar arithmetic in IANA zones around DST changes.
import { describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { Figures } from '../../src/modules/analytics/figures'
import { HLL_STANDARD_ERROR, Sketch } from '../../src/modules/analytics/hll'
import { planRange } from '../../src/modules/analytics/plan'
import { bucketStart, instantOf, localIso, nextBucket, offsetAt, parseInstant } from '../../src/modules/analytics/time'

const visitor = (i: number) => createHmac('sha256', 'k').update(`v|${i}`).digest('base64url').slice(0, 32)
const H = 3_600_000
const D = 24 * H

describe('visitor sketch', () => {
  test('counts exactly while sparse, whatever the order and repetition', () => {
    const s = new Sketch()
    expect(s.estimate()).toBe(0)
    for (let round = 0; round < 3; round++) for (let i = 0; i < 700; i++) s.addVisitor(visitor(i))
    expect(s.estimate()).toBe(700)
  })

  test('encode → merge round-trips, and merging sketches counts the union', () => {
    const a = new Sketch()
    const b = new Sketch()
    for (let i = 0; i < 300; i++) a.addVisitor(visitor(i))
    for (let i = 200; i < 600; i++) b.addVisitor(visitor(i))
    const u = new Sketch()
    u.merge(a.encode())
    u.merge(b.encode())
    expect(u.estimate()).toBe(600)
  })

  test(`large counts stay within 3 standard errors (${(HLL_STANDARD_ERROR * 100).toFixed(1)} %)`, () => {
    for (const n of [5_000, 50_000, 200_000]) {
      const s = new Sketch()
      for (let i = 0; i < n; i++) s.addVisitor(visitor(i))
      expect(Math.abs(s.estimate() - n) / n).toBeLessThan(3 * HLL_STANDARD_ERROR)
    }
  })

  test('merging dense and sparse sketches equals one sketch of everything', () => {
    const dense = new Sketch()
    for (let i = 0; i < 20_000; i++) dense.addVisitor(visitor(i))
    const sparse = new Sketch()
    for (let i = 19_900; i < 20_400; i++) sparse.addVisitor(visitor(i))
    const all = new Sketch()
    for (let i = 0; i < 20_400; i++) all.addVisitor(visitor(i))
    const merged = new Sketch()
    merged.merge(sparse.encode())
    merged.merge(dense.encode())
    expect(merged.estimate()).toBe(all.estimate())
    expect(dense.encode().length).toBe(4097)
  })
})

describe('visitor sketch merges', () => {
  test('two dense sketches merge into the sketch of their union, register by register', () => {
    const a = new Sketch()
    const b = new Sketch()
    const all = new Sketch()
    for (let i = 0; i < 9_000; i++) (i % 3 ? a : b).addVisitor(visitor(i))
    for (let i = 0; i < 9_000; i++) all.addVisitor(visitor(i))
    const merged = new Sketch()
    merged.merge(a.encode())
    merged.merge(b.encode())
    expect(merged.encode()).toEqual(all.encode())
  })
})

describe('visitor sketch form', () => {
  // The sparse form holds up to 1,024 distinct entries: the union decides the form, never the order.
  const entriesOf = (blob: Uint8Array) =>
    blob[0] === 1
      ? null
      : Array.from({ length: (blob.length - 1) / 4 }, (_, k) => Buffer.from(blob.subarray(1 + 4 * k, 5 + 4 * k)).readUInt32BE()).sort((a, b) => a - b)
  const sketchOf = (from: number, to: number) => {
    const s = new Sketch()
    for (let i = from; i < to; i++) s.addVisitor(visitor(i))
    return s.encode()
  }

  test('merging many small sketches in any order gives one form and one count', () => {
    for (const total of [1_000, 1_024, 1_025, 1_100]) {
      // Overlapping pieces whose union is exactly `total` visitors.
      const pieces = Array.from({ length: 12 }, (_, k) => sketchOf(Math.floor((k * total) / 12), Math.min(total, Math.floor(((k + 2) * total) / 12))))
      const forward = new Sketch()
      for (const p of pieces) forward.merge(p)
      const backward = new Sketch()
      for (const p of [...pieces].reverse()) backward.merge(p)
      const one = new Sketch()
      for (let i = 0; i < total; i++) one.addVisitor(visitor(i))
      expect(forward.encode()[0]).toBe(total > 1_024 ? 1 : 0)
      for (const s of [forward, backward]) {
        expect(s.estimate()).toBe(one.estimate())
        const [a, b] = [entriesOf(s.encode()), entriesOf(one.encode())]
        if (a) expect(a).toEqual(b!)
        else expect(s.encode()).toEqual(one.encode())
      }
      if (total <= 1_024) expect(forward.estimate()).toBe(total)
    }
  })

  test('rows merged with their table sized up front, then raw visitors, keep the same form and count', () => {
    // Figures.addRows reserves room for every entry to come (duplicates included, so more than the union):
    // the form must still follow the union alone.
    for (const total of [1_000, 1_024, 1_025, 1_100]) {
      const rows = Array.from({ length: 6 }, (_, k) => ({
        clicks: 0,
        bots: 0,
        visitors: sketchOf(Math.floor((k * total) / 8), Math.floor(((k + 3) * total) / 8)),
      }))
      const raw = Array.from({ length: total }, (_, i) => visitor((i * 5) % total).slice(0, 11)).slice(Math.floor(total / 2))
      const f = new Figures(false)
      f.addRows(rows, raw.length)
      f.visitors.addPackedVisitors(raw.join(''))
      const one = new Sketch()
      for (let i = 0; i < total; i++) one.addVisitor(visitor(i))
      expect(f.visitors.encode()[0]).toBe(total > 1_024 ? 1 : 0)
      expect(f.visitors.estimate()).toBe(one.estimate())
      const [a, b] = [entriesOf(f.visitors.encode()), entriesOf(one.encode())]
      if (a) expect(a).toEqual(b!)
      else expect(f.visitors.encode()).toEqual(one.encode())
    }
  })

  test('packed visitors (11-character prefixes) count as the visitors themselves', () => {
    const byOne = new Sketch()
    const packed = new Sketch()
    const ids = Array.from({ length: 3_000 }, (_, i) => (i * 7) % 1_500)
    for (const i of ids.slice(0, 800)) byOne.addVisitor(visitor(i))
    packed.addPackedVisitors(
      ids
        .slice(0, 800)
        .map((i) => visitor(i).slice(0, 11))
        .join(''),
    )
    expect(entriesOf(packed.encode())).toEqual(entriesOf(byOne.encode())!)
    for (const i of ids.slice(800)) byOne.addVisitor(visitor(i))
    packed.addPackedVisitors(
      ids
        .slice(800)
        .map((i) => visitor(i).slice(0, 11))
        .join(''),
    )
    expect(packed.encode()).toEqual(byOne.encode())
  })
})

describe('reading plan of a range', () => {
  const t0 = Date.UTC(2026, 2, 1)
  test('whole days in the middle, hours at the sides, raw clicks for partial hours', () => {
    const from = t0 + 5 * H + 30 * 60_000
    const to = t0 + 3 * D + 2 * H + 15 * 60_000
    expect(planRange(from, to)).toEqual([
      { source: 'raw', from, to: t0 + 6 * H },
      { source: 'hour', from: t0 + 6 * H, to: t0 + D },
      { source: 'day', from: t0 + D, to: t0 + 3 * D },
      { source: 'hour', from: t0 + 3 * D, to: t0 + 3 * D + 2 * H },
      { source: 'raw', from: t0 + 3 * D + 2 * H, to },
    ])
  })
  test('aligned ranges read no raw clicks; short ones only raw', () => {
    expect(planRange(t0, t0 + 2 * D)).toEqual([{ source: 'day', from: t0, to: t0 + 2 * D }])
    expect(planRange(t0 + 5 * H, t0 + 29 * H)).toEqual([{ source: 'hour', from: t0 + 5 * H, to: t0 + 29 * H }])
    expect(planRange(t0 + 60_000, t0 + 120_000)).toEqual([{ source: 'raw', from: t0 + 60_000, to: t0 + 120_000 }])
    expect(planRange(t0, t0)).toEqual([])
  })
})

describe('reading plan with the optional grains', () => {
  const t0 = Date.UTC(2026, 2, 1)
  const M = 60_000
  test("a workspace's minutes cover the whole minutes of a partial hour, from when they exist", () => {
    const from = t0 + 5 * H + 30 * M + 1_500
    const to = t0 + 9 * H + 12 * M
    expect(planRange(from, to, Infinity, { minutesFrom: t0 })).toEqual([
      { source: 'raw', from, to: t0 + 5 * H + 31 * M },
      { source: 'minute', from: t0 + 5 * H + 31 * M, to: t0 + 6 * H },
      { source: 'hour', from: t0 + 6 * H, to: t0 + 9 * H },
      { source: 'minute', from: t0 + 9 * H, to: t0 + 9 * H + 12 * M },
    ])
    // Before the minutes exist, raw clicks as before.
    expect(planRange(from, to, Infinity, { minutesFrom: t0 + D })).toEqual(planRange(from, to))
  })
  test('summed months replace their days, only up to the mark', () => {
    const from = Date.UTC(2025, 10, 20)
    const to = Date.UTC(2026, 2, 10)
    expect(planRange(from, to, Infinity, { monthsBefore: Date.UTC(2026, 1, 1) })).toEqual([
      { source: 'day', from, to: Date.UTC(2025, 11, 1) },
      { source: 'month', from: Date.UTC(2025, 11, 1), to: Date.UTC(2026, 1, 1) },
      { source: 'day', from: Date.UTC(2026, 1, 1), to },
    ])
    expect(planRange(from, to, Infinity, { monthsBefore: Date.UTC(2025, 11, 1) })).toEqual([{ source: 'day', from, to }])
  })
  test('summed quarters replace their months, only up to their own mark', () => {
    const from = Date.UTC(2025, 10, 20)
    const to = Date.UTC(2026, 10, 10)
    const monthsBefore = Date.UTC(2026, 10, 1)
    expect(planRange(from, to, Infinity, { monthsBefore, quartersBefore: Date.UTC(2026, 9, 1) })).toEqual([
      { source: 'day', from, to: Date.UTC(2025, 11, 1) },
      { source: 'month', from: Date.UTC(2025, 11, 1), to: Date.UTC(2026, 0, 1) },
      { source: 'quarter', from: Date.UTC(2026, 0, 1), to: Date.UTC(2026, 9, 1) },
      { source: 'month', from: Date.UTC(2026, 9, 1), to: monthsBefore },
      { source: 'day', from: monthsBefore, to },
    ])
    // A quarter counts only once all its months are summed and it is marked.
    expect(planRange(from, to, Infinity, { monthsBefore, quartersBefore: Date.UTC(2026, 0, 1) })).toEqual(planRange(from, to, Infinity, { monthsBefore }))
    // Months that make no whole quarter stay months.
    expect(planRange(Date.UTC(2026, 1, 1), Date.UTC(2026, 5, 1), Infinity, { monthsBefore, quartersBefore: monthsBefore })).toEqual([
      { source: 'month', from: Date.UTC(2026, 1, 1), to: Date.UTC(2026, 5, 1) },
    ])
  })
  test('summed weeks (from Monday) replace the days outside whole months, only up to their mark', () => {
    // Thursday 20 November 2025 to Thursday 12 November 2026 (mid-day ends: hours around them).
    const from = Date.UTC(2025, 10, 20)
    const to = Date.UTC(2026, 10, 12)
    const options = { monthsBefore: Date.UTC(2026, 10, 1), weeksBefore: Date.UTC(2026, 10, 9) }
    expect(planRange(from, to, Infinity, options)).toEqual([
      { source: 'day', from, to: Date.UTC(2025, 10, 24) },
      { source: 'week', from: Date.UTC(2025, 10, 24), to: Date.UTC(2025, 11, 1) },
      { source: 'month', from: Date.UTC(2025, 11, 1), to: Date.UTC(2026, 10, 1) },
      { source: 'day', from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 10, 2) },
      { source: 'week', from: Date.UTC(2026, 10, 2), to: Date.UTC(2026, 10, 9) },
      { source: 'day', from: Date.UTC(2026, 10, 9), to },
    ])
    expect(planRange(from, to, Infinity, { ...options, weeksBefore: Date.UTC(2026, 10, 8) }).filter((s) => s.source === 'week')).toHaveLength(1)
  })
  test("a workspace's seconds cover the whole seconds of a partial minute, from when they exist", () => {
    const from = t0 + 5 * H + 30 * M + 1_500
    const to = t0 + 5 * H + 40 * M + 12_250
    const options = { minutesFrom: t0, secondsFrom: t0 }
    expect(planRange(from, to, Infinity, options)).toEqual([
      { source: 'raw', from, to: t0 + 5 * H + 30 * M + 2_000 },
      { source: 'second', from: t0 + 5 * H + 30 * M + 2_000, to: t0 + 5 * H + 31 * M },
      { source: 'minute', from: t0 + 5 * H + 31 * M, to: t0 + 5 * H + 40 * M },
      { source: 'second', from: t0 + 5 * H + 40 * M, to: t0 + 5 * H + 40 * M + 12_000 },
      { source: 'raw', from: t0 + 5 * H + 40 * M + 12_000, to },
    ])
    // Less than a minute: seconds only; before the seconds exist, minutes and raw clicks as before.
    expect(planRange(from, from + 3_000, Infinity, options).map((s) => s.source)).toEqual(['raw', 'second', 'raw'])
    expect(planRange(from, to, Infinity, { minutesFrom: t0, secondsFrom: t0 + D })).toEqual(planRange(from, to, Infinity, { minutesFrom: t0 }))
  })
  test('minutes and seconds starting inside a partial hour cover it from their mark on; raw clicks only before it', () => {
    // The hour a version writing them first ran: the mark is a minute boundary inside it, and a burst after
    // the mark must not be read click by click because the hour began before it.
    const hour = t0 + 5 * H
    const mark = hour + 42 * M
    const to = hour + 42 * M + 21_192
    expect(planRange(hour, to, Infinity, { minutesFrom: mark, secondsFrom: mark })).toEqual([
      { source: 'raw', from: hour, to: mark },
      { source: 'second', from: mark, to: hour + 42 * M + 21_000 },
      { source: 'raw', from: hour + 42 * M + 21_000, to },
    ])
    expect(planRange(hour + 10 * M, hour + 50 * M + 500, Infinity, { minutesFrom: mark, secondsFrom: mark })).toEqual([
      { source: 'raw', from: hour + 10 * M, to: mark },
      { source: 'minute', from: mark, to: hour + 50 * M },
      { source: 'raw', from: hour + 50 * M, to: hour + 50 * M + 500 },
    ])
    // Seconds kept a day: their mark need not be a second boundary.
    const secondsFrom = hour + 42 * M + 3_250
    expect(planRange(hour + 42 * M, hour + 42 * M + 9_000, Infinity, { minutesFrom: t0, secondsFrom })).toEqual([
      { source: 'raw', from: hour + 42 * M, to: hour + 42 * M + 4_000 },
      { source: 'second', from: hour + 42 * M + 4_000, to: hour + 42 * M + 9_000 },
    ])
  })
})

describe('dimensions as stored', () => {
  test('the compact form round-trips, and rows in the JSON form of earlier versions still read', () => {
    const f = new Figures()
    f.addClick({ visitor: visitor(1), isBot: false, country: 'DE', referrer: null, browser: 'Chrome', os: 'Windows', device: 'desktop' })
    f.addClick({ visitor: visitor(2), isBot: false, country: null, referrer: 'news.example.org', browser: 'Microsoft Edge', os: 'Windows', device: 'desktop' })
    f.addClick({ visitor: visitor(2), isBot: true, country: 'US', referrer: null, browser: null, os: null, device: 'bot' })
    const text = f.dimsText()
    expect(text.length).toBeLessThan(JSON.stringify(Object.fromEntries(Object.entries(f.dims!).map(([d, m]) => [d, Object.fromEntries(m)]))).length)
    const back = new Figures()
    back.addRow({ clicks: 2, bots: 1, visitors: null, dims: text })
    back.addRow({ clicks: 1, bots: 0, visitors: null, dims: JSON.stringify({ country: { DE: 1 }, referrer: { '': 1 } }) })
    expect(back.top('country', 10)).toEqual([
      { value: 'DE', clicks: 2 },
      { value: null, clicks: 1 },
    ])
    expect(back.top('referrer', 10)).toEqual([
      { value: null, clicks: 2 },
      { value: 'news.example.org', clicks: 1 },
    ])
    expect(back.top('browser', 10)).toEqual([
      { value: 'Chrome', clicks: 1 },
      { value: 'Microsoft Edge', clicks: 1 },
    ])
    expect(back.top('device', 10)).toEqual([{ value: 'desktop', clicks: 2 }])
  })
})

describe('time zones', () => {
  const NY = 'America/New_York'
  test('offsets and local midnight across the 2026 DST changes', () => {
    expect(offsetAt(NY, Date.UTC(2026, 0, 15))).toBe(-5 * H)
    expect(offsetAt(NY, Date.UTC(2026, 6, 15))).toBe(-4 * H)
    expect(instantOf(NY, 2026, 3, 8)).toBe(Date.UTC(2026, 2, 8, 5))
    expect(instantOf(NY, 2026, 3, 9)).toBe(Date.UTC(2026, 2, 9, 4))
    // 02:30 on 8 March does not exist in New York: moved forward by the gap, to 03:30 EDT.
    expect(instantOf(NY, 2026, 3, 8, 2, 30)).toBe(Date.UTC(2026, 2, 8, 7, 30))
  })

  test('a DST day has 23 hours, the autumn one 25; weeks start on Monday; months follow the calendar', () => {
    const spring = instantOf(NY, 2026, 3, 8)
    expect(nextBucket(NY, 'day', spring) - spring).toBe(23 * H)
    const autumn = instantOf(NY, 2026, 11, 1)
    expect(nextBucket(NY, 'day', autumn) - autumn).toBe(25 * H)
    // Wednesday 11 March 2026 → Monday 9 March.
    expect(bucketStart(NY, 'week', Date.UTC(2026, 2, 11, 18))).toBe(instantOf(NY, 2026, 3, 9))
    expect(bucketStart(NY, 'month', Date.UTC(2026, 2, 1, 3))).toBe(instantOf(NY, 2026, 2, 1))
    expect(nextBucket('Europe/Berlin', 'month', instantOf('Europe/Berlin', 2026, 12, 1))).toBe(instantOf('Europe/Berlin', 2027, 1, 1))
  })

  test('a zone whose day starts in the DST gap (Santiago) and a half-hour zone (Kolkata)', () => {
    // Chile moved clocks from 24:00 to 01:00 on 6 September 2026: that day starts at 01:00 local.
    const day = instantOf('America/Santiago', 2026, 9, 6)
    expect(localIso('America/Santiago', day)).toBe('2026-09-06T01:00:00.000-03:00')
    expect(localIso('Asia/Kolkata', instantOf('Asia/Kolkata', 2026, 3, 1))).toBe('2026-03-01T00:00:00.000+05:30')
  })

  test('parsing dates and date-times', () => {
    expect(parseInstant('2026-03-08', NY)).toBe(Date.UTC(2026, 2, 8, 5))
    expect(parseInstant('2026-03-08', NY, true)).toBe(Date.UTC(2026, 2, 9, 4))
    expect(parseInstant('2026-03-08T12:00', NY)).toBe(Date.UTC(2026, 2, 8, 16))
    expect(parseInstant('2026-03-08T12:00:00Z', NY)).toBe(Date.UTC(2026, 2, 8, 12))
    expect(parseInstant('2026-03-08T12:00:00+01:00', NY)).toBe(Date.UTC(2026, 2, 8, 11))
    for (const bad of ['2026-02-30', '2026-13-01', 'yesterday', '2026-03-08T25:00', '1700000000', '']) expect(parseInstant(bad, NY)).toBeNull()
  })
})

describe('reading plan up to now', () => {
  test('a range reaching past now reads the current hour from its rollup, not raw clicks', () => {
    const t0 = Date.UTC(2026, 2, 1)
    const now = t0 + 10 * H + 25 * 60_000
    expect(planRange(t0 + 8 * H, now, now)).toEqual([{ source: 'hour', from: t0 + 8 * H, to: t0 + 11 * H }])
    expect(planRange(t0 + 8 * H, now + 60_000, now)).toEqual([{ source: 'hour', from: t0 + 8 * H, to: t0 + 11 * H }])
    // A range ending before now keeps its partial hour exact.
    expect(planRange(t0 + 8 * H, now - 60_000, now).at(-1)).toEqual({ source: 'raw', from: t0 + 10 * H, to: now - 60_000 })
  })
})

describe('ranking links by unique visitors', () => {
  test('measures links in order of clicks and stops once no later link can reach the top', async () => {
    const { rankableByVisitors } = await import('../../src/modules/analytics/service')
    // 250 links: two busy ones, then a long tail of 1-3 clicks. Visitors are half the clicks.
    const perLink = new Map<string, any>()
    const ids: string[] = []
    for (let i = 0; i < 250; i++) {
      const id = `l${String(i).padStart(3, '0')}`
      const clicks = i === 0 ? 5_000 : i === 1 ? 3_000 : 1 + (i % 3)
      perLink.set(id, { clicks, uniqueClicks: 0, conversions: { conversions: 0, revenue: {} } })
      ids.push(id)
    }
    const measuredIds: string[] = []
    const measure = async (round: string[]) => {
      for (const id of round) perLink.get(id).uniqueClicks = Math.ceil(perLink.get(id).clicks / 2)
      measuredIds.push(...round)
    }
    const top2 = await rankableByVisitors(ids, perLink, 2, measure)
    // The first round of 100 holds both busy links; the 101st link's 3 clicks cannot reach 1,500 visitors.
    expect(measuredIds).toHaveLength(100)
    expect(top2).toContain('l000')
    expect(top2).toContain('l001')
    // Asked for more links than can be ruled out, everything is measured.
    measuredIds.length = 0
    expect(await rankableByVisitors(ids, perLink, 200, measure)).toHaveLength(250)
  })
})
