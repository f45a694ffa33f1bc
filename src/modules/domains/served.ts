// The custom domains this instance answers on right now, in memory: the redirect path asks it on every
// request and the TLS ask endpoint answers from it, so neither touches the database. The domains area keeps
// it true (filled at start, changed after each commit that changes whether or how a domain is served).
export interface ServedDomain {
  id: string
  /** The hostname, lower case, punycode, no port, no trailing dot. */
  domain: string
  workspaceId: string
  /** Where `/` on the domain goes (301), or null for a minimal page. */
  rootRedirectUrl: string | null
  /** Where an unknown slug goes (302), or null for the 404 page. */
  notFoundUrl: string | null
  /** Where an expired or used-up link without its own fallback goes (302), or null for the 410 page. */
  expiredUrl: string | null
  /** Verified with DNS pointing here: new links may be made on it (a misconfigured one is only served). */
  acceptsNewLinks: boolean
}

export class ServedDomains {
  private readonly byHost = new Map<string, ServedDomain>()
  private readonly httpsSeen = new Set<string>()

  /**
   * @param onFirstHttps told once per domain when a request for it is seen arriving over TLS through the
   * local proxy (LNK_TLS_MODE=caddy): the evidence that its certificate works.
   */
  constructor(private readonly onFirstHttps: (domain: ServedDomain) => void = () => {}) {}

  /** The served domain of a hostname (lower case, no port), if any. */
  get(hostname: string): ServedDomain | undefined {
    return this.byHost.get(hostname)
  }

  get size(): number {
    return this.byHost.size
  }

  all(): ServedDomain[] {
    return [...this.byHost.values()]
  }

  set(domain: ServedDomain): void {
    this.byHost.set(domain.domain, domain)
  }

  delete(hostname: string): void {
    this.byHost.delete(hostname)
    this.httpsSeen.delete(hostname)
  }

  /** The redirect path calls this for a request on a served domain that came over TLS through the proxy. */
  sawHttps(hostname: string): void {
    if (this.httpsSeen.has(hostname)) return
    const domain = this.byHost.get(hostname)
    if (!domain) return
    this.httpsSeen.add(hostname)
    this.onFirstHttps(domain)
  }
}
