// The redirect's reads on SQLite, prepared once and answered without awaiting (port.ts, RedirectSyncReads):
// the same answers as repo-stats.ts and repo-domain-slugs.ts give on either engine.
import type { Db } from '../../db/client'
import type { RedirectSyncReads } from './port'
import { statsPage, statsWindow, type DayRollup } from './repo-stats'

export function createRedirectSyncReads(db: Db): RedirectSyncReads {
  const sqlite = db.$client
  const counters = sqlite.prepare('SELECT total_clicks AS total, unique_clicks AS uniq FROM links WHERE id = ?')
  // The page shows the link's all-time uniqueClicks, never a range's: the visitor sketches are not read.
  const dayRollups = sqlite.prepare("SELECT bucket, clicks, bots, dims FROM link_rollups WHERE link_id = ? AND grain = 'day' AND bucket >= ? AND bucket < ?")
  // Served by the (domain, slug) unique index, in its order: bytewise.
  const slugs = sqlite.prepare('SELECT slug FROM links WHERE domain = ?')
  return {
    publicStatsSync(linkId, now) {
      const c = counters.get(linkId) as { total: number; uniq: number } | null
      if (!c) return null
      const { from, to } = statsWindow(now)
      return statsPage(c, dayRollups.all(linkId, from, to) as DayRollup[], from)
    },
    slugsSync: (domain) => (slugs.all(domain) as { slug: string }[]).map((r) => r.slug),
  }
}
