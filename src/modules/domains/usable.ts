// Where a workspace may put new short links and pages: a domain of the shared pool, or one of its own
// custom domains that is served and accepts new links.
import type { Config } from '../../platform/config'
import { toHostname } from './hostname'
import type { ServedDomains } from './served'

/** The domain as stored (lower case, punycode), and whether the workspace may use it for something new. */
export function usableDomain(config: Pick<Config, 'shortDomains'>, served: Pick<ServedDomains, 'get'>, workspaceId: string, domain: string | undefined) {
  const chosen = domain === undefined ? config.shortDomains[0]! : (toHostname(domain) ?? domain.toLowerCase())
  if (config.shortDomains.includes(chosen)) return { domain: chosen, usable: true }
  const custom = served.get(chosen)
  return { domain: chosen, usable: custom !== undefined && custom !== null && custom.workspaceId === workspaceId && custom.acceptsNewLinks }
}

/** Whether the key's scope filters (domains) cover `domain`: no domain filter covers every domain. */
export function inDomainScope(caller: { key: { scopeFilters?: { domains?: string[] } | null } }, domain: string) {
  const only = caller.key.scopeFilters?.domains
  return !only?.length || only.includes(domain)
}

export const unusableDomainMessage = (config: Pick<Config, 'shortDomains'>, domain: string | undefined) =>
  `"${domain}" is not a short domain of this service or a verified domain of this workspace; shared domains: ${config.shortDomains.join(', ')}`
