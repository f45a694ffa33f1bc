// Analytics questions (overview, timeline, top links) answered from the rollups: whole days from day
// rows, hours from hour rows, raw clicks only for partial hours at the ends (plan.ts). Figures cover the
// workspace's live links in the calling key's scope. A test key sees its sandbox instead: test links only,
// which record no clicks, so its figures are zero but never a live one. The query is read and checked in
// query.ts, figures read in read-figures.ts, and the top links ranked in top-links.ts.
import { iso } from '../../platform/clock'
import type { Caller } from '../identity'
import { addConversion, emptyConversions, tidy } from './conversion-totals'
import { tooManyBuckets } from './errors'
import { type AnalyticsCtx, MAX_BUCKETS, type RangeQuery, resolveInterval, resolveRange, scopeOf, TOP_LIMIT } from './query'
import { figuresOf, indexBy } from './read-figures'
import { bucketStart, localIso, nextBucket } from './time'

// The tests of the visitor ranking and of the uniques thread import these from here, where they were first.
export { measureUniques, rankableByVisitors } from './top-links'

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

export async function timeline(ctx: AnalyticsCtx, caller: Caller, q: RangeQuery & { interval?: string }) {
  const range = resolveRange(q, ctx.clock.now())
  const interval = resolveInterval(q.interval, range)
  const scope = await scopeOf(ctx, caller, q.linkId)

  const buckets: { start: number; from: number; to: number }[] = []
  for (let start = bucketStart(range.tz, interval, range.from); start < range.to; start = nextBucket(range.tz, interval, start)) {
    if (buckets.length === MAX_BUCKETS) throw tooManyBuckets(interval, MAX_BUCKETS)
    buckets.push({ start, from: Math.max(start, range.from), to: Math.min(nextBucket(range.tz, interval, start), range.to) })
  }
  const figures = await figuresOf(ctx, scope, buckets, range.now, false)
  const conversionsWithin = indexBy(await ctx.analytics.conversions(scope, range.from, range.to), (c) => c.createdAt)
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
