// Enrichment of a click: country (and city, with a city-level database) from the client address, device
// type, browser and OS from the user agent. It runs when the click buffer is flushed (on the click-writer
// thread in a server), never on the redirect path; the address is looked up, never kept. The IP database is
// the embedded one of platform/geoip.ts, or the .mmdb LNK_GEOIP_DB names (a city-level one also yields the city).
import Bowser from 'bowser'
import { BlockList, isIP } from 'node:net'
import { EMBEDDED_GEOIP_DB, openGeoDb } from '../../platform/geoip'
import { unmapIp } from '../../platform/ip'
import { LruCache } from '../../platform/lru'
import { isBot } from '../../platform/agents'

export type Device = 'desktop' | 'mobile' | 'tablet' | 'tv' | 'bot' | 'other'

export interface Place {
  /** ISO 3166-1 alpha-2, upper case. */
  country: string | null
  city: string | null
}

export interface Agent {
  device: Device
  browser: string | null
  os: string | null
}

export type Enrichment = Place & Agent

export interface Enricher {
  enrich(ip: string, userAgent: string | null): Enrichment
}

export interface EnricherOptions {
  /** An .mmdb file to read instead of the embedded country database. */
  geoipPath?: string | null
  /** Distinct addresses and user agents remembered (each); the oldest unused are forgotten first. */
  cacheSize?: number
  /** Told once when the IP database cannot be read; lookups then answer no country. */
  onError?: (message: string) => void
}

/** The fields the known database layouts use (GeoIP2/GeoLite2/DB-IP, and ip-location-db's flat ones). */
interface GeoRecord {
  country?: { iso_code?: string }
  registered_country?: { iso_code?: string }
  country_code?: string
  city?: string | { names?: Record<string, string> }
}

// Addresses no database places in a country: unspecified, private, shared (CGNAT), loopback, link-local,
// documentation, benchmarking, multicast and reserved ranges (IANA special-purpose registries).
const NOWHERE = new BlockList()
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOWHERE.addSubnet(net, bits, 'ipv4')
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NOWHERE.addSubnet(net, bits, 'ipv6')

/** True for an address that has no place: private, loopback, documentation and the like. */
export function isUnroutable(ip: string): boolean {
  const family = isIP(ip)
  if (!family) return true
  return NOWHERE.check(ip, family === 4 ? 'ipv4' : 'ipv6')
}

const COUNTRY = /^[A-Z]{2}$/

function placeOf(rec: GeoRecord | null): Place {
  if (!rec) return { country: null, city: null }
  const code = (rec.country?.iso_code ?? rec.country_code ?? rec.registered_country?.iso_code ?? '').toUpperCase()
  // ZZ and XX are the "unknown" codes some databases use.
  const country = COUNTRY.test(code) && code !== 'ZZ' && code !== 'XX' ? code : null
  const raw = typeof rec.city === 'string' ? rec.city : (rec.city?.names?.en ?? Object.values(rec.city?.names ?? {})[0])
  const city = typeof raw === 'string' && raw.trim() ? raw.trim().slice(0, 128) : null
  return { country, city }
}

const DEVICES: Record<string, Device> = { desktop: 'desktop', mobile: 'mobile', tablet: 'tablet', tv: 'tv', bot: 'bot' }

function agentOf(ua: string): Agent {
  const bot = isBot(ua)
  if (!ua.trim()) return { device: bot ? 'bot' : 'other', browser: null, os: null }
  const parser = Bowser.getParser(ua)
  const device = bot ? 'bot' : (DEVICES[parser.getPlatformType(true)] ?? 'other')
  return { device, browser: parser.getBrowserName() || null, os: parser.getOSName() || null }
}

const NO_PLACE: Place = Object.freeze({ country: null, city: null })

export interface LocalEnricher extends Enricher {
  place(ip: string): Place
  agent(userAgent: string | null): Agent
  /** Entries in the address and agent caches, and whether the IP database has been read (it is, at the first lookup). */
  stats(): { places: number; agents: number; loaded: boolean; lookups: number }
}

export function createEnricher(options: EnricherOptions = {}): LocalEnricher {
  const path = options.geoipPath || EMBEDDED_GEOIP_DB
  const size = Math.max(1, options.cacheSize ?? 10_000)
  // Each cache forgets in the order entries were stored (peek, never get): refreshing an entry on every hit is
  // a Map delete and insert per lookup, several per click, while whatever is forgotten too early (a popular
  // agent, a decoded record) costs one more parse or decode when it comes back.
  const places = new LruCache<Place>(size)
  const blocks = new LruCache<Place>(size)
  const agents = new LruCache<Agent>(size)
  // Read on the first lookup: a runtime that never flushes a click (admin commands, the main thread of a
  // server whose writer thread does the work) never holds the database in memory.
  let reader: ReturnType<typeof openGeoDb> | null | undefined
  let lookups = 0

  function db() {
    if (reader === undefined) {
      try {
        // Decoded records by their offset in the file: a country database has a few hundred, shared by
        // millions of networks, so most lookups decode nothing.
        const records = new LruCache<unknown, string | number>(4_096)
        reader = openGeoDb(path, {
          cache: { get: (offset: string | number) => records.peek(offset), set: (offset: string | number, r: unknown) => records.set(offset, r) },
        })
      } catch (err) {
        reader = null
        options.onError?.(`IP database ${path} ${(err as Error).message}; clicks are recorded without a country`)
      }
    }
    return reader
  }

  /**
   * The /24 (IPv4) or /48 (IPv6) an address lies in: neighbours share a place whenever the database
   * answered for a network at least that wide, which a country database nearly always does.
   */
  const blockOf = (ip: string, family: number) => (family === 4 ? ip.slice(0, ip.lastIndexOf('.')) : ip.includes('::') ? null : ip.split(':', 3).join(':'))

  function place(rawIp: string): Place {
    const ip = unmapIp(rawIp)
    let hit = places.peek(ip)
    if (hit) return hit
    const family = isIP(ip)
    if (!family || isUnroutable(ip)) return NO_PLACE
    const block = blockOf(ip, family)
    hit = block === null ? undefined : blocks.peek(block)
    if (!hit) {
      let rec: GeoRecord | null = null
      let prefix = 0
      lookups++
      try {
        ;[rec, prefix] = (db()?.getWithPrefixLength(ip) ?? [null, 0]) as [GeoRecord | null, number]
      } catch {
        rec = null
      }
      hit = placeOf(rec)
      if (block !== null && prefix > 0 && prefix <= (family === 4 ? 24 : 48)) blocks.set(block, hit)
    }
    places.set(ip, hit)
    return hit
  }

  function agent(userAgent: string | null): Agent {
    const ua = userAgent ?? ''
    let hit = agents.peek(ua)
    if (!hit) {
      try {
        hit = agentOf(ua)
      } catch {
        hit = { device: isBot(ua) ? 'bot' : 'other', browser: null, os: null }
      }
      agents.set(ua, hit)
    }
    return hit
  }

  return {
    place,
    agent,
    enrich: (ip, userAgent) => ({ ...place(ip), ...agent(userAgent) }),
    stats: () => ({ places: places.size, agents: agents.size, loaded: reader !== undefined, lookups }),
  }
}
