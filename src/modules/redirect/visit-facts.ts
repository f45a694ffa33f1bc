// The facts of one visit that routing rules read (contract 7.1), each computed the first time a rule asks and
// kept for the rest of the visit: a link whose rules ask only for the query never has its visitor's address
// looked up or user agent parsed. The costly lookups are cached across visits too, by address and by user
// agent, in small LRUs; the values are the contract's (country upper case, device/os/browser lower case…).
//
// A visit is either a live request (the redirect) or what a caller of `POST /links/{id}/resolve` describes.
// Country, city and the parsed agent come from the same place click enrichment gets them (analytics'
// enricher); a resolve body's own country or city stands in for the address's.
import { continentOf } from '../../platform/continents'
import { unmapIp } from '../../platform/ip'
import { LruCache } from '../../platform/lru'
import type { FactBrowser, FactDevice, FactOs, Trigger, VisitFacts } from './routing'

export interface FactPlace {
  country: string | null
  city: string | null
}

export interface FactAgent {
  device: FactDevice | null
  os: FactOs | null
  browser: FactBrowser | null
}

/** What the facts are looked up with; createFactSources builds it over the enricher, with its caches. */
export interface FactSources {
  place(ip: string): FactPlace
  agent(userAgent: string): FactAgent
  /** The keyed visitor hash clicks are recorded under (address + user agent). */
  visitorHash(ip: string, userAgent: string | null): string
}

/** What analytics' enricher answers, in its own words (Bowser's names). */
export interface EnricherLike {
  place(ip: string): { country: string | null; city: string | null }
  agent(userAgent: string | null): { device: string; browser: string | null; os: string | null }
}

const DEVICES: Record<string, FactDevice> = { desktop: 'desktop', mobile: 'mobile', tablet: 'tablet' }
const OSES: Record<string, FactOs> = { iOS: 'ios', Android: 'android', Windows: 'windows', macOS: 'macos', Linux: 'linux', 'Chrome OS': 'chromeos' }
const BROWSERS: Record<string, FactBrowser> = {
  Chrome: 'chrome',
  Chromium: 'chrome',
  Safari: 'safari',
  Firefox: 'firefox',
  Focus: 'firefox',
  'Microsoft Edge': 'edge',
  Opera: 'opera',
  'Opera Coast': 'opera',
  'Samsung Internet for Android': 'samsung',
}

/** The enricher's agent in the contract's words: a TV, a bot or an unknown device is no device; an unnamed OS or browser is none. */
export function agentFacts(agent: { device: string; browser: string | null; os: string | null }): FactAgent {
  return {
    device: Object.hasOwn(DEVICES, agent.device) ? DEVICES[agent.device]! : null,
    os: agent.os === null ? null : Object.hasOwn(OSES, agent.os) ? OSES[agent.os]! : 'other',
    browser: agent.browser === null ? null : Object.hasOwn(BROWSERS, agent.browser) ? BROWSERS[agent.browser]! : 'other',
  }
}

/**
 * The lookups behind the facts, over the enricher (which reads the IP database on first use), each answer kept
 * by address or by user agent in an LRU of `size` entries.
 */
export function createFactSources(enricher: EnricherLike, visitorHash: FactSources['visitorHash'], size = 10_000): FactSources {
  const places = new LruCache<FactPlace>(size)
  const agents = new LruCache<FactAgent>(size)
  return {
    place(ip) {
      let hit = places.peek(ip)
      if (hit === undefined) {
        const found = enricher.place(ip)
        hit = { country: found.country, city: found.city }
        places.set(ip, hit)
      }
      return hit
    },
    agent(userAgent) {
      let hit = agents.peek(userAgent)
      if (hit === undefined) {
        hit = agentFacts(enricher.agent(userAgent))
        agents.set(userAgent, hit)
      }
      return hit
    },
    visitorHash,
  }
}

/** A live visit: the request, its client address as LNK_TRUST_PROXY decided ('' when unknown), the time, the query string ('?' included, '' for none). */
export interface LiveVisit {
  request: Request
  ip: string
  now: number
  search: string
}

/** A described visit: the body of `POST /links/{id}/resolve`, every field optional. */
export interface DescribedVisit {
  country?: string
  city?: string
  userAgent?: string
  acceptLanguage?: string
  ip?: string
  referrer?: string
  query?: Record<string, string>
  trigger?: Trigger
}

export type VisitInput = { live: LiveVisit } | { described: DescribedVisit; now: number }

/** The user agent clicks keep (and hash the visitor with): the first 512 characters, none when empty. */
const keptAgent = (ua: string) => ua.slice(0, 512) || null

const LANGUAGE_TAG = /^[a-z]{1,8}(?:-[a-z0-9]{1,8})*$/

/** The first tag of an Accept-Language header, lower case; null when absent, `*` or not a language tag. */
export function firstLanguageTag(header: string | null | undefined): string | null {
  if (!header) return null
  const comma = header.indexOf(',')
  const first = comma < 0 ? header : header.slice(0, comma)
  const semi = first.indexOf(';')
  const tag = (semi < 0 ? first : first.slice(0, semi)).trim().toLowerCase().replaceAll('_', '-')
  return LANGUAGE_TAG.test(tag) ? tag : null
}

/** The host of a referrer URL, lower case; a bare host is taken as it is (resolve bodies may send one). */
export function referrerHost(referrer: string | null | undefined): string | null {
  if (!referrer) return null
  try {
    return new URL(referrer).hostname.toLowerCase() || null
  } catch {
    return /^[a-z0-9.-]+$/i.test(referrer) ? referrer.toLowerCase() : null
  }
}

