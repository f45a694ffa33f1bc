// IP addresses and ranges, IPv4 and IPv6: an address or CIDR as a numeric range, and whether an address falls
// in a list of them (a key's allowedIps, an operator's webhook ranges). An IPv4-mapped IPv6 address
// (::ffff:a.b.c.d) is the IPv4 address it carries, whichever side it appears on.
import { isIP } from 'node:net'

/** `::ffff:1.2.3.4` -> `1.2.3.4`: an IPv4-mapped IPv6 address is the IPv4 address it carries. */
export function unmapIp(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  return m ? m[1]! : ip
}

interface Range {
  v6: boolean
  base: bigint
  mask: bigint
}

function v4ToBigInt(ip: string): bigint {
  return ip.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n)
}

function v6ToBigInt(ip: string): bigint {
  let head = ip
  let tail: number[] = []
  // A trailing dotted quad (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) is two groups.
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(ip)
  if (quad) {
    const n = Number(v4ToBigInt(quad[1]!))
    tail = [n >>> 16, n & 0xffff]
    head = ip.slice(0, -quad[1]!.length)
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1)
  }
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined]
  const l = left
    ? left
        .split(':')
        .filter(Boolean)
        .map((h) => parseInt(h, 16))
    : []
  const r =
    right !== undefined && right
      ? right
          .split(':')
          .filter(Boolean)
          .map((h) => parseInt(h, 16))
      : []
  const fill = 8 - l.length - r.length - tail.length
  const groups = right === undefined ? [...l, ...tail] : [...l, ...Array(Math.max(0, fill)).fill(0), ...r, ...tail]
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n)
}

function toValue(ip: string): { v6: boolean; value: bigint } | null {
  const clean = unmapIp(
    ip
      .trim()
      .replace(/^\[|\]$/g, '')
      .split('%')[0]!,
  )
  const family = isIP(clean)
  if (family === 4) return { v6: false, value: v4ToBigInt(clean) }
  if (family === 6) return { v6: true, value: v6ToBigInt(clean) }
  return null
}

/** Parses an address or CIDR; null when it is neither. */
export function parseRange(entry: string): Range | null {
  const [addr, bits, extra] = entry.trim().split('/')
  if (extra !== undefined || !addr) return null
  const parsed = toValue(addr)
  if (!parsed) return null
  const width = parsed.v6 ? 128 : 32
  let prefix = width
  if (bits !== undefined) {
    if (!/^\d{1,3}$/.test(bits)) return null
    prefix = Number(bits)
    // A mapped IPv4 CIDR such as ::ffff:10.0.0.0/104 is the IPv4 /8.
    if (!parsed.v6 && /^::ffff:/i.test(addr.trim())) prefix -= 96
    if (prefix < 0 || prefix > width) return null
  }
  const all = (1n << BigInt(width)) - 1n
  const mask = prefix === 0 ? 0n : (all << BigInt(width - prefix)) & all
  return { v6: parsed.v6, base: parsed.value & mask, mask }
}

/** True when the list is empty (any address) or the address falls in one of its entries. */
export function ipAllowed(ip: string | null, list: readonly string[]): boolean {
  if (!list.length) return true
  if (!ip) return false
  const value = toValue(ip)
  if (!value) return false
  return list.some((entry) => {
    const range = parseRange(entry)
    return range !== null && range.v6 === value.v6 && (value.value & range.mask) === range.base
  })
}

/**
 * A test of one address against a list of addresses and CIDRs, the list parsed once (routing rules test many
 * visits against one list). An entry that is neither matches nothing; so does an address that is not one.
 */
export function addressMatcher(list: readonly string[]): (ip: string) => boolean {
  const ranges = list.map(parseRange).filter((r): r is Range => r !== null)
  return (ip) => {
    const value = toValue(ip)
    return value !== null && ranges.some((range) => range.v6 === value.v6 && (value.value & range.mask) === range.base)
  }
}
