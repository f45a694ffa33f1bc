// The top-links question: links ranked by clicks, unique visitors, conversions or revenue over a range. It reads
// per-link figures (link rollups, raw clicks only for the partial hours at the ends) rather than the scope's
// totals, and measures visitors' sketches only for the links that can still make the ranking.
import { iso } from '../../platform/clock'
import type { Caller } from '../identity'
import { shortUrl } from '../links/model'
import { addConversion, emptyConversions, tidy, type ConversionTotals } from './conversion-totals'
import { HLL_STANDARD_ERROR } from './hll'
import { planRange, type Segment } from './plan'
import type { AnalyticsScope } from './port'
import { type AnalyticsCtx, type RangeQuery, resolveRange, scopeOf, TOP_LIMIT } from './query'
import { planOptions } from './read-figures'
import { linkUniques } from './uniques'
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../platform/time'

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