/** The form decoding of a query component ('+' is a space), leaving a malformed escape as it came, as URLSearchParams does. */
function decodeComponent(raw: string): string {
  const spaced = raw.includes('+') ? raw.replaceAll('+', ' ') : raw
  if (!spaced.includes('%')) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    return new URLSearchParams(`a=${raw}`).get('a') ?? spaced
  }
}

function hasEscape(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i)
    if (c === 37 || c === 43) return true // % or +
  }
  return false
}

/** The first value of `name` in a query string ('?' included), as URLSearchParams would read it, without parsing the rest. */
export function queryParam(search: string, name: string): string | null {
  let start = search.startsWith('?') ? 1 : 0
  while (start < search.length) {
    let end = search.indexOf('&', start)
    if (end < 0) end = search.length
    const eq = search.indexOf('=', start)
    const keyEnd = eq < 0 || eq > end ? end : eq
    if (keyEnd > start) {
      // The plain spelling is compared in place; only an escaped key is cut out and decoded.
      const plain = keyEnd - start === name.length && search.startsWith(name, start)
      if (plain || (hasEscape(search, start, keyEnd) && decodeComponent(search.slice(start, keyEnd)) === name))
        return keyEnd === end ? '' : decodeComponent(search.slice(keyEnd + 1, end))
    }
    start = end + 1
  }
  return null
}

const UNSET = Symbol('unset')
type Lazy<T> = T | typeof UNSET

/**
 * Facts for one visit; nothing is looked up until a getter is called, and nothing twice. A class rather than
 * an object of closures: a visit to a routed link makes one, and a dozen closures per visit cost more than
 * the rules that read them.
 */
class Facts implements VisitFacts {
  private ipSeen: Lazy<string | null> = UNSET
  private uaSeen: Lazy<string> = UNSET
  private placeSeen: Lazy<FactPlace | null> = UNSET
  private agentSeen: Lazy<FactAgent> = UNSET
  private tagSeen: Lazy<string | null> = UNSET
  private languageSeen: Lazy<string | null> = UNSET
  private referrerSeen: Lazy<string | null> = UNSET
  private visitorSeen: string | null = null

  constructor(
    private readonly live: LiveVisit | null,
    private readonly described: DescribedVisit | null,
    private readonly now: number,
    private readonly sources: FactSources,
  ) {}

  ip(): string | null {
    if (this.ipSeen === UNSET) {
      const asked = this.described?.ip
      this.ipSeen = this.live !== null ? this.live.ip || null : asked ? unmapIp(asked) : null
    }
    return this.ipSeen
  }

  private userAgent(): string {
    if (this.uaSeen === UNSET) this.uaSeen = this.live !== null ? (this.live.request.headers.get('user-agent') ?? '') : (this.described!.userAgent ?? '')
    return this.uaSeen
  }

  private placed(): FactPlace | null {
    if (this.placeSeen === UNSET) {
      const at = this.ip()
      this.placeSeen = at === null ? null : this.sources.place(at)
    }
    return this.placeSeen
  }

  private agent(): FactAgent {
    if (this.agentSeen === UNSET) this.agentSeen = this.sources.agent(this.userAgent())
    return this.agentSeen
  }

  country(): string | null {
    const own = this.described?.country
    if (own) return own.toUpperCase()
    return this.placed()?.country ?? null
  }

  continent(): string | null {
    const c = this.country()
    return c === null ? null : continentOf(c)
  }

  city(): string | null {
    return this.described?.city || (this.placed()?.city ?? null)
  }

  device() {
    return this.agent().device
  }

  os() {
    return this.agent().os
  }

  browser() {
    return this.agent().browser
  }

  locale(): string | null {
    if (this.tagSeen === UNSET)
      this.tagSeen = firstLanguageTag(this.live !== null ? this.live.request.headers.get('accept-language') : this.described!.acceptLanguage)
    return this.tagSeen
  }

  language(): string | null {
    if (this.languageSeen === UNSET) {
      const tag = this.locale()
      const dash = tag === null ? -1 : tag.indexOf('-')
      this.languageSeen = dash < 0 ? tag : tag!.slice(0, dash)
    }
    return this.languageSeen
  }

  referrer(): string | null {
    if (this.referrerSeen === UNSET) this.referrerSeen = referrerHost(this.live !== null ? this.live.request.headers.get('referer') : this.described!.referrer)
    return this.referrerSeen
  }

  time(): number {
    return this.now
  }

  query(name: string): string | null {
    if (this.live !== null) return queryParam(this.live.search, name)
    const q = this.described!.query
    return q !== undefined && Object.hasOwn(q, name) ? q[name]! : null
  }

  // Issue 38 brings QR attribution (a visit carrying qr=1 is `qr`); until then a live visit is always `link`
  // and only a resolve body can say `qr`.
  trigger(): Trigger {
    return this.described?.trigger === 'qr' ? 'qr' : 'link'
  }

  visitor(): string {
    if (this.visitorSeen === null) this.visitorSeen = this.sources.visitorHash(this.ip() ?? '', keptAgent(this.userAgent()))
    return this.visitorSeen
  }
}

export function createVisitFacts(input: VisitInput, sources: FactSources): VisitFacts {
  return 'live' in input ? new Facts(input.live, null, input.live.now, sources) : new Facts(null, input.described, input.now, sources)
}
