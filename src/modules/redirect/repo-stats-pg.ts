// The public stats page's data (repo-stats.ts has the meaning) on PostgreSQL, awaited: the link's counters and
// its 30 day rollups, asked for at once (two reads, not one snapshot, as on SQLite).
import { and, eq, gte, lt } from 'drizzle-orm'
import type { PgDb } from '../../db/pg/client'
import { linkRollups, links } from '../../db/pg/schema.generated'
import type { AsyncPort } from '../../db/rows'
import { Figures } from '../analytics/figures'
import { DAY_MS } from '../../platform/time'
import { STATS_DAYS, STATS_TOP, type StatsRepo } from './repo-stats'

export function createStatsRepoPg(db: PgDb): AsyncPort<StatsRepo> {
  return {
    async publicStats(linkId, now) {
      const from = Math.floor(now / DAY_MS) * DAY_MS - (STATS_DAYS - 1) * DAY_MS
      const to = from + STATS_DAYS * DAY_MS
      const [[c], rows] = await Promise.all([
        db.select({ total: links.totalClicks, uniq: links.uniqueClicks }).from(links).where(eq(links.id, linkId)),
        // The page shows the link's all-time uniqueClicks, never a range's: the visitor sketches are not read.
        db
          .select({ bucket: linkRollups.bucket, clicks: linkRollups.clicks, bots: linkRollups.bots, dims: linkRollups.dims })
          .from(linkRollups)
          .where(and(eq(linkRollups.linkId, linkId), eq(linkRollups.grain, 'day'), gte(linkRollups.bucket, from), lt(linkRollups.bucket, to))),
      ])
      if (!c) return null
      const days = new Array<number>(STATS_DAYS).fill(0)
      const all = new Figures()
      for (const r of rows) {
        days[(r.bucket - from) / DAY_MS] = r.clicks
        all.addRow({ ...r, visitors: null })
      }
      return {
        totalClicks: c.total,
        uniqueClicks: c.uniq,
        from,
        days,
        countries: all.top('country', STATS_TOP).map((r) => ({ country: r.value, clicks: r.clicks })),
        referrers: all.top('referrer', STATS_TOP).map((r) => ({ host: r.value, clicks: r.clicks })),
      }
    },
  }
}
