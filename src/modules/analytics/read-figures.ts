// Reading a scope's figures for many ranges at once: each range planned into segments (plan.ts), each source
// read once over the merged stretches all ranges need, then every range summed from what was read.
import { Figures } from './figures'
import { planRange, type Grain, type PlanOptions, type Segment } from './plan'
import { type AnalyticsScope, type RawClick, type RollupRow, SECONDS_KEPT_MS, wholeWorkspace } from './port'
import type { AnalyticsCtx } from './query'

/** Sorted rows and a lookup of those whose `key` falls in [from, to). */
export function indexBy<T>(rows: T[], key: (r: T) => number) {
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
export async function planOptions(ctx: AnalyticsCtx, scope: AnalyticsScope | 'links', now: number): Promise<PlanOptions> {
  const marks = await ctx.analytics.rollupMarks()
  if (scope === 'links' || !wholeWorkspace(scope))
    return { weeksBefore: marks.weeksBefore, monthsBefore: marks.monthsBefore, quartersBefore: marks.quartersBefore }
  return { minutesFrom: marks.minutesFrom, secondsFrom: marks.secondsFrom === undefined ? undefined : Math.max(marks.secondsFrom, now - SECONDS_KEPT_MS) }
}

/** Figures of each range (people's clicks, bots, visitors and, with `withDims`, clicks per dimension). */
export async function figuresOf(
  ctx: AnalyticsCtx,
  scope: AnalyticsScope,
  ranges: { from: number; to: number }[],
  now: number,
  withDims: boolean,
): Promise<Figures[]> {
  const options = await planOptions(ctx, scope, now)
  const plans = ranges.map((r) => planRange(r.from, r.to, now, options))
  const all = plans.flat()
  const rollups = new Map<Grain, ReturnType<typeof indexBy<RollupRow>>>()
  for (const grain of GRAINS) {
    const rows: RollupRow[] = []
    for (const span of coalesce(all.filter((s) => s.source === grain))) rows.push(...(await ctx.analytics.rollups(scope, grain, span.from, span.to, withDims)))
    rollups.set(
      grain,
      indexBy(rows, (r) => r.bucket),
    )
  }
  const raw: RawClick[] = []
  for (const span of coalesce(all.filter((s) => s.source === 'raw'))) raw.push(...(await ctx.analytics.rawClicks(scope, span.from, span.to)))
  const rawWithin = indexBy(raw, (c) => c.clickedAt)

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
