// The redirect path's view of links: an in-memory map by domain/slug, dropped by every write to that link,
// so the very next request after a PATCH sees it. On SQLite a miss is filled by one synchronous prepared
// read (never awaited); on PostgreSQL a miss answers a Promise, and concurrent misses of one key share one
// read. Each entry also carries the live counters the limits need: clicks served and the client addresses
// admitted, including what still sits in the click buffer.
import type { Clock } from '../../platform/clock'
import type { PendingCounts } from '../clicks'
import type { LinksRepo, RedirectLink, RedirectReads } from '../links'
import { LruCache } from '../../platform/lru'

export interface CachedLink {
  row: RedirectLink
  /** Clicks counted so far (stored + buffered + served since loaded). */
  clicksSoFar: number
  /** Keyed hashes of the addresses admitted under uniqueIpLimit; loaded on first need. */
  admitted: Set<string> | null
  /** An address load under way (PostgreSQL), shared by the visits that wait for it. */
  admitting?: Promise<Set<string>>
}

/** A slot of the map: a link, or a known miss; `until` is when it expires (Infinity: never). */
interface Slot {
  link: CachedLink | null
  until: number
}

/** SQLite's known miss: one shared object, since nothing there expires. */
const MISSING: Slot = { link: null, until: Infinity }

/** A read under way, and whether a write dropped its key meanwhile (its answer is then not kept). */
interface Loading {
  promise: Promise<CachedLink | null>
  stale: boolean
}

export interface LinkCacheOptions {
  max?: number
  /** How long an entry is kept (0: until dropped). A backstop for a lost notice from another node. */
  ttlMs?: number
  clock?: Pick<Clock, 'now'>
}

export class LinkCache {
  private readonly entries: LruCache<Slot>
  /**
   * Live counters of links dropped by a write (PATCH), by link id, taken over by the next load: the
   * database alone lags behind what was served (the buffer may be mid-write), the counters do not.
   */
  private carry = new Map<string, Pick<CachedLink, 'clicksSoFar' | 'admitted'>>()
  private loading = new Map<string, Loading>()
  /**
   * Domains whose links changed while their slugs are still being read (PostgreSQL), each with the slugs
   * visited since: a key of such a domain is dropped on its first visit, so none is served stale meanwhile.
   */
  private readonly changing = new Map<string, Set<string>>()
  private readonly ttlMs: number
  private readonly clock: Pick<Clock, 'now'>

  /**
   * `repo` reads links awaited; `reads`, where the engine has them (SQLite), without awaiting, and are then
   * the only reads used.
   */
  constructor(
    private repo: Pick<LinksRepo, 'findRedirect' | 'redirectLinks'>,
    private reads: RedirectReads | null,
    private loadAddresses: (linkId: string) => string[] | Promise<string[]>,
    private pending: PendingCounts,
    options: LinkCacheOptions = {},
  ) {
    this.entries = new LruCache(options.max ?? 100_000)
    this.ttlMs = options.ttlMs ?? 0
    this.clock = options.clock ?? Date
  }

  /** The link (or null), synchronously on a hit and on SQLite; a Promise on a PostgreSQL miss. */
  get(domain: string, slug: string): CachedLink | null | Promise<CachedLink | null> {
    const key = `${domain}/${slug}`
    if (this.changing.size) {
      const visited = this.changing.get(domain)
      if (visited && !visited.has(slug)) {
        visited.add(slug)
        this.invalidate(domain, slug)
      }
    }
    // peek: the hot path only reads; entries are forgotten in the order they were loaded.
    const hit = this.entries.peek(key)
    if (hit !== undefined && (hit.until === Infinity || hit.until > this.clock.now())) return hit.link
    const reads = this.reads
    if (reads) return this.keep(key, reads.findRedirectSync(domain, slug))
    const under = this.loading.get(key)
    if (under) return under.promise
    const load: Loading = {
      stale: false,
      promise: this.repo.findRedirect(domain, slug).then(
        (row) => {
          this.loading.delete(key)
          if (!load.stale) return this.keep(key, row)
          // Written meanwhile: the next visit reads again; this one gets what was read.
          return row ? this.fresh(row) : null
        },
        (err) => {
          this.loading.delete(key)
          throw err
        },
      ),
    }
    this.loading.set(key, load)
    return load.promise
  }

