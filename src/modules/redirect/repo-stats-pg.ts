// The public stats page's data (repo-stats.ts has the meaning) on PostgreSQL, awaited: the link's counters and
// its 30 day rollups, asked for at once (two reads, not one snapshot, as on SQLite).
import { and, eq, gte, lt } from 'drizzle-orm'
import type { PgDb } from '../../db/pg/client'
import { linkRollups, links } from '../../db/pg/schema.generated'
import type { AsyncPort } from '../../db/rows'
import { statsPage, statsWindow, type StatsRepo } from './repo-stats'

export function createStatsRepoPg(db: PgDb): AsyncPort<StatsRepo> {
  return {
    async publicStats(linkId, now) {
      const { from, to } = statsWindow(now)
      const [[c], rows] = await Promise.all([
        db.select({ total: links.totalClicks, uniq: links.uniqueClicks }).from(links).where(eq(links.id, linkId)),
        // The page shows the link's all-time uniqueClicks, never a range's: the visitor sketches are not read.
        db
          .select({ bucket: linkRollups.bucket, clicks: linkRollups.clicks, bots: linkRollups.bots, dims: linkRollups.dims })
          .from(linkRollups)
          .where(and(eq(linkRollups.linkId, linkId), eq(linkRollups.grain, 'day'), gte(linkRollups.bucket, from), lt(linkRollups.bucket, to))),
      ])
      return c ? statsPage(c, rows, from) : null
    },
  }
}
