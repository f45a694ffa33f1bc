// Which link domain a request's Host names: one of the shared pool (LNK_SHORT_DOMAINS, host or host:port,
// exact), a loopback alias of a `localhost` pool domain (so `curl http://127.0.0.1:8080/<slug>` works with
// the default configuration), or a custom domain served now (asked on every request, so a domain served or
// dropped while running counts from the next request on). The common case costs one Map lookup.
import type { ServedDomain, ServedDomains } from '../domains'

/** Where a host's slugs are looked up: the link domain, and the custom domain's settings when it is one. */
export interface ShortHost {
  domain: string
  custom: ServedDomain | null
}

const LOCALHOST = /^localhost(:\d+)?$/

export class ShortHosts {
  /** Host as the Host header spells it (lower case) → its shared domain, made once. */
  private readonly shared = new Map<string, ShortHost>()

  constructor(
    pool: Iterable<string>,
    private readonly served: Pick<ServedDomains, 'get' | 'size'>,
  ) {
    for (const host of pool) {
      const entry: ShortHost = { domain: host.toLowerCase(), custom: null }
      this.shared.set(entry.domain, entry)
      const local = LOCALHOST.exec(entry.domain)
      if (!local) continue
      const port = local[1] ?? ''
      // An alias never takes the place of a pool domain of its own spelling.
      for (const alias of [`127.0.0.1${port}`, `[::1]${port}`]) if (!this.shared.has(alias)) this.shared.set(alias, entry)
    }
  }

  /** `host` lower-cased, as the handler reads it from the request; null when no short link answers on it. */
  resolve(host: string): ShortHost | null {
    const shared = this.shared.get(host)
    if (shared !== undefined) return shared
    if (this.served.size === 0) return null
    const custom = this.served.get(hostnameOf(host))
    return custom === undefined ? null : { domain: custom.domain, custom }
  }
}

/** `go.customer.test.:8443` → `go.customer.test`: proxies pass the port and may pass the root's dot. */
function hostnameOf(host: string): string {
  // An IPv6 literal ([::1]:8080) is never a custom domain; its colons are not a port's.
  let end = host.startsWith('[') ? host.length : host.lastIndexOf(':')
  if (end < 0) end = host.length
  if (host[end - 1] === '.') end--
  return end === host.length ? host : host.slice(0, end)
}
