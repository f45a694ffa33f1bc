// The redirect path's view of links: an in-memory map by domain/slug, filled on a miss by one synchronous
// prepared read (never awaited) and dropped by every write to that link, so the very next request after a
// PATCH sees it. Each entry also carries the live counters the limits need: clicks served and the client
// addresses admitted, including what still sits in the click buffer.
import type { PendingCounts } from '../clicks/click-buffer'
import type { LinksRepo, RedirectLink } from '../links/repo'
import { LruCache } from '../../platform/lru'

export interface CachedLink {
  row: RedirectLink
  /** Clicks counted so far (stored + buffered + served since loaded). */
  served: number
  /** Keyed hashes of the addresses admitted under uniqueIpLimit; loaded on first need. */
  admitted: Set<string> | null
}

const MISSING = null

export class LinkCache {
  private readonly entries: LruCache<CachedLink | typeof MISSING>
  /**
   * Live counters of links dropped by a write (PATCH), by link id, taken over by the next load: the
   * database alone lags behind what was served (the buffer may be mid-write), the counters do not.
   */
  private carry = new Map<string, Pick<CachedLink, 'served' | 'admitted'>>()

  constructor(
    private repo: LinksRepo,
    private loadAddresses: (linkId: string) => string[],
    private pending: PendingCounts,
    max = 100_000,
  ) {
    this.entries = new LruCache(max)
  }

  get(domain: string, slug: string): CachedLink | null {
    const key = `${domain}/${slug}`
    // peek: the hot path only reads; entries are forgotten in the order they were loaded.
    const hit = this.entries.peek(key)
    if (hit !== undefined) return hit
    const row = this.repo.findRedirectSync(domain, slug)
    let entry: CachedLink | typeof MISSING = MISSING
    if (row) {
      const carried = this.carry.get(row.id)
      this.carry.delete(row.id)
      entry = carried ? { row, ...carried } : { row, served: row.totalClicks + this.pending.pendingClicks(row.id), admitted: null }
    }
    this.entries.set(key, entry)
    return entry
  }

  /**
   * Loads links in id order, a page at a time between requests, until the cache is full or every link is
   * in. One sequential read costs a few µs a link; a miss under load costs tens (the writer's commits keep
   * emptying the connection's page cache, so each miss reads its pages again). Answers how many were loaded.
   */
  async prefill(pageSize = 5_000): Promise<number> {
    let after = ''
    let loaded = 0
    while (this.entries.size < this.entries.maxEntries) {
      const page = this.repo.redirectLinksSync(after, Math.min(pageSize, this.entries.maxEntries - this.entries.size))
      for (const row of page) {
        const key = `${row.domain}/${row.slug}`
        // A link a visit or a write touched meanwhile is already right (or rightly absent).
        if (this.entries.peek(key) !== undefined || this.carry.has(row.id)) continue
        this.entries.set(key, { row, served: row.totalClicks + this.pending.pendingClicks(row.id), admitted: null })
        loaded++
      }
      if (page.length < pageSize) break
      after = page.at(-1)!.id
      await new Promise((resolve) => setImmediate(resolve))
    }
    return loaded
  }

  /** The addresses admitted to the link, loaded once from the database plus what the buffer holds. */
  admitted(entry: CachedLink): Set<string> {
    if (!entry.admitted) entry.admitted = new Set([...this.loadAddresses(entry.row.id), ...this.pending.pendingAddresses(entry.row.id)])
    return entry.admitted
  }

  invalidate(domain: string, slug: string) {
    const key = `${domain}/${slug}`
    const entry = this.entries.peek(key)
    if (entry) {
      if (this.carry.size >= 10_000) this.carry.clear()
      this.carry.set(entry.row.id, { served: entry.served, admitted: entry.admitted })
    }
    this.entries.delete(key)
  }

  /** Drops the cached links of a domain whose links may all have changed at once (archived with it). */
  invalidateDomain(domain: string, slugs: Iterable<string>) {
    for (const slug of slugs) this.invalidate(domain, slug)
  }

  clear() {
    this.entries.clear()
    this.carry.clear()
  }
}
