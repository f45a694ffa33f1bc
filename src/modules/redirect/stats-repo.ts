// The public stats page's data (`{short domain}/{slug}+`): the link's counters and, over the last 30 UTC
// days, people's clicks per day, top countries and top referrer hosts. It is read on the redirect path, so
// like the link lookup it is plain SQL prepared once and synchronous (range reads of clicks_link_time_idx,
// bots filtered out). Rendered pages are kept in memory for a minute per link (StatsPageCache), so a
// popular stats page costs the database at most four small reads a minute.
import type { Db } from '../../db/client'
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
  // Integer millisecond arithmetic: portable, and the same bucketing in SQLite and PostgreSQL.
  const perDay = sqlite.prepare(
    'SELECT (clicked_at - ?) / 86400000 AS day, COUNT(*) AS n FROM clicks WHERE link_id = ? AND clicked_at >= ? AND clicked_at < ? AND is_bot = 0 GROUP BY (clicked_at - ?) / 86400000',
  )
  const topCountries = sqlite.prepare(
    `SELECT COALESCE(country, '') AS k, COUNT(*) AS n FROM clicks WHERE link_id = ? AND clicked_at >= ? AND clicked_at < ? AND is_bot = 0 GROUP BY COALESCE(country, '') ORDER BY n DESC, k LIMIT ${STATS_TOP}`,
  )
  const topReferrers = sqlite.prepare(
    `SELECT COALESCE(referrer_host, '') AS k, COUNT(*) AS n FROM clicks WHERE link_id = ? AND clicked_at >= ? AND clicked_at < ? AND is_bot = 0 GROUP BY COALESCE(referrer_host, '') ORDER BY n DESC, k LIMIT ${STATS_TOP}`,
  )

  return {
    /** Synchronous on purpose: answered on the redirect path without awaiting. Null when the link is gone. */
    publicStatsSync(linkId: string, now: number): PublicStats | null {
      const c = counters.get(linkId) as { total: number; uniq: number } | null
      if (!c) return null
      const from = Math.floor(now / DAY) * DAY - (STATS_DAYS - 1) * DAY
      const to = from + STATS_DAYS * DAY
      const days = new Array<number>(STATS_DAYS).fill(0)
      for (const r of perDay.all(from, linkId, from, to, from) as { day: number; n: number }[]) {
        if (r.day >= 0 && r.day < STATS_DAYS) days[r.day] = r.n
      }
      const top = (rows: { k: string; n: number }[]) => rows.map((r) => ({ key: r.k === '' ? null : r.k, clicks: r.n }))
      return {
        totalClicks: c.total,
        uniqueClicks: c.uniq,
        from,
        days,
        countries: top(topCountries.all(linkId, from, to) as { k: string; n: number }[]).map((r) => ({ country: r.key, clicks: r.clicks })),
        referrers: top(topReferrers.all(linkId, from, to) as { k: string; n: number }[]).map((r) => ({ host: r.key, clicks: r.clicks })),
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
