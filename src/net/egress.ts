// Egress policy for outbound webhooks (contract sections 1 and 5): which addresses the service may dial.
//
// A target is judged on every address its host resolves to, never on the name: a public-looking hostname can
// resolve to 127.0.0.1, and a refusal has to hold for each answer, since the dialler may pick any of them.
// Addresses that carry an IPv4 address inside IPv6 (mapped ::ffff:a.b.c.d in either spelling, the deprecated
// compatible ::a.b.c.d, SIIT, NAT64 64:ff9b::/96 and 6to4 2002::/16) are classified by the IPv4 address they
// reach, because that is where the packets end up. Cloud metadata addresses are refused even when an
// operator's CIDR covers them: a LAN opt-in like 169.254.0.0/16 must not hand out instance credentials.
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { ipAllowed, parseRange } from '../platform/ip'

export interface EgressPolicy {
  allowHttp: boolean
  allowedCidrs: readonly string[]
}

export type AddressClass = 'public' | 'private' | 'loopback' | 'link_local' | 'cgnat' | 'multicast' | 'documentation' | 'metadata' | 'reserved' | 'unspecified'

export type Resolver = (host: string) => Promise<string[]>

type NonPublic = Exclude<AddressClass, 'public'>

// Most specific first: the first range that holds the address names its class.
const V4_TABLE: [string, NonPublic][] = [
  ['169.254.169.254/32', 'metadata'], // AWS, GCP, Azure, OCI, DigitalOcean, OpenStack
  ['169.254.170.2/32', 'metadata'], // AWS ECS task credentials
  ['169.254.170.23/32', 'metadata'], // AWS EKS pod identity agent
  ['100.100.100.200/32', 'metadata'], // Alibaba Cloud
  ['192.0.0.192/32', 'metadata'], // Oracle Cloud (classic)
  ['168.63.129.16/32', 'metadata'], // Azure wire server: public space, but answers only inside the host
  ['0.0.0.0/8', 'unspecified'], // "this network"; Linux dials 0.0.0.0 as the local host
  ['127.0.0.0/8', 'loopback'],
  ['10.0.0.0/8', 'private'],
  ['172.16.0.0/12', 'private'],
  ['192.168.0.0/16', 'private'],
  ['169.254.0.0/16', 'link_local'],
  ['100.64.0.0/10', 'cgnat'],
  ['192.0.2.0/24', 'documentation'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'], // includes the broadcast 255.255.255.255
  ['192.0.0.0/24', 'reserved'], // IETF protocol assignments
  ['192.88.99.0/24', 'reserved'], // retired 6to4 relay anycast
  ['198.18.0.0/15', 'reserved'], // benchmarking
]

const V6_TABLE: [string, NonPublic][] = [
  ['fd00:ec2::254/128', 'metadata'], // AWS IMDS over IPv6
  ['fd00:ec2::23/128', 'metadata'], // AWS EKS pod identity agent over IPv6
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'], // local-use NAT64 (RFC 8215): the embedding depends on the site
  ['100::/64', 'reserved'], // discard-only
  ['2001::/23', 'reserved'], // IETF assignments: Teredo (IPv4 obfuscated inside), benchmarking, ORCHID
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'private'], // unique local
  ['fec0::/10', 'private'], // deprecated site-local
  ['fe80::/10', 'link_local'],
  ['ff00::/8', 'multicast'],
]

interface ParsedRange {
  cidr: string
  kind: NonPublic
  v6: boolean
  base: bigint
  mask: bigint
}

function compile(table: [string, NonPublic][]): ParsedRange[] {
  return table.map(([cidr, kind]) => {
    const range = parseRange(cidr)
    if (!range) throw new Error(`bad built-in range ${cidr}`)
    return { cidr, kind, ...range }
  })
}

const V4_RANGES = compile(V4_TABLE)
const V6_RANGES = compile(V6_TABLE)
const GLOBAL_UNICAST_V6 = parseRange('2000::/3')!

const inRange = (value: bigint, r: { base: bigint; mask: bigint }) => (value & r.mask) === r.base

