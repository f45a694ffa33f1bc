// The short-link path: `GET|HEAD|POST {short host}/{slug}`. The handler does the I/O: it finds the link in
// memory (never awaiting the database), gathers what decide() needs to know about the visit, and answers
// the outcome: a page, the redirect, and the click or bot hit handed to the buffer. Only a gate's post-back
// and the captcha page await (hash and proof work). A slug path on a host that is neither a short host
// nor the API's gets the page an unknown slug gets; the API host's go on to the API. A custom domain is a
// visitor's site: its owner's fallbacks answer `/`, unknown slugs and used-up links, and every path of it
// but the service's own (domain-fallbacks.ts) gets the 404 fallback rather than the API's JSON.
import { createHmac } from 'node:crypto'
import { clientIp, socketAddress } from '../../http/request-context'
import type { Clock } from '../../platform/clock'
import type { Config } from '../../platform/config'
import type { ClickBuffer } from '../clicks/click-buffer'
import { isReservedSlug, shortUrl } from '../links/slug'
import { isBot, isSocialCrawler, mobilePlatform } from '../../platform/agents'
import type { CachedLink, LinkCache } from './cache'
import { createVisitCounter } from './count'
import { decide, type Outcome, type Visit } from './decide'
import { appUrl } from './deep-links'
import { buildDestination } from './destination'
import { fillFallback, isServicePath } from './domain-fallbacks'
import { createGatePost } from './gate-post'
import { Captcha, hasGateCookie } from './gates'
import { captchaPage, consentPage, deepLinkPage, domainRootPage, gonePage, notFoundPage, passwordPage, previewPage, sandboxPage, statsPage } from './pages'
import type { ServedDomain, ServedDomains } from '../domains/served'
import type { ShortHosts } from './short-hosts'
import { StatsPageCache } from './stats-page-cache'
import type { StatsRepo } from './repo-stats'

const SLUG_PATH = /^\/([A-Za-z0-9_-]{1,64})(\+?)$/

export type RedirectHandler = (request: Request) => Response | Promise<Response> | null

/** The bridge pages' visitor side (pages/serve.ts), as the short-link path hands visits to it. */
export interface VisitorPages {
  /** `/p/{slug}` and `/_/b/{blockId}`; null when nothing there answers on this host. */
  handle(request: Request, path: string, search: string, target: { domain: string; customWorkspaceId: string | null }): Response | null
  /** A link's bridge page; null when it is gone. */
  show(request: Request, pageId: string): Response | null
}

const isPagePath = (path: string) => path.startsWith('/p/') || path.startsWith('/_/b/')

/** What the redirect path uses. */
export interface RedirectDeps {
  config: Config
  clock: Clock
  /** The public stats page's figures: the link's counters and rollups. */
  stats: StatsRepo
  linkCache: Pick<LinkCache, 'get' | 'admitted'>
  clickBuffer: Pick<ClickBuffer, 'add'>
  /** Key of the keyed hashes of client addresses. */
  visitorKey: Buffer
  /** Key that signs the gate cookies (password, captcha, consent). */
  cookieKey: Buffer
  /** The hosts short links answer on: the shared pool and the custom domains served now. */
  shortHosts: ShortHosts
  /** The custom domains served now (ShortHosts asks them too): told which ones are reached over TLS. */
  served: Pick<ServedDomains, 'size' | 'sawHttps'>
  /** Bridge pages: `/p/{slug}`, tracked buttons, and links that show a page. */
  pages: VisitorPages | null
}

const isLoopback = (address: string | null) => address !== null && (address.startsWith('127.') || address === '::1')

