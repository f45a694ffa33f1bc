// The public stats page's data (`{short domain}/{slug}+`): the link's counters and, over the last 30 UTC
// days, people's clicks per day, top countries and top referrer hosts. It is read on the redirect path, so
// like the link lookup it is plain SQL prepared once and synchronous: the link's 30 day rollups (one
// primary-key range), so the page is the same before and after raw clicks are pruned. Rendered pages are
// kept in memory for a minute per link (StatsPageCache), so a popular stats page costs the database at
// most two small reads a minute.
import type { Db } from '../../db/client'
import { Figures } from '../analytics/figures'
import type { LinkRow } from '../links/repo'

export const STATS_DAYS = 30
export const STATS_TOP = 10
const DAY = 86_400_000

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

export function createStatsRepo(db: Db) {
  const sqlite = db.$client
  const counters = sqlite.prepare('SELECT total_clicks AS total, unique_clicks AS uniq FROM links WHERE id = ?')
  // The page shows the link's all-time uniqueClicks, never a range's: the visitor sketches are not read.
  const dayRollups = sqlite.prepare(
    "SELECT bucket, clicks, bots, NULL AS visitors, dims FROM link_rollups WHERE link_id = ? AND grain = 'day' AND bucket >= ? AND bucket < ?",
  )

  return {
    /** Synchronous on purpose: answered on the redirect path without awaiting. Null when the link is gone. */
    publicStatsSync(linkId: string, now: number): PublicStats | null {
      const c = counters.get(linkId) as { total: number; uniq: number } | null
      if (!c) return null
      const from = Math.floor(now / DAY) * DAY - (STATS_DAYS - 1) * DAY
      const to = from + STATS_DAYS * DAY
      const days = new Array<number>(STATS_DAYS).fill(0)
      const all = new Figures()
      for (const r of dayRollups.all(linkId, from, to) as { bucket: number; clicks: number; bots: number; visitors: null; dims: string }[]) {
        days[(r.bucket - from) / DAY] = r.clicks
        all.addRow(r)
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

export type StatsRepo = ReturnType<typeof createStatsRepo>

/**
 * Rendered stats pages by link id, each kept `ttlMs` (60 s). An entry counts only for the very row it was
 * rendered from: every write to a link drops it from the link cache, the next request loads a new row
 * object, and the page is rendered afresh (title, slug or the switch itself changed). At most `max`
 * entries; the oldest eighth is dropped when full.
 */
export class StatsPageCache {
  private entries = new Map<string, { row: LinkRow; until: number; page: Response }>()

  constructor(
    private ttlMs = 60_000,
    private max = 1_000,
  ) {}

  /** A fresh copy of the cached page, or null. */
  get(row: LinkRow, now: number): Response | null {
    const hit = this.entries.get(row.id)
    if (!hit) return null
    if (hit.row !== row || hit.until <= now) {
      this.entries.delete(row.id)
      return null
    }
    return hit.page.clone() as Response
  }

  /** Keeps `page` (unread) and answers a copy to send. */
  set(row: LinkRow, now: number, page: Response): Response {
    this.entries.delete(row.id)
    if (this.entries.size >= this.max) {
      // Map iterates in insertion order: the first entries are the oldest.
      let n = Math.ceil(this.max / 8)
      for (const k of this.entries.keys()) {
        this.entries.delete(k)
        if (--n === 0) break
      }
    }
    this.entries.set(row.id, { row, until: now + this.ttlMs, page })
    return page.clone() as Response
  }

  get size() {
    return this.entries.size
  }
}