const v4Text = (n: bigint) => [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join('.')

/** The IPv4 address an IPv6 address delivers to, when it embeds one. */
function embeddedV4(v: bigint): bigint | null {
  const hi96 = v >> 32n
  if (hi96 === 0xffffn) return v & 0xffffffffn // ::ffff:a.b.c.d, mapped
  if (hi96 === 0xffff0000n) return v & 0xffffffffn // ::ffff:0:a.b.c.d, SIIT translated
  if (hi96 === 0n && v > 1n) return v & 0xffffffffn // ::a.b.c.d, deprecated compatible form
  if (hi96 === 0x64ff9b0000000000000000n) return v & 0xffffffffn // NAT64 well-known prefix
  if (v >> 112n === 0x2002n) return (v >> 80n) & 0xffffffffn // 6to4: 2002:AABB:CCDD::/48
  return null
}

export interface AddressInfo {
  kind: AddressClass
  /** The built-in range that decided it, e.g. 127.0.0.0/8; null for public addresses. */
  range: string | null
  /** The IPv4 address carried inside an IPv6 one, when that decided the class. */
  via: string | null
}

/** Classification with the range that decided it, for messages an operator can act on. */
export function describeAddress(ip: string): AddressInfo {
  const parsed = parseRange(ip.trim())
  // Not an address at all: refuse rather than guess (callers only pass resolver answers and URL hosts).
  if (!parsed || parsed.mask !== (parsed.v6 ? (1n << 128n) - 1n : 0xffffffffn)) {
    return { kind: 'reserved', range: null, via: null }
  }
  let value = parsed.base
  let v6 = parsed.v6
  let via: string | null = null
  if (v6) {
    const v4 = embeddedV4(value)
    if (v4 !== null) {
      value = v4
      v6 = false
      via = v4Text(v4)
    }
  }
  const table = v6 ? V6_RANGES : V4_RANGES
  const hit = table.find((r) => inRange(value, r))
  if (hit) return { kind: hit.kind, range: hit.cidr, via }
  // Outside 2000::/3 nothing is allocated for global unicast; treat the rest as reserved.
  if (v6 && !inRange(value, GLOBAL_UNICAST_V6)) return { kind: 'reserved', range: '::/0 outside 2000::/3', via }
  return { kind: 'public', range: null, via }
}

export function classifyAddress(ip: string): AddressClass {
  return describeAddress(ip).kind
}

/** Public: yes. Metadata: never. Anything else only inside the operator's allowedCidrs. */
export function addressAllowed(ip: string, policy: EgressPolicy): boolean {
  const info = describeAddress(ip)
  if (info.kind === 'public') return true
  if (info.kind === 'metadata' || !policy.allowedCidrs.length) return false
  // ipAllowed answers true for an empty list, hence the guard above. An embedded IPv4 address counts under
  // the operator's IPv4 ranges as well as the IPv6 ranges that spell it.
  return ipAllowed(ip, policy.allowedCidrs) || (info.via !== null && ipAllowed(info.via, policy.allowedCidrs))
}

const ARTICLE: Record<AddressClass, string> = {
  public: 'a public address',
  private: 'a private address',
  loopback: 'a loopback address',
  link_local: 'a link-local address',
  cgnat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  documentation: 'a documentation address',
  metadata: 'a cloud metadata address',
  reserved: 'a reserved address',
  unspecified: 'an unspecified address',
}

/** Why an address is refused, as one sentence naming the address and the range. */
export function refusalReason(ip: string, resolvedFrom: string | null): string {
  const info = describeAddress(ip)
  const subject = resolvedFrom ? `${resolvedFrom} resolves to ${ip},` : `${ip} is`
  const range = info.range ? ` (${info.range}${info.via ? `, carrying ${info.via}` : ''})` : ''
  if (info.kind === 'metadata') return `${subject} ${ARTICLE.metadata}${range}, which is never allowed`
  return `${subject} ${ARTICLE[info.kind]}${range}; set LNK_WEBHOOK_ALLOWED_CIDRS to allow it`
}

export async function defaultResolver(host: string): Promise<string[]> {
  const answers = await lookup(host, { all: true, family: 0, verbatim: true })
  return answers.map((a) => a.address)
}

export type CheckResult = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string }

/** The URL's host without IPv6 brackets; the WHATWG parser has already turned 0x7f.1 into 127.0.0.1. */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '')
}

export async function checkUrl(url: string, policy: EgressPolicy, resolver: Resolver = defaultResolver): Promise<CheckResult> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { ok: false, reason: 'is not an absolute URL' }
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return { ok: false, reason: `uses ${parsed.protocol.slice(0, -1)}; only https is allowed` }
  }
  if (parsed.protocol === 'http:' && !policy.allowHttp) {
    return { ok: false, reason: 'uses plain http; use https, or set LNK_WEBHOOK_ALLOW_HTTP to allow it' }
  }
  // Credentials in a URL end up in logs and delivery records; headers are the place for them.
  if (parsed.username || parsed.password) return { ok: false, reason: 'contains credentials; send them as a custom header' }
  const host = urlHost(parsed)
  if (!host) return { ok: false, reason: 'has no host' }
  const literal = isIP(host) !== 0
  let addresses: string[]
  if (literal) addresses = [host]
  else {
    try {
      addresses = [...new Set(await resolver(host))]
    } catch (err) {
      const code = (err as { code?: string }).code ?? (err instanceof Error ? err.message : String(err))
      return { ok: false, reason: `${host} could not be resolved (${code})` }
    }
    if (!addresses.length) return { ok: false, reason: `${host} resolves to no address` }
  }
  for (const address of addresses) {
    if (!addressAllowed(address, policy)) return { ok: false, reason: refusalReason(address, literal ? null : host) }
  }
  return { ok: true, url: parsed, addresses }
}
