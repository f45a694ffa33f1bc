// Rendered public stats pages, kept a minute per link, so a popular stats page costs the database at most
// two small reads a minute.
import type { RedirectLink } from '../links'
import { LruCache } from '../../platform/lru'
import { MINUTE_MS } from '../../platform/time'

/**
 * Rendered stats pages by link id, each kept `ttlMs` (60 s). An entry counts only while the link's row
 * shows what the page was rendered from: every write to a link drops it from the link cache, the next
 * request loads a new row, and a changed title, domain or slug renders the page afresh (the switch itself
 * is checked before the page is looked up). A reload of an unchanged row (PostgreSQL's link cache trusts a
 * row 30 s) keeps the page. At most `max` entries; the oldest eighth is dropped when full.
 */
export class StatsPageCache {
  private readonly entries: LruCache<{ row: RedirectLink; until: number; page: Response }>

  constructor(
    private ttlMs = MINUTE_MS,
    max = 1_000,
  ) {
    this.entries = new LruCache(max)
  }

  /** A fresh copy of the cached page, or null. */
  get(row: RedirectLink, now: number): Response | null {
    // peek: entries are forgotten in the order they were rendered, used or not.
    const hit = this.entries.peek(row.id)
    if (!hit) return null
    if (!showsTheSame(hit.row, row) || hit.until <= now) {
      this.entries.delete(row.id)
      return null
    }
    return hit.page.clone() as Response
  }

  /** Keeps `page` (unread) and answers a copy to send. */
  set(row: RedirectLink, now: number, page: Response): Response {
    this.entries.set(row.id, { row, until: now + this.ttlMs, page })
    return page.clone() as Response
  }

  /** Forgets every page (notices from other nodes may have been lost). */
  clear() {
    this.entries.clear()
  }

  get size() {
    return this.entries.size
  }
}

/** Whether a page rendered from `a` is the page `b` would give: the figures come from the stats reads. */
function showsTheSame(a: RedirectLink, b: RedirectLink): boolean {
  return a === b || (a.title === b.title && a.domain === b.domain && a.slug === b.slug)
}
