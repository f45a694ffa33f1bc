// The public stats page's data (`{short domain}/{slug}+`): the link's counters and, over the last 30 UTC
// days, people's clicks per day, top countries and top referrer hosts. It is read on the redirect path, so
// like the link lookup it is plain SQL prepared once and synchronous: the link's 30 day rollups (one
// primary-key range), so the page is the same before and after raw clicks are pruned.
import type { Db } from '../../db/client'
import { Figures } from '../analytics/figures'
import { DAY_MS } from '../../platform/time'

export const STATS_DAYS = 30
export const STATS_TOP = 10

export interface PublicStats {
  /** All-time counters of the link (people's clicks, distinct visitors). */
  totalClicks: number
  uniqueClicks: number
  /** Epoch ms of the first UTC day shown; `days[i]` counts the clicks of day `from + i * 24 h`. */
  from: number
  days: number[]
  /** Most clicks first; `country` null = not known (private or unknown address). */
  countries: { country: string | null; clicks: number }[]
  /** Most clicks first; `host` null = a direct visit (no referrer). */
  referrers: { host: string | null; clicks: number }[]
}

export interface StatsRepo {
  /** Synchronous on purpose: answered on the redirect path without awaiting. Null when the link is gone. */
  publicStatsSync(linkId: string, now: number): PublicStats | null
}

export function createStatsRepo(db: Db): StatsRepo {
  const sqlite = db.$client
  const counters = sqlite.prepare('SELECT total_clicks AS total, unique_clicks AS uniq FROM links WHERE id = ?')
  // The page shows the link's all-time uniqueClicks, never a range's: the visitor sketches are not read.
  const dayRollups = sqlite.prepare(
    "SELECT bucket, clicks, bots, dims FROM link_rollups WHERE link_id = ? AND grain = 'day' AND bucket >= ? AND bucket < ?",
  )

  return {
    publicStatsSync(linkId: string, now: number): PublicStats | null {
      const c = counters.get(linkId) as { total: number; uniq: number } | null
      if (!c) return null
      const { from, to } = statsWindow(now)
      return statsPage(c, dayRollups.all(linkId, from, to) as DayRollup[], from)
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

/** The page from the link's counters and its day rollups since `from` (either engine). */
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
