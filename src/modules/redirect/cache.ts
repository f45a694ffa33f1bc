// The redirect path's view of links: an in-memory map by domain/slug, filled on a miss by one synchronous
// prepared read (never awaited) and dropped by every write to that link, so the very next request after a
// PATCH sees it. Each entry also carries the live counters the limits need: clicks served and the client
// addresses admitted, including what still sits in the click buffer.
import type { LinkRow, LinksRepo } from '../links/repo'

export interface CachedLink {
  row: LinkRow
  /** Clicks counted so far (stored + buffered + served since loaded). */
  served: number
  /** Keyed hashes of the addresses admitted under uniqueIpLimit; loaded on first need. */
  admitted: Set<string> | null
}

export interface PendingCounts {
  pendingClicks(linkId: string): number
  pendingAddresses(linkId: string): string[]
}

const MISSING = null

export class LinkCache {
  private entries = new Map<string, CachedLink | typeof MISSING>()

  constructor(
    private repo: LinksRepo,
    private loadAddresses: (linkId: string) => string[],
    private pending: PendingCounts,
    private max = 100_000,
  ) {}

  get(domain: string, slug: string): CachedLink | null {
    const key = `${domain}/${slug}`
    const hit = this.entries.get(key)
    if (hit !== undefined) return hit
    const row = this.repo.findByDomainSlugSync(domain, slug)
    const entry = row ? { row, served: row.totalClicks + this.pending.pendingClicks(row.id), admitted: null } : MISSING
    if (this.entries.size >= this.max) {
      // Drop the oldest eighth: Map iterates in insertion order.
      let n = Math.ceil(this.max / 8)
      for (const k of this.entries.keys()) {
        this.entries.delete(k)
        if (--n === 0) break
      }
    }
    this.entries.set(key, entry)
    return entry
  }

  /** The addresses admitted to the link, loaded once from the database plus what the buffer holds. */
  admitted(entry: CachedLink): Set<string> {
    if (!entry.admitted) entry.admitted = new Set([...this.loadAddresses(entry.row.id), ...this.pending.pendingAddresses(entry.row.id)])
    return entry.admitted
  }

  invalidate(domain: string, slug: string) {
    this.entries.delete(`${domain}/${slug}`)
  }

  clear() {
    this.entries.clear()
  }
}