  private fresh(row: RedirectLink): CachedLink {
    return { row, clicksSoFar: row.totalClicks + this.pending.pendingClicks(row.id), admitted: null }
  }

  private slot(link: CachedLink | null): Slot {
    return this.ttlMs === 0 ? (link === null ? MISSING : { link, until: Infinity }) : { link, until: this.clock.now() + this.ttlMs }
  }

  private keep(key: string, row: RedirectLink | undefined): CachedLink | null {
    let link: CachedLink | null = null
    if (row) {
      const carried = this.carry.get(row.id)
      this.carry.delete(row.id)
      link = carried ? { row, ...carried } : this.fresh(row)
    }
    this.entries.set(key, this.slot(link))
    return link
  }

  /**
   * Loads links in id order, a page at a time between requests, until the cache is full or every link is
   * in. One sequential read costs a few µs a link; a miss under load costs tens (the writer's commits keep
   * emptying the connection's page cache, so each miss reads its pages again). Answers how many were loaded.
   */
  async prefill(pageSize = 5_000): Promise<number> {
    let after = ''
    let loaded = 0
    const { reads } = this
    while (this.entries.size < this.entries.maxEntries) {
      const want = Math.min(pageSize, this.entries.maxEntries - this.entries.size)
      const page = reads ? reads.redirectLinksSync(after, want) : await this.repo.redirectLinks(after, want)
      for (const row of page) {
        const key = `${row.domain}/${row.slug}`
        // A link a visit or a write touched meanwhile is already right (or rightly absent).
        if (this.entries.peek(key) !== undefined || this.carry.has(row.id) || this.loading.has(key)) continue
        this.entries.set(key, this.slot(this.fresh(row)))
        loaded++
      }
      if (page.length < pageSize) break
      after = page.at(-1)!.id
      await new Promise((resolve) => setImmediate(resolve))
    }
    return loaded
  }

  /**
   * The addresses admitted to the link, loaded once from the database plus what the buffer holds:
   * synchronously on SQLite, a Promise while PostgreSQL's read is under way (shared by every visit).
   */
  admitted(entry: CachedLink): Set<string> | Promise<Set<string>> {
    if (entry.admitted) return entry.admitted
    const stored = entry.admitting ?? this.loadAddresses(entry.row.id)
    const withPending = (list: Iterable<string>) => (entry.admitted ??= new Set([...list, ...this.pending.pendingAddresses(entry.row.id)]))
    if (!(stored instanceof Promise)) return withPending(stored)
    entry.admitting ??= stored.then(withPending).finally(() => (entry.admitting = undefined))
    return entry.admitting
  }

  invalidate(domain: string, slug: string) {
    const key = `${domain}/${slug}`
    const slot = this.entries.peek(key)
    if (slot?.link) {
      if (this.carry.size >= 10_000) this.carry.clear()
      this.carry.set(slot.link.row.id, { clicksSoFar: slot.link.clicksSoFar, admitted: slot.link.admitted })
    }
    this.entries.delete(key)
    const load = this.loading.get(key)
    if (load) {
      load.stale = true
      this.loading.delete(key)
    }
  }

  /** Drops the cached links of a domain whose links may all have changed at once (archived with it). */
  invalidateDomain(domain: string, slugs: Iterable<string>) {
    for (const slug of slugs) this.invalidate(domain, slug)
  }

  /**
   * invalidateDomain() once the domain's slugs are read (PostgreSQL reads them asynchronously). From now on
   * each of its links is read again on its first visit; the slugs then drop the others, not those.
   */
  async invalidateDomainOnceRead(domain: string, slugs: Promise<Iterable<string>>): Promise<void> {
    const visited = new Set<string>()
    // A read under way meanwhile is dropped like a cached link: the first visit invalidates its key.
    this.changing.set(domain, visited)
    try {
      for (const slug of await slugs) if (!visited.has(slug)) this.invalidate(domain, slug)
    } finally {
      if (this.changing.get(domain) === visited) this.changing.delete(domain)
    }
  }

  clear() {
    this.entries.clear()
    this.carry.clear()
    for (const load of this.loading.values()) load.stale = true
    this.loading.clear()
  }
}
