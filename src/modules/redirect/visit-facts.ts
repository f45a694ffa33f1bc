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

const UNSET = Symbol('unset')

/** Facts for one visit; nothing is looked up until a getter is called, and nothing twice. */
export function createVisitFacts(input: VisitInput, sources: FactSources): VisitFacts {
  const live = 'live' in input ? input.live : null
  const described = 'described' in input ? input.described : null
  const now = live !== null ? live.now : (input as { now: number }).now
  const header = (name: string) => (live !== null ? live.request.headers.get(name) : null)

  let ip: string | null | typeof UNSET = UNSET
  let ua: string | typeof UNSET = UNSET
  let place: FactPlace | null | typeof UNSET = UNSET
  let agent: FactAgent | typeof UNSET = UNSET
  let tag: string | null | typeof UNSET = UNSET
  let referrer: string | null | typeof UNSET = UNSET
  let params: URLSearchParams | null = null
  let visitor: string | null = null

  const address = (): string | null => {
    if (ip === UNSET) ip = live !== null ? live.ip || null : described!.ip ? unmapIp(described!.ip) : null
    return ip
  }
  const userAgent = (): string => {
    if (ua === UNSET) ua = live !== null ? (live.request.headers.get('user-agent') ?? '') : (described!.userAgent ?? '')
    return ua
  }
  const placed = (): FactPlace | null => {
    if (place === UNSET) {
      const at = address()
      place = at === null ? null : sources.place(at)
    }
    return place
  }
  const parsed = (): FactAgent => {
    if (agent === UNSET) agent = sources.agent(userAgent())
    return agent
  }
  const language = (): string | null => {
    if (tag === UNSET) tag = firstLanguageTag(live !== null ? header('accept-language') : described!.acceptLanguage)
    return tag
  }
  const country = (): string | null => {
    if (described?.country) return described.country.toUpperCase()
    return placed()?.country ?? null
  }

  return {
    country,
    continent() {
      const c = country()
      return c === null ? null : continentOf(c)
    },
    city: () => described?.city || (placed()?.city ?? null),
    device: () => parsed().device,
    os: () => parsed().os,
    browser: () => parsed().browser,
    language() {
      const t = language()
      if (t === null) return null
      const dash = t.indexOf('-')
      return dash < 0 ? t : t.slice(0, dash)
    },
    locale: language,
    referrer() {
      if (referrer === UNSET) referrer = referrerHost(live !== null ? header('referer') : described!.referrer)
      return referrer
    },
    ip: address,
    time: () => now,
    query(name) {
      if (described !== null) {
        const q = described.query
        return q !== undefined && Object.hasOwn(q, name) ? q[name]! : null
      }
      if (params === null) params = new URLSearchParams(live!.search)
      return params.get(name)
    },
    // Issue 38 brings QR attribution (a visit carrying qr=1 is `qr`); until then a live visit is always `link`
    // and only a resolve body can say `qr`.
    trigger: () => (described?.trigger === 'qr' ? 'qr' : 'link'),
    visitor() {
      if (visitor === null) visitor = sources.visitorHash(address() ?? '', keptAgent(userAgent()))
      return visitor
    },
  }
}
