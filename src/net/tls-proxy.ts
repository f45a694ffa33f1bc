// Which socket peers are the TLS proxy (Caddy with LNK_TLS_MODE=caddy): they may ask /internal/tls/ask, and
// their X-Forwarded-Proto: https is believed as evidence that a domain's certificate works. Loopback always
// is; LNK_TLS_ASK_ALLOWED_CIDRS adds the ranges of a proxy on another machine (one Caddy in front of several
// nodes). Only the socket address is judged here, never a header a client could write.
//
// Loopback is 127.0.0.0/8 and ::1 exactly (an IPv4-mapped ::ffff:127.x is the IPv4 address it carries).
// egress.ts's classification is not used for this: it counts IPv6 addresses that merely embed 127.x (6to4
// 2002:7f00::/24, NAT64, the deprecated ::a.b.c.d form) as loopback, which is right for refusing to dial them
// and wrong for trusting them as a peer: a packet can arrive from such an address over the network.
import { parseRange } from '../platform/ip'

const LOOPBACK = ['127.0.0.0/8', '::1/128']

type Range = NonNullable<ReturnType<typeof parseRange>>

/** A test of socket addresses against loopback and `allowed` (validated by the configuration), parsed once. */
export function tlsProxyPeers(allowed: readonly string[]): (address: string | null) => boolean {
  const ranges: Range[] = []
  for (const cidr of [...LOOPBACK, ...allowed]) {
    const range = parseRange(cidr)
    if (!range) throw new Error(`"${cidr}" is not an IP address or CIDR`)
    ranges.push(range)
  }
  return (address) => {
    if (!address) return false
    const peer = parseRange(address)
    // A range is no peer address ("10.0.0.0/8" as a forwarded entry, say): only a single address matches.
    if (!peer || peer.mask !== (peer.v6 ? (1n << 128n) - 1n : 0xffffffffn)) return false
    return ranges.some((r) => r.v6 === peer.v6 && (peer.base & r.mask) === r.base)
  }
}
