// The parsers of setting values: each takes the raw text (flag, variable or default) and returns the typed
// value, or throws an Error whose message says what is wrong (the loader adds which setting and value).
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { resolve } from 'node:path'
import { openGeoDb } from '../geoip'
import { parseRange } from '../ip'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

/** A connection URL as it may be shown: the password replaced, whatever else is wrong with it. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw)
    if (url.password) url.password = '***'
    return url.toString()
  } catch {
    // Unparseable: hide anything between "//user:" and "@", the usual place of a password.
    return raw.replace(/(\/\/[^/:@]*:)[^@/]*@/, '$1***@')
  }
}

export function integer(min: number, max: number) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw.trim())) throw new Error(`must be a whole number from ${min} to ${max}`)
    const n = Number(raw)
    if (n < min || n > max) throw new Error(`must be a whole number from ${min} to ${max}`)
    return n
  }
}

export function boolean(raw: string): boolean {
  const v = raw.trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(v)) return true
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false
  throw new Error('must be true or false')
}

function list(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/** An http(s) origin, without a trailing slash. */
export function origin(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new Error('must be an absolute http(s) URL such as https://lnk.example.com')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must use http or https')
  if (url.pathname !== '/' || url.search || url.hash) throw new Error('must be an origin without path, query or fragment')
  return url.origin
}

/** The address to listen on. */
export function listenHost(raw: string): string {
  const v = raw.trim()
  if (v !== 'localhost' && !isIP(v)) throw new Error('must be an IP address or localhost')
  return v
}

/** A directory, as an absolute path. */
export function directory(raw: string): string {
  if (!raw.trim()) throw new Error('must not be empty')
  return resolve(raw.trim())
}

