// Analytics questions (overview, timeline, top links) answered from the rollups: whole days from day
// rows, hours from hour rows, raw clicks only for partial hours at the ends (plan.ts). Figures cover the
// workspace's live links in the calling key's scope. A test key sees its sandbox instead: test links only,
// which record no clicks, so its figures are zero but never a live one.
import { iso } from '../../platform/clock'
import type { Deps } from '../../context'
import type { Caller } from '../identity'
import { notADate, rangeBackwards, rangeTooLong, tooManyBuckets, unknownInterval, unknownLink, unknownTimeZone } from './errors'
import { shortUrl } from '../links/model'
import { Figures } from './figures'
import { HLL_STANDARD_ERROR } from './hll'
import { planRange, type Grain, type PlanOptions, type Segment } from './plan'
import { type AnalyticsRepo, type AnalyticsScope, type ConversionFact, type RawClick, type RollupRow, SECONDS_KEPT_MS, wholeWorkspace } from './port'
import type { UniquesHelper } from './uniques-helper'
import { linkUniques } from './uniques'
import { bucketStart, instantOf, INTERVALS, isTimeZone, localIso, nextBucket, parseInstant, wallTime, type Interval } from './time'
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../platform/time'

export interface AnalyticsCtx extends Deps {
  analytics: AnalyticsRepo
  /** Measures unique visitors on another thread (SQLite; see uniques-helper.ts). */
  uniques?: UniquesHelper
}

/** Longest range one question may cover. */
export const MAX_RANGE_DAYS = 731
export const DEFAULT_RANGE_DAYS = 30
/** Most buckets one timeline may have (an hourly timeline covers up to 41 days). */
export const MAX_BUCKETS = 1000
/** Intervals are chosen as the finest one giving at most this many buckets. */
const AUTO_BUCKETS = 400
export const TOP_LIMIT = 10
export const TOP_LINKS_MAX = 100

export interface RangeQuery {
  from?: string
  to?: string
  tz?: string
  linkId?: string
}

export interface Range {
  from: number
  to: number
  tz: string
  /** The clock when the question was asked: no click is later (see planRange). */
  now: number
}

/** from/to/tz of a query as instants; defaults to the last 30 days (today included) in tz. */
export function resolveRange(q: RangeQuery, now: number): Range {
  const tz = q.tz ?? 'UTC'
  if (!isTimeZone(tz)) throw unknownTimeZone(tz)
  const parse = (param: 'from' | 'to', text: string | undefined, end: boolean) => {
    if (text === undefined) return undefined
    const t = parseInstant(text, tz, end)
    if (t === null) throw notADate(param, text)
    return t
  }
  const to = parse('to', q.to, true) ?? now
  let from = parse('from', q.from, false)
  if (from === undefined) {
    const w = wallTime(tz, to - 1)
    from = instantOf(tz, w.year, w.month, w.day - (DEFAULT_RANGE_DAYS - 1))
  }
  if (to <= from) throw rangeBackwards(iso(from))
  if (to - from > MAX_RANGE_DAYS * DAY_MS) throw rangeTooLong(MAX_RANGE_DAYS)
  return { from, to, tz, now }
}

/**
 * The query's scope: the workspace's live links (a test key: its test links), narrowed to one link and to the
 * key's scope filters.
 */
async function scopeOf(ctx: AnalyticsCtx, caller: Caller, linkId: string | undefined): Promise<AnalyticsScope> {
  const filters = caller.key.scopeFilters
  const scope: AnalyticsScope = { workspaceId: caller.workspace.id, test: caller.mode === 'test', domains: filters?.domains, tags: filters?.tags }
  if (linkId !== undefined) {
    const id = linkId.toLowerCase()
    // Unknown, another workspace's, of the other mode (a test link to a live key, a live one to a test key) or
    // out of the key's scope: all the same 404.
    if (!/^[0-9a-f-]{36}$/.test(id) || (await ctx.analytics.countLinks({ ...scope, linkId: id })) === 0) throw unknownLink(linkId)
    scope.linkId = id
  }
  return scope
}

