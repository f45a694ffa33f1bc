// DNS lookups for domain checks through one injectable resolver: the system's, or the servers of
// LNK_DNS_SERVERS (operators pin a resolver; black-box tests point a running server at their own).
import { Resolver } from 'node:dns/promises'

export type RecordType = 'TXT' | 'CNAME' | 'A' | 'AAAA'

/** The values found ([] when the name has no such record), or why the lookup could not tell. */
export type Lookup = { values: string[] } | { error: string }

export interface DnsResolver {
  lookup(name: string, type: RecordType): Promise<Lookup>
}

/** Both mean "no such record": NXDOMAIN and a name without records of the type. */
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA'])

const trimDot = (name: string) => name.replace(/\.$/, '').toLowerCase()

export function createDnsResolver(servers: string[], timeoutMs = 3000): DnsResolver {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 })
  if (servers.length) resolver.setServers(servers)
  const ask: Record<RecordType, (name: string) => Promise<string[]>> = {
    TXT: async (name) => (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')),
    CNAME: async (name) => (await resolver.resolveCname(name)).map(trimDot),
    A: (name) => resolver.resolve4(name),
    AAAA: async (name) => (await resolver.resolve6(name)).map((ip) => ip.toLowerCase()),
  }
  return {
    async lookup(name, type) {
      try {
        return { values: await ask[type](name) }
      } catch (err) {
        const code = (err as { code?: string }).code ?? (err as Error).message
        return NO_RECORD.has(code) ? { values: [] } : { error: code }
      }
    },
  }
}