export function createRedirectHandler(deps: RedirectDeps): RedirectHandler {
  const { config, clock, linkCache, cookieKey } = deps
  const { shortHosts, stats, served, pages } = deps
  const apiHost = new URL(config.baseUrl).host.toLowerCase()
  const behindCaddy = config.tlsMode === 'caddy'
  const keyed = (value: string) => createHmac('sha256', deps.visitorKey).update(value).digest('base64url').slice(0, 32)
  const captcha = new Captcha(createHmac('sha256', cookieKey).update('altcha').digest('base64url'))
  const gatePost = createGatePost({ cookieKey, secure: config.baseUrl.startsWith('https:'), captcha, keyed })
  const count = createVisitCounter(deps, keyed)
  const statsPages = new StatsPageCache()

  /** Rendered at most once a minute per link; reads the database synchronously, like a cache miss. */
  function statsResponse(entry: CachedLink, now: number): Response {
    const link = entry.row
    const cached = statsPages.get(link, now)
    if (cached) return cached
    const data = stats.publicStatsSync(link.id, now)
    if (!data) return notFoundPage()
    return statsPages.set(link, now, statsPage({ shortUrl: shortUrl(deps, link), title: link.title, stats: data, now }))
  }

  function redirectTo(location: string, status: number, cacheable: boolean) {
    return new Response(null, {
      status,
      headers: {
        location,
        // Only permanent redirects of links without per-visit checks may be cached (briefly).
        'cache-control': cacheable ? 'public, max-age=300' : 'private, no-store',
        // Crawlers and phones may get a page instead of this redirect: a shared cache must tell them apart.
        vary: 'User-Agent',
        'x-robots-tag': 'noindex',
        'referrer-policy': 'unsafe-url',
      },
    })
  }

  /** `path` is the request's, as sent; the owner's URL gets it in place of `{ORIGINAL_PATH}`. */
  const fallback = (url: string, status: number, custom: ServedDomain, path: string) => redirectTo(fillFallback(url, custom.domain, path), status, false)

  const notFound = (custom: ServedDomain | null, path: string) => (custom !== null && custom.notFoundUrl !== null ? fallback(custom.notFoundUrl, 302, custom, path) : notFoundPage())

  /**
   * With a local Caddy in front, a request it passed on over TLS is the evidence that the domain's
   * certificate works. Only Caddy on this machine is believed, and only in that mode.
   */
  function noteHttps(request: Request, custom: ServedDomain) {
    if (request.headers.get('x-forwarded-proto') === 'https' && isLoopback(socketAddress(request))) served.sawHttps(custom.domain)
  }

  /** A path that is no slug (or a method no link answers) on a custom domain: not the API's, unless it is the service's own. */
  function otherPath(request: Request, url: URL): Response | null {
    const target = shortHosts.resolve((request.headers.get('host') ?? url.host).toLowerCase())
    const custom = target === null ? null : target.custom
    if (custom === null) return null
    if (behindCaddy) noteHttps(request, custom)
    const path = url.pathname
    if (isServicePath(path)) return null
    if (request.method !== 'GET' && request.method !== 'HEAD') return notFoundPage()
    if (path !== '/') return notFound(custom, path)
    return custom.rootRedirectUrl !== null ? fallback(custom.rootRedirectUrl, 301, custom, path) : domainRootPage(custom.domain)
  }

  /** `/p/{slug}` and `/_/b/{blockId}` on a short host: the page's, or the host's not-found answer. */
  function visitorPage(request: Request, url: URL): Response | null {
    const host = (request.headers.get('host') ?? url.host).toLowerCase()
    const target = shortHosts.resolve(host)
    if (target === null) return host === apiHost ? null : notFoundPage()
    const custom = target.custom
    if (custom !== null && behindCaddy) noteHttps(request, custom)
    const answered = request.method === 'GET' || request.method === 'HEAD' ? pages!.handle(request, url.pathname, url.search, { domain: target.domain, customWorkspaceId: custom === null ? null : custom.workspaceId }) : null
    return answered ?? notFound(custom, url.pathname)
  }

  async function captchaChallenge(slug: string, query: string, now: number) {
    return captchaPage(slug, await captcha.challenge(now), undefined, query)
  }

  /** The query as a URL serializes it (escaped the standard way), for the pages that post it back. */
  const normalized = (request: Request) => new URL(request.url).search

  /** Answers what decide() said; counting happens here, just before the destination is built. */
  function answer(outcome: Exclude<Outcome, { kind: 'notFound' }>, entry: CachedLink, request: Request, search: string, ip: string, ua: string, now: number, ipHash: string | null) {
    const link = entry.row
    // The gate pages post back to the same URL, query included, so the visitor's parameters reach the destination.
    switch (outcome.kind) {
      case 'statsPage':
        return statsResponse(entry, now)
      case 'sandbox':
        return sandboxPage(link, buildDestination(link, search, null))
      case 'fallback':
        return redirectTo(link.fallbackUrl!, 302, false)
      case 'gone':
        return gonePage(outcome.reason)
      case 'gatePost':
        return gatePost(link, request, new URL(request.url), ip, now)
      case 'password':
        return passwordPage(link.slug, { query: normalized(request) })
      case 'captcha':
        return captchaChallenge(link.slug, normalized(request), now)
      case 'consent':
        return consentPage(link.slug, buildDestination(link, search, null), normalized(request))
      case 'preview':
        if (outcome.count === 'bot') count.botHit(entry, request, ip, ua, now)
        return previewPage(link, shortUrl(deps, link), buildDestination(link, search, null))
    }
    if (outcome.count === 'bot') count.botHit(entry, request, ip, ua, now)
    const clickId = outcome.count === 'click' ? count.click(entry, request, ip, ua, now, ipHash) : null
    if (outcome.kind === 'bridgePage') {
      // A page deleted since the link was cached: the redirect goes ahead.
      const shown = pages === null ? null : pages.show(request, link.bridgePageId!)
      if (shown !== null) return shown
    }
    const destination = buildDestination(link, search, clickId)
    if (outcome.kind === 'deepLink') return deepLinkPage(outcome.app.name, appUrl(outcome.app, new URL(destination), outcome.platform), destination)
    return redirectTo(destination, link.redirectStatus, outcome.kind === 'redirect' && outcome.cacheable)
  }

  return function handle(request: Request): Response | Promise<Response> | null {
    // The path and query read off the URL string: parsing it into a URL object costs more than the
    // rest of a plain redirect. A path the pattern does not take as it comes is parsed properly.
    const raw = request.url
    const start = raw.indexOf('/', raw.indexOf('//') + 2)
    const q = raw.indexOf('?', start)
    let path = q < 0 ? raw.slice(start) : raw.slice(start, q)
    let match = SLUG_PATH.exec(path)
    let search = q < 0 || q === raw.length - 1 ? '' : raw.slice(q)
    let parsed: URL | null = null
    if (!match) {
      parsed = new URL(raw)
      match = SLUG_PATH.exec(parsed.pathname)
      if (!match) {
        if (pages !== null && isPagePath(parsed.pathname)) return visitorPage(request, parsed)
        // Without custom domains, no path but a slug's is answered here.
        return served.size === 0 ? null : otherPath(request, parsed)
      }
      path = parsed.pathname
      search = parsed.search
    }
    const slug = match[1]!
    const method = request.method
    if ((method !== 'GET' && method !== 'HEAD' && method !== 'POST') || isReservedSlug(slug)) return served.size === 0 ? null : otherPath(request, parsed ?? new URL(raw))
    const host = (request.headers.get('host') ?? (parsed ?? new URL(raw)).host).toLowerCase()
    const target = shortHosts.resolve(host)
    if (target === null) return host === apiHost ? null : notFoundPage()
    const custom = target.custom
    if (custom !== null && behindCaddy) noteHttps(request, custom)

    const found = linkCache.get(target.domain, slug)
    // A custom domain answers only the links of the workspace that holds it now: a former owner's links on it
    // (archived when it deleted the domain) never answer for the next owner.
    const entry = found !== null && custom !== null && found.row.workspaceId !== custom.workspaceId ? null : found
    const link = entry === null ? null : entry.row
    const now = clock.now()
    const ip = clientIp(request, config) ?? ''
    const ua = request.headers.get('user-agent') ?? ''
    // The costly facts (the admitted addresses, cookie signatures) are gathered only for links that ask for them.
    const ipHash = link !== null && link.uniqueIpLimit !== null && ip ? keyed(`ip|${ip}`) : null
    const admitted = ipHash !== null ? linkCache.admitted(entry!) : null
    const cookies = link !== null && (link.passwordHash !== null || link.captchaEnabled || link.consentRequired) ? request.headers.get('cookie') : null
    const outcome = decide(link, {
      method: method as Visit['method'],
      statsPage: match[2] === '+',
      now,
      served: entry === null ? 0 : entry.served,
      addressesAdmitted: admitted === null ? null : admitted.size,
      addressKnown: admitted !== null && admitted.has(ipHash!),
      passedPassword: cookies !== null && hasGateCookie(cookieKey, 'pw', link!, cookies, now),
      passedCaptcha: cookies !== null && hasGateCookie(cookieKey, 'cap', link!, cookies, now),
      passedConsent: cookies !== null && hasGateCookie(cookieKey, 'ok', link!, cookies, now),
      bot: isBot(ua),
      socialCrawler: isSocialCrawler(ua),
      platform: link !== null && link.deepLinkEnabled ? mobilePlatform(ua) : null,
    })
    if (outcome.kind === 'notFound') return notFound(custom, path)
    // A link's own fallbackUrl came first (decide); the domain's applies to links without one.
    if (outcome.kind === 'gone' && custom !== null && custom.expiredUrl !== null) return fallback(custom.expiredUrl, 302, custom, path)
    return answer(outcome, entry!, request, search, ip, ua, now, ipHash)
  }
}
