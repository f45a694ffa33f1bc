// The public stats page's data (`{short domain}/{slug}+`): the link's counters and, over the last 30 UTC
// days, people's clicks per day, top countries and top referrer hosts, from the link's 30 day rollups (one
// primary-key range), so the page is the same before and after raw clicks are pruned. On either engine the
// counters and the rollups are asked for at once (two reads, not one snapshot); SQLite's redirect path reads
// them synchronously instead (repo-sqlite.ts).
import { and, eq, gte, lt } from 'drizzle-orm'
import type { Engine } from '../../db/engine'
import { Figures } from '../analytics'
import { DAY_MS } from '../../platform/time'
import type { PublicStats, StatsRepo } from './port'

export const STATS_DAYS = 30
export const STATS_TOP = 10

export function createStatsRepo(engine: Engine): StatsRepo {
  const { db } = engine
  const { linkRollups, links } = engine.t
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

/** The page's days: the last STATS_DAYS UTC days, today included. */
export function statsWindow(now: number): { from: number; to: number } {
  const from = Math.floor(now / DAY_MS) * DAY_MS - (STATS_DAYS - 1) * DAY_MS
  return { from, to: from + STATS_DAYS * DAY_MS }
}

export interface DayRollup {
  bucket: number
  clicks: number
  bots: number
  dims: string
}

/** The page from the link's counters and its day rollups since `from`. */
export function statsPage(c: { total: number; uniq: number }, rows: readonly DayRollup[], from: number): PublicStats {
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
}