/** Sorted rows and a lookup of those whose `key` falls in [from, to). */
function index<T>(rows: T[], key: (r: T) => number) {
  rows.sort((a, b) => key(a) - key(b))
  const lowerBound = (t: number) => {
    let lo = 0
    let hi = rows.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (key(rows[mid]!) < t) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  return function* within(from: number, to: number) {
    for (let i = lowerBound(from); i < rows.length && key(rows[i]!) < to; i++) yield rows[i]!
  }
}

const GRAINS: readonly Grain[] = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter']

/** Merges overlapping or touching segments, so each source is read once per stretch of time. */
function coalesce(segments: Segment[]): { from: number; to: number }[] {
  const sorted = [...segments].sort((a, b) => a.from - b.from)
  const out: { from: number; to: number }[] = []
  for (const s of sorted) {
    const last = out[out.length - 1]
    if (last && s.from <= last.to) last.to = Math.max(last.to, s.to)
    else out.push({ from: s.from, to: s.to })
  }
  return out
}

/**
 * The grains a scope may read besides hours and days: a workspace's own minutes and seconds (the seconds of
 * the last SECONDS_KEPT_MS only: older ones may be pruned), or its links' weeks, months and quarters.
 */
async function planOptions(ctx: AnalyticsCtx, scope: AnalyticsScope | 'links', now: number): Promise<PlanOptions> {
  const marks = await ctx.analytics.rollupMarks()
  if (scope === 'links' || !wholeWorkspace(scope))
    return { weeksBefore: marks.weeksBefore, monthsBefore: marks.monthsBefore, quartersBefore: marks.quartersBefore }
  return { minutesFrom: marks.minutesFrom, secondsFrom: marks.secondsFrom === undefined ? undefined : Math.max(marks.secondsFrom, now - SECONDS_KEPT_MS) }
}

/** Figures of each range (people's clicks, bots, visitors and, with `withDims`, clicks per dimension). */
async function figuresOf(ctx: AnalyticsCtx, scope: AnalyticsScope, ranges: { from: number; to: number }[], now: number, withDims: boolean): Promise<Figures[]> {
  const options = await planOptions(ctx, scope, now)
  const plans = ranges.map((r) => planRange(r.from, r.to, now, options))
  const all = plans.flat()
  const rollups = new Map<Grain, ReturnType<typeof index<RollupRow>>>()
  for (const grain of GRAINS) {
    const rows: RollupRow[] = []
    for (const span of coalesce(all.filter((s) => s.source === grain))) rows.push(...(await ctx.analytics.rollups(scope, grain, span.from, span.to, withDims)))
    rollups.set(
      grain,
      index(rows, (r) => r.bucket),
    )
  }
  const raw: RawClick[] = []
  for (const span of coalesce(all.filter((s) => s.source === 'raw'))) raw.push(...(await ctx.analytics.rawClicks(scope, span.from, span.to)))
  const rawWithin = index(raw, (c) => c.clickedAt)

  return plans.map((segments) => {
    const f = new Figures(withDims)
    for (const s of segments) {
      if (s.source === 'raw') {
        for (const c of rawWithin(s.from, s.to)) {
          f.addClick({ visitor: c.visitor, isBot: c.isBot === 1, country: c.country, referrer: c.referrer, browser: c.browser, os: c.os, device: c.device })
        }
      } else {
        for (const row of rollups.get(s.source)!(s.from, s.to)) f.addRow(row)
      }
    }
    return f
  })
}

interface ConversionTotals {
  conversions: number
  revenue: Record<string, number>
}

const emptyConversions = (): ConversionTotals => ({ conversions: 0, revenue: {} })

function addConversion(t: ConversionTotals, c: ConversionFact) {
  t.conversions++
  if (c.currency !== null && c.value !== null) t.revenue[c.currency] = (t.revenue[c.currency] ?? 0) + c.value
}

/** Sums of float amounts, rounded past every currency's minor unit so 3 × 19.99 reads 59.97. */
const tidy = (revenue: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(revenue)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([c, v]) => [c, Math.round(v * 10_000) / 10_000]),
  )

export async function overview(ctx: AnalyticsCtx, caller: Caller, q: RangeQuery) {
  const range = resolveRange(q, ctx.clock.now())
  const scope = await scopeOf(ctx, caller, q.linkId)
  const [figures] = await figuresOf(ctx, scope, [range], range.now, true)
  const conv = emptyConversions()
  for (const c of await ctx.analytics.conversions(scope, range.from, range.to)) addConversion(conv, c)
  return {
    from: iso(range.from),
    to: iso(range.to),
    tz: range.tz,
    linkId: scope.linkId ?? null,
    totals: {
      clicks: figures!.clicks,
      uniqueVisitors: figures!.visitors.estimate(),
      botHits: figures!.bots,
      links: await ctx.analytics.countLinks(scope),
      conversions: conv.conversions,
      revenue: tidy(conv.revenue),
    },
    top: {
      countries: figures!.top('country', TOP_LIMIT),
      referrers: figures!.top('referrer', TOP_LIMIT),
      browsers: figures!.top('browser', TOP_LIMIT),
      os: figures!.top('os', TOP_LIMIT),
      devices: figures!.top('device', TOP_LIMIT),
    },
  }
}

/** The finest interval that keeps the range within AUTO_BUCKETS buckets. */
function chooseInterval(range: Range): Interval {
  const span = range.to - range.from
  if (span <= AUTO_BUCKETS * HOUR_MS) return 'hour'
  if (span <= AUTO_BUCKETS * DAY_MS) return 'day'
  if (span <= AUTO_BUCKETS * 7 * DAY_MS) return 'week'
  return 'month'
}

