// The redirect's own reads of storage, in plain types: the public stats page's figures and the slugs of a
// changed domain (repo-stats.ts and repo-domain-slugs.ts answer them on either engine; repo-sqlite.ts adds the
// synchronous reads SQLite serves the redirect path with). Links themselves come from the links module.

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
  /** The page's figures for the link at `now`; null when the link is gone. */
  publicStats(linkId: string, now: number): Promise<PublicStats | null>
}

export interface DomainSlugsRepo {
  /** The slugs of every link on the domain, archived ones included, in byte order. */
  slugs(domain: string): Promise<string[]>
}

/**
 * The same reads on SQLite, answered without awaiting: the stats page is rendered on the redirect path, and a
 * changed domain's links are dropped from the link cache in the bus listener, before the next request is
 * answered. PostgreSQL has none of these; there the redirect awaits the repos above.
 */
export interface RedirectSyncReads {
  publicStatsSync(linkId: string, now: number): PublicStats | null
  slugsSync(domain: string): string[]
}
