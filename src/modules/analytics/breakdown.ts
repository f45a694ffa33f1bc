// GET /analytics/breakdown (contract 7.2): a range's clicks, unique visitors, conversions and revenue per
// value of one dimension, read exactly from raw clicks (repo-breakdown.ts). Raw clicks are kept for
// LNK_CLICK_RETENTION_DAYS only, so the part of a range before that counts nothing: the read starts there.
import { iso } from '../../platform/clock'
import { DAY_MS } from '../../platform/time'
import type { Caller } from '../identity'
import { BREAKDOWN_LIMIT } from './breakdown-values'
import { tidy } from './conversion-totals'
import type { BreakdownDimension, BreakdownRepo, BreakdownSort } from './port'
import { type AnalyticsCtx, type RangeQuery, resolveRange, scopeOf } from './query'

export interface BreakdownCtx extends AnalyticsCtx {
  breakdowns: BreakdownRepo
}

export interface BreakdownParams extends RangeQuery {
  dimension: BreakdownDimension
  limit?: number
  sort?: BreakdownSort
  currency?: string
}

export async function breakdown(ctx: BreakdownCtx, caller: Caller, q: BreakdownParams) {
  const range = resolveRange(q, ctx.clock.now())
  const scope = await scopeOf(ctx, caller, q.linkId)
  const sort = q.sort ?? 'clicks'
  // Raw clicks older than retention are pruned hourly: reading from the cut-off makes the answer the same
  // before and after the prune job has run.
  const from = Math.max(range.from, range.now - ctx.config.clickRetentionDays * DAY_MS)
  const answer =
    from < range.to
      ? await ctx.breakdowns.breakdown({ scope, dimension: q.dimension, from, to: range.to, sort, currency: q.currency, limit: q.limit ?? BREAKDOWN_LIMIT })
      : { rows: [], totals: { clicks: 0, uniqueClicks: 0, conversions: 0, revenue: {} }, currency: q.currency ?? null }
  return {
    dimension: q.dimension,
    from: iso(range.from),
    to: iso(range.to),
    tz: range.tz,
    linkId: scope.linkId ?? null,
    sort,
    currency: sort === 'revenue' ? (answer.currency ?? null) : null,
    rows: answer.rows.map((r) => ({ ...r, revenue: tidy(r.revenue) })),
    totals: { ...answer.totals, revenue: tidy(answer.totals.revenue) },
  }
}