export async function timeline(ctx: AnalyticsCtx, caller: Caller, q: RangeQuery & { interval?: string }) {
  const range = resolveRange(q, ctx.clock.now())
  if (q.interval !== undefined && !INTERVALS.includes(q.interval as Interval)) throw unknownInterval(INTERVALS)
  const interval = (q.interval as Interval | undefined) ?? chooseInterval(range)
  const scope = await scopeOf(ctx, caller, q.linkId)

  const buckets: { start: number; from: number; to: number }[] = []
  for (let start = bucketStart(range.tz, interval, range.from); start < range.to; start = nextBucket(range.tz, interval, start)) {
    if (buckets.length === MAX_BUCKETS) throw tooManyBuckets(interval, MAX_BUCKETS)
    buckets.push({ start, from: Math.max(start, range.from), to: Math.min(nextBucket(range.tz, interval, start), range.to) })
  }
  const figures = await figuresOf(ctx, scope, buckets, range.now, false)
  const conversionsWithin = index(await ctx.analytics.conversions(scope, range.from, range.to), (c) => c.createdAt)
  return {
    from: iso(range.from),
    to: iso(range.to),
    tz: range.tz,
    interval,
    linkId: scope.linkId ?? null,
    buckets: buckets.map((b, i) => {
      const conv = emptyConversions()
      for (const c of conversionsWithin(b.from, b.to)) addConversion(conv, c)
      return {
        start: iso(b.start),
        localStart: localIso(range.tz, b.start),
        clicks: figures[i]!.clicks,
        uniqueClicks: figures[i]!.visitors.estimate(),
        conversions: conv.conversions,
        revenue: tidy(conv.revenue),
      }
    }),
  }
}

export const TOP_LINK_SORTS = ['clicks', 'uniqueClicks', 'conversions', 'revenue'] as const
export type TopLinkSort = (typeof TOP_LINK_SORTS)[number]

export interface LinkFigures {
  clicks: number
  uniqueClicks: number
  conversions: ConversionTotals
}

export async function topLinks(ctx: AnalyticsCtx, caller: Caller, q: RangeQuery & { limit?: number; sort?: TopLinkSort; currency?: string }) {
  const range = resolveRange(q, ctx.clock.now())
  const limit = q.limit ?? TOP_LIMIT
  const sort = q.sort ?? 'clicks'
  const scope = await scopeOf(ctx, caller, undefined)
  // Per-link figures: link rollups (months included), never the workspace's minutes.
  const segments = planRange(range.from, range.to, range.now, await planOptions(ctx, 'links', range.now))

  const perLink = new Map<string, LinkFigures>()
  const of = (id: string) => {
    let f = perLink.get(id)
    if (!f) perLink.set(id, (f = { clicks: 0, uniqueClicks: 0, conversions: emptyConversions() }))
    return f
  }
  // The partial hours at the ends: clicks counted per link in SQL, visitors read below for measured links only.
  for (const s of segments) {
    if (s.source === 'raw') for (const r of await partialHourClicks(ctx, scope, s, range.now)) of(r.linkId).clicks += r.clicks
    else for (const r of await ctx.analytics.clicksPerLink(scope, s.source, s.from, s.to)) if (r.clicks) of(r.linkId).clicks += r.clicks
  }
  const perCurrency = new Map<string, number>()
  for (const c of await ctx.analytics.conversions(scope, range.from, range.to)) {
    addConversion(of(c.linkId).conversions, c)
    if (c.currency) perCurrency.set(c.currency, (perCurrency.get(c.currency) ?? 0) + 1)
  }

  // Unique visitors need the sketches: for every candidate when ranking by them, else for the winners only.
  const uniquesOf = async (ids: string[]) => {
    const uniques = await measureUniques(ctx, ids, segments)
    ids.forEach((id, i) => (of(id).uniqueClicks = uniques[i]!))
  }

  // By default revenue ranks in the currency most conversions of the range were in (ties: alphabetical).
  const leading = [...perCurrency].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0]
  const currency = sort === 'revenue' ? (q.currency ?? leading) : undefined
  const value = (f: LinkFigures): number =>
    sort === 'clicks'
      ? f.clicks
      : sort === 'uniqueClicks'
        ? f.uniqueClicks
        : sort === 'conversions'
          ? f.conversions.conversions
          : currency
            ? (f.conversions.revenue[currency] ?? 0)
            : 0
  let ids = [...perLink.keys()]
  if (sort === 'uniqueClicks') ids = await rankableByVisitors(ids, perLink, limit, uniquesOf)
  ids.sort((a, b) => value(perLink.get(b)!) - value(perLink.get(a)!) || perLink.get(b)!.clicks - perLink.get(a)!.clicks || (a < b ? -1 : 1))
  ids = ids.slice(0, limit)
  if (sort !== 'uniqueClicks') await uniquesOf(ids)

  const details = new Map((await ctx.analytics.linkDetails(ids)).map((l) => [l.id, l]))
  return {
    from: iso(range.from),
    to: iso(range.to),
    tz: range.tz,
    sort,
    currency: sort === 'revenue' ? (currency ?? null) : null,
    links: ids
      .filter((id) => details.has(id))
      .map((id) => {
        const l = details.get(id)!
        const f = perLink.get(id)!
        return {
          id,
          slug: l.slug,
          domain: l.domain,
          shortUrl: shortUrl(ctx, l),
          destinationUrl: l.destinationUrl,
          title: l.title,
          clicks: f.clicks,
          uniqueClicks: f.uniqueClicks,
          conversions: f.conversions.conversions,
          revenue: tidy(f.conversions.revenue),
        }
      }),
  }
}