/** A postgres:// URL, or null (SQLite) when empty. */
export function databaseUrl(raw: string): string | null {
  const v = raw.trim()
  if (!v) return null
  let url: URL
  try {
    url = new URL(v)
  } catch {
    throw new Error('must be a URL such as postgres://lnk:secret@db.internal:5432/lnk')
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new Error('must start with postgres:// or postgresql:// (leave it unset for SQLite)')
  if (!url.hostname && !url.searchParams.get('host')) throw new Error('must name a host')
  if (url.pathname.length <= 1) throw new Error('must name a database (postgres://…/lnk)')
  return v
}

const HOST_PORT = /^(?=.{1,253}(:\d{1,5})?$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(:\d{1,5})?$/

/** A comma-separated list of hosts or host:port, lower-cased, without repeats; at least one. */
export function shortDomains(raw: string): string[] {
  const domains = list(raw.toLowerCase())
  if (!domains.length) throw new Error('must name at least one domain')
  for (const d of domains) if (!HOST_PORT.test(d)) throw new Error(`"${d}" is not a host or host:port`)
  return [...new Set(domains)]
}

/** Trusted proxy hops: off (0), on (1) or a count. */
export function proxyHops(raw: string): number {
  const v = raw.trim().toLowerCase()
  if (['', 'off', 'false', 'no', '0'].includes(v)) return 0
  if (['on', 'true', 'yes'].includes(v)) return 1
  return integer(1, 10)(v)
}

export function isValidCidr(value: string): boolean {
  const [addr, bits, ...rest] = value.split('/')
  if (rest.length || !addr) return false
  const family = isIP(addr)
  if (!family) return false
  if (bits === undefined) return true
  if (!/^\d+$/.test(bits)) return false
  return Number(bits) <= (family === 4 ? 32 : 128)
}

/** A comma-separated list of addresses and CIDRs. */
export function cidrs(raw: string): string[] {
  const values = list(raw)
  for (const c of values) if (!isValidCidr(c)) throw new Error(`"${c}" is not an IP address or CIDR`)
  return values
}

/** A comma-separated list of addresses and CIDRs that the peer check can match with, without repeats. */
export function peerRanges(raw: string): string[] {
  const values = list(raw)
  // parseRange is what the peer check matches with: a value it cannot read must stop start-up here.
  for (const c of values) if (!isValidCidr(c) || !parseRange(c)) throw new Error(`"${c}" is not an IP address or CIDR`)
  return [...new Set(values)]
}

/** A comma-separated list of IP addresses, without repeats. */
export function addresses(raw: string): string[] {
  const ips = list(raw)
  for (const ip of ips) if (!isIP(ip)) throw new Error(`"${ip}" is not an IP address`)
  return [...new Set(ips)]
}

/** A comma-separated list of IP addresses, lower-cased (as DNS answers are compared), without repeats. */
export function recordAddresses(raw: string): string[] {
  return [...new Set(addresses(raw).map((ip) => ip.toLowerCase()))]
}

export function logLevel(raw: string): LogLevel {
  const v = raw.trim().toLowerCase()
  if (v !== 'debug' && v !== 'info' && v !== 'warn' && v !== 'error' && v !== 'silent') throw new Error('must be debug, info, warn, error or silent')
  return v
}

export function tlsMode(raw: string): 'external' | 'caddy' {
  const v = raw.trim().toLowerCase()
  if (v !== 'external' && v !== 'caddy') throw new Error('must be external or caddy')
  return v
}

/** A hostname with a dot and no port (a trailing dot dropped), lower-cased; null when empty. */
export function hostname(raw: string): string | null {
  const v = raw.trim().toLowerCase().replace(/\.$/, '')
  if (!v) return null
  if (!HOST_PORT.test(v) || v.includes(':') || !v.includes('.')) throw new Error('must be a hostname such as cname.lnk.example.com')
  return v
}

/** A comma-separated list of DNS servers as node:dns takes them. */
export function dnsServers(raw: string): string[] {
  const servers = list(raw)
  for (const s of servers) if (!isDnsServer(s)) throw new Error(`"${s}" is not an IP address, IP:port or [IPv6]:port`)
  return servers
}

/** A DNS server as node:dns takes it: an address, address:port or [IPv6]:port. */
function isDnsServer(value: string): boolean {
  if (isIP(value)) return true
  const bracketed = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/.exec(value)
  if (bracketed) return isIP(bracketed[1]!) === 6 && Number(bracketed[2]) <= 65535
  const v4 = /^([0-9.]+):(\d{1,5})$/.exec(value)
  return !!v4 && isIP(v4[1]!) === 4 && Number(v4[2]) <= 65535
}

/** An .mmdb file as an absolute path, or null when empty. */
export function geoipDb(raw: string): string | null {
  if (!raw.trim()) return null
  const path = resolve(raw.trim())
  // Opened once here so a wrong path stops start-up, not the first click flush.
  openGeoDb(path)
  return path
}

/** A PEM file of certificates, read and checked at start-up; null when the setting is empty. */
export function certificateFile(raw: string): string | null {
  if (!raw.trim()) return null
  const pem = readPem(raw.trim(), 'CERTIFICATE')
  try {
    new X509Certificate(pem)
  } catch (err) {
    throw new Error(`holds no valid certificate: ${(err as Error).message}`)
  }
  return pem
}

/**
 * A PEM file of the private key of `certificate` (the PEM of LNK_WEBHOOK_CLIENT_CERT, or null when that is
 * unset): both or neither; null when neither.
 */
export function privateKeyFile(raw: string, certificate: string | null): string | null {
  if (!raw.trim()) {
    if (certificate) throw new Error('must be set when LNK_WEBHOOK_CLIENT_CERT is (both or neither)')
    return null
  }
  if (!certificate) throw new Error('needs LNK_WEBHOOK_CLIENT_CERT as well (both or neither)')
  const pem = readPem(raw.trim(), 'PRIVATE KEY')
  let key: KeyObject
  try {
    key = createPrivateKey(pem)
  } catch (err) {
    throw new Error(`holds no valid private key: ${(err as Error).message}`)
  }
  // A mismatched pair would only show as handshake failures on every mTLS delivery.
  if (!new X509Certificate(certificate).checkPrivateKey(key)) throw new Error('does not belong to the certificate of LNK_WEBHOOK_CLIENT_CERT')
  return pem
}

/** Reads a PEM file at start-up, so a wrong path stops start-up instead of failing every delivery. */
function readPem(path: string, label: string): string {
  let text: string
  try {
    text = readFileSync(resolve(path), 'utf8')
  } catch (err) {
    throw new Error(`cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  if (!text.includes(`-----BEGIN `) || !text.includes(label)) throw new Error(`is not a PEM file holding a ${label}`)
  return text
}
