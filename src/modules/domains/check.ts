// One look at a domain's DNS: the TXT proof, the CNAME and the addresses, and, when the records alone do not
// show the domain pointing here, a plain-HTTP request for /.well-known/lnk/<token> that only this instance
// answers correctly (it works behind proxies such as Cloudflare's, whose addresses are not ours).
import { createHmac } from 'node:crypto'
import { sendOutbound } from '../../net/outbound'
import type { Config } from '../../platform/config'
import { constantTimeEqual } from '../../platform/random'
import type { DnsResolver, Lookup } from './dns'
import type { SeenRecords } from './port'
import { CHALLENGE_PREFIX, pointingByRecords } from './verdict'

export const WELL_KNOWN_PREFIX = '/.well-known/lnk/'
const HTTP_CHECK_TIMEOUT_MS = 5000

/** What /.well-known/lnk/<token> answers: a keyed hash of the token, so an echo of the path proves nothing. */
export const proofOf = (key: Buffer, token: string) => createHmac('sha256', key).update(`domain-check|${token}`).digest('base64url')

export interface CheckDeps {
  config: Pick<Config, 'domainCnameTarget' | 'domainIps' | 'domainCheckPort' | 'webhookAllowedCidrs'>
  dns: DnsResolver
  /** Key of the proof the well-known path answers. */
  proofKey: Buffer
}

export const httpCheckUrl = (config: CheckDeps['config'], domain: string, token: string) =>
  `http://${domain}${config.domainCheckPort === 80 ? '' : `:${config.domainCheckPort}`}${WELL_KNOWN_PREFIX}${token}`

export async function lookUp(deps: CheckDeps, domain: string, token: string): Promise<SeenRecords> {
  const errors: string[] = []
  const values = (name: string, lookup: Lookup) => {
    if ('values' in lookup) return lookup.values
    errors.push(`${name}: ${lookup.error}`)
    return null
  }
  const [txt, cname, a, aaaa] = await Promise.all([
    deps.dns.lookup(`${CHALLENGE_PREFIX}${domain}`, 'TXT'),
    deps.dns.lookup(domain, 'CNAME'),
    deps.dns.lookup(domain, 'A'),
    deps.dns.lookup(domain, 'AAAA'),
  ])
  const seen: SeenRecords = {
    txt: values(`TXT ${CHALLENGE_PREFIX}${domain}`, txt),
    cname: values(`CNAME ${domain}`, cname),
    a: values(`A ${domain}`, a),
    aaaa: values(`AAAA ${domain}`, aaaa),
    http: null,
    errors,
  }
  const addresses = [...(seen.a ?? []), ...(seen.aaaa ?? [])]
  if (addresses.length && pointingByRecords(seen, deps.config) === null) seen.http = await reaches(deps, domain, token, addresses)
  return seen
}

/** The HTTP check, dialling the addresses our resolver gave (never the system's view), SSRF rules applied. */
async function reaches(deps: CheckDeps, domain: string, token: string, addresses: string[]): Promise<NonNullable<SeenRecords['http']>> {
  const result = await sendOutbound({
    url: httpCheckUrl(deps.config, domain, token),
    method: 'GET',
    headers: { 'user-agent': 'lnk-domain-check/1' },
    timeoutMs: HTTP_CHECK_TIMEOUT_MS,
    // Plain http by design (no certificate exists yet); private ranges only where the operator opted in.
    policy: { allowHttp: true, allowedCidrs: deps.config.webhookAllowedCidrs },
    resolver: async () => addresses,
  })
  if (result.error && result.status === null) return { reached: false, detail: result.error }
  if (result.status !== 200) return { reached: false, detail: `answered ${result.status}, not this instance's proof` }
  const reached = constantTimeEqual(result.body.trim(), proofOf(deps.proofKey, token))
  return { reached, detail: reached ? `reached this instance at ${result.address}` : `another server answered at ${result.address}` }
}