/**
 * People's clicks per link in a partial hour: counted from its raw clicks, or, when the rest of the hour
 * holds fewer clicks (judged by the workspace's minute rollups) and all its raw clicks are kept, as the
 * hour's rollups less the rest. A range ending inside a burst then reads the few clicks after its end, not
 * the burst. The same counts either way.
 */
async function partialHourClicks(ctx: AnalyticsCtx, scope: AnalyticsScope, s: Segment, now: number) {
  const hour = s.from - (s.from % HOUR_MS)
  // A range shorter than an hour can straddle two: only a part of one hour has a rollup to subtract from.
  if (s.to <= hour + HOUR_MS && hour >= now - ctx.config.clickRetentionDays * DAY_MS) {
    let inside = 0
    let outside = 0
    const minutes = await ctx.analytics.rollups({ workspaceId: scope.workspaceId, test: false }, 'minute', hour, hour + HOUR_MS, false)
    for (const m of minutes) {
      if (m.bucket + MINUTE_MS > s.from && m.bucket < s.to) inside += m.clicks
      else outside += m.clicks
    }
    if (outside < inside) return ctx.analytics.clicksPerLinkOutside(scope, hour, s.from, s.to)
  }
  return ctx.analytics.rawClicksPerLink(scope, s.from, s.to)
}

/** Fewer links than this are measured on the request thread alone: the other thread's round trip costs more. */
const SPLIT_FROM = 40

/** Unique visitors of each link, half of them measured by the uniques thread when there is one. */
export async function measureUniques(ctx: AnalyticsCtx, ids: string[], segments: Segment[]): Promise<number[]> {
  if (!ctx.uniques || ids.length < SPLIT_FROM) return linkUniques(ctx.analytics, ids, segments)
  const half = ids.length >> 1
  const theirs = ids.slice(0, half)
  // Sent first, so the thread reads while this one does; measured here after all should the thread fail.
  const there = ctx.uniques.measure(theirs, segments).catch(() => linkUniques(ctx.analytics, theirs, segments))
  const here = await linkUniques(ctx.analytics, ids.slice(half), segments)
  return [...(await there), ...here]
}

/** Links measured per round when ranking by unique visitors. */
const VISITOR_ROUND = 100
/** How far an estimate may exceed the true count (3 standard errors): a link's clicks bound its visitors only up to it. */
const ESTIMATE_SLACK = 1 + 3 * HLL_STANDARD_ERROR

/**
 * The links that can make the top `limit` by unique visitors, with their visitors measured. Sketches are
 * costly (a year of day rows per link), and a link never has more visitors than clicks: links are measured
 * in order of clicks, and once the next one's clicks (with the estimate's slack) cannot reach the
 * `limit`-th best count so far, none after it can either. Most traffic goes to few links, so this usually
 * stops early; with equally busy links it measures them all.
 */
export async function rankableByVisitors(
  ids: string[],
  perLink: Map<string, LinkFigures>,
  limit: number,
  measure: (ids: string[]) => Promise<void>,
): Promise<string[]> {
  const byClicks = [...ids].sort((a, b) => perLink.get(b)!.clicks - perLink.get(a)!.clicks)
  const measured: string[] = []
  for (let i = 0; i < byClicks.length; i += VISITOR_ROUND) {
    if (measured.length >= limit) {
      const kth = measured.map((id) => perLink.get(id)!.uniqueClicks).sort((a, b) => b - a)[limit - 1]!
      if (perLink.get(byClicks[i]!)!.clicks * ESTIMATE_SLACK < kth) break
    }
    const round = byClicks.slice(i, i + VISITOR_ROUND)
    await measure(round)
    measured.push(...round)
  }
  return measured
}
