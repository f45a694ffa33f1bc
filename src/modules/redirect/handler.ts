// The short-link path: `GET|HEAD|POST {short host}/{slug}`. The handler does the I/O: it finds the link in
// memory, gathers what decide() needs to know about the visit, and answers the outcome: a page, the
// redirect, and the click or bot hit handed to the buffer. On SQLite nothing here awaits the database; a
// gate's post-back and the captcha page await (hash and proof work). On PostgreSQL a cache miss (the link,
// its admitted addresses, the stats page) is awaited, and so is a click on a link under limits, decided in
// the database so the limits hold across nodes; the answer is then a Promise, and only then. A slug path on
// a host that is neither a short host nor the API's gets the page an unknown slug gets; the API host's go on
// to the API. A custom domain is a visitor's site: its owner's fallbacks answer `/`, unknown slugs and
// used-up links, and every path of it but the service's own (domain-fallbacks.ts) gets the 404 fallback
// rather than the API's JSON.
import { createHmac } from 'node:crypto'
import { clientIp, socketAddress } from '../../http/request-context'
import { tlsProxyPeers } from '../../net/tls-proxy'
import type { Clock } from '../../platform/clock'
import type { Config } from '../../platform/config'
import type { ClickBuffer, ClickReservations } from '../clicks'
import type { RedirectLink } from '../links'
import { isReservedSlug, shortUrl } from '../links/model'
import { isBot, isSocialCrawler, mobilePlatform } from '../../platform/agents'
import type { CachedLink, LinkCache } from './cache'
import { createVisitCounter } from './count'
import { decide, decideRouted, unavailable, type Outcome, type Visit } from './decide'
import { appUrl } from './deep-links'
import { buildDestination } from './destination'
import { fillFallback, isServicePath } from './domain-fallbacks'
import { createGatePost } from './gate-post'
import { Captcha, hasGateCookie, type GateLimits } from './gates'
import { captchaPage, consentPage, deepLinkPage, domainRootPage, gonePage, notFoundPage, passwordPage, previewPage, sandboxPage, statsPage } from './pages'
import type { ServedDomain, ServedDomains } from '../domains'
import type { ShortHosts } from './short-hosts'
import type { StatsPageCache } from './stats-page-cache'
import type { PublicStats, RedirectSyncReads, StatsRepo } from './port'
import { route as routeOf, type Route } from './routing'
import { createVisitFacts, type FactSources } from './visit-facts'

const SLUG_PATH = /^\/([A-Za-z0-9_-]{1,64})(\+?)$/

export type RedirectHandler = (request: Request) => Response | Promise<Response> | null

/** What the bridge pages answer: at once from memory, or a Promise on a PostgreSQL cache miss. */
type PageAnswer = Response | null | Promise<Response | null>

/** The bridge pages' visitor side (pages/serve.ts), as the short-link path hands visits to it. */
export interface VisitorPages {
  /** `/p/{slug}` and `/_/b/{blockId}`; null when nothing there answers on this host. */
  handle(request: Request, path: string, search: string, target: { domain: string; customWorkspaceId: string | null }): PageAnswer
  /** A link's bridge page; null when it is gone. */
  show(request: Request, pageId: string): PageAnswer
}

const isPagePath = (path: string) => path.startsWith('/p/') || path.startsWith('/_/b/')

/** What the redirect path uses. */
export interface RedirectDeps {
  config: Config
  clock: Clock
  /** The public stats page's figures: the link's counters and rollups. */
  stats: StatsRepo
  /** The same figures read without awaiting (SQLite); null on PostgreSQL, where `stats` is awaited. */
  statsSync: Pick<RedirectSyncReads, 'publicStatsSync'> | null
  /** Rendered stats pages (the module clears them when notices may have been lost). */
  statsPages: StatsPageCache
  linkCache: Pick<LinkCache, 'get' | 'admitted'>
  clickBuffer: Pick<ClickBuffer, 'add'>
  /** PostgreSQL: clicks on links under limits are decided in the database first. Null on SQLite. */
  reservations: ClickReservations | null
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
  /** The password throttle and spent captcha solutions: in memory on SQLite, in the database across nodes. */
  gateLimits: GateLimits
  /** What routing rules read of a visit (country, agent…) and the visitor hash variants are chosen by. */
  facts: FactSources
}

/** The outcomes that serve the link (its page or its destination), counted as decide() says. */
type Served = Extract<Outcome, { kind: 'deepLink' | 'bridgePage' | 'redirect' }>

/** A request for a slug on a short host, as the handler parsed it. */
interface Asked {
  request: Request
  /** The custom domain it came to (null: the shared pool). */
  custom: ServedDomain | null
  method: string
  /** `{slug}+`: the public stats page. */
  statsPage: boolean
  /** The path as sent (a custom domain's fallbacks get it), and the query. */
  path: string
  search: string
}

export function createRedirectHandler(deps: RedirectDeps): RedirectHandler {
  const { config, clock, linkCache, cookieKey } = deps
  const { shortHosts, stats, statsSync, served, pages, statsPages, reservations } = deps
  const apiHost = new URL(config.baseUrl).host.toLowerCase()
  const behindCaddy = config.tlsMode === 'caddy'
  const fromTlsProxy = tlsProxyPeers(config.tlsAskAllowedCidrs)
  const keyed = (value: string) => createHmac('sha256', deps.visitorKey).update(value).digest('base64url').slice(0, 32)
  const captcha = new Captcha(createHmac('sha256', cookieKey).update('altcha').digest('base64url'), deps.gateLimits.spent)
  const gatePost = createGatePost({ cookieKey, secure: config.baseUrl.startsWith('https:'), captcha, keyed, throttle: deps.gateLimits.throttle })
  const count = createVisitCounter(deps, keyed)
  /** PostgreSQL: the stats reads under way, by link id, shared by the visits that wait for them. */
  const statsLoading = new Map<string, Promise<PublicStats | null>>()

  /** Rendered at most once a minute per link; reads the database like a cache miss (awaited on PostgreSQL only). */
  function statsResponse(entry: CachedLink, now: number): Response | Promise<Response> {
    const link = entry.row
    const cached = statsPages.get(link, now)
    if (cached) return cached
    const render = (data: PublicStats | null) =>
      data ? statsPages.set(link, now, statsPage({ shortUrl: shortUrl(deps, link), title: link.title, stats: data, now })) : notFoundPage()
    if (statsSync) return render(statsSync.publicStatsSync(link.id, now))
    let loading = statsLoading.get(link.id)
    if (!loading) {
      loading = stats.publicStats(link.id, now).finally(() => statsLoading.delete(link.id))
      statsLoading.set(link.id, loading)
    }
    // The first visit back renders and keeps the page; the others take a copy of it.
    return loading.then((data) => statsPages.get(link, now) ?? render(data))
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

  const notFound = (custom: ServedDomain | null, path: string) =>
    custom !== null && custom.notFoundUrl !== null ? fallback(custom.notFoundUrl, 302, custom, path) : notFoundPage()

  /**
   * With Caddy in front, a request it passed on over TLS is the evidence that the domain's certificate works.
   * Only the TLS proxy is believed (a socket peer on loopback or in LNK_TLS_ASK_ALLOWED_CIDRS: the peers the
   * TLS ask trusts), and only in that mode. X-Forwarded-For plays no part: it names the visitor.
   */
  function noteHttps(request: Request, custom: ServedDomain) {
    if (request.headers.get('x-forwarded-proto') === 'https' && fromTlsProxy(socketAddress(request))) served.sawHttps(custom.domain)
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
  function visitorPage(request: Request, url: URL): Response | Promise<Response> | null {
    const host = (request.headers.get('host') ?? url.host).toLowerCase()
    const target = shortHosts.resolve(host)
    if (target === null) return host === apiHost ? null : notFoundPage()
    const custom = target.custom
    if (custom !== null && behindCaddy) noteHttps(request, custom)
    const answered =
      request.method === 'GET' || request.method === 'HEAD'
        ? pages!.handle(request, url.pathname, url.search, { domain: target.domain, customWorkspaceId: custom === null ? null : custom.workspaceId })
        : null
    if (answered instanceof Promise) return answered.then((r) => r ?? notFound(custom, url.pathname))
    return answered ?? notFound(custom, url.pathname)
  }

  async function captchaChallenge(slug: string, query: string, now: number) {
    return captchaPage(slug, await captcha.challenge(now), undefined, query)
  }

  /** The query as a URL serializes it (escaped the standard way), for the pages that post it back. */
  const normalized = (request: Request) => new URL(request.url).search

  /** The visit's facts that answering needs beyond the link. */
  interface Seen extends Asked {
    ip: string
    ua: string
    now: number
    ipHash: string | null
    /** The link's admitted addresses, when it has a uniqueIpLimit. */
    admitted: Set<string> | null
    /** Where the link's rules or variants send this visit; null when it has neither, or nothing was chosen. */
    route: Route | null
  }

  /** What decide() said, with the custom domain's answers for an unknown slug and a used-up link. */
  function respond(outcome: Outcome, entry: CachedLink | null, v: Seen): Response | Promise<Response> {
    if (outcome.kind === 'notFound') return notFound(v.custom, v.path)
    // A link's own fallbackUrl came first (decide); the domain's applies to links without one.
    if (outcome.kind === 'gone' && v.custom !== null && v.custom.expiredUrl !== null) return fallback(v.custom.expiredUrl, 302, v.custom, v.path)
    return answer(outcome, entry!, v)
  }

  /**
   * PostgreSQL, a person's click on a link under limits: the database decides first (every node's clicks
   * meet there), and a refusal answers as decide() would have with the limit reached. Null: no reservation
   * is needed (SQLite's in-memory counters decide; a link without limits never waits; under a uniqueIpLimit
   * alone, an address this node knows as admitted is admitted everywhere).
   */
  function reserve(outcome: Served, entry: CachedLink, v: Seen): Promise<Response> | null {
    const link = entry.row
    if (reservations === null || (link.clickLimit === null && link.uniqueIpLimit === null)) return null
    const address = link.uniqueIpLimit === null ? null : count.address(v.ip, v.ipHash)
    const known = address !== null && v.admitted !== null && v.admitted.has(address)
    if (link.clickLimit === null && known) return null
    return reservations.reserveClick(link.id, known ? null : address, v.now).then((verdict) => {
      if (verdict === 'ok') return serve(outcome, entry, v, true)
      // What this node knows of the link catches up, so its next visits are refused without a read.
      if (verdict === 'clickLimit') entry.clicksSoFar = Math.max(entry.clicksSoFar, link.clickLimit ?? 0)
      else entry.admitted = null
      return respond(unavailable(link, verdict), entry, v)
    })
  }

  /** Answers what decide() said; counting happens here, just before the destination is built. */
  function answer(outcome: Exclude<Outcome, { kind: 'notFound' }>, entry: CachedLink, v: Seen): Response | Promise<Response> {
    const { request, search, ip, ua, now, route } = v
    const link = entry.row
    // The gate pages post back to the same URL, query included, so the visitor's parameters reach the destination.
    switch (outcome.kind) {
      case 'statsPage':
        return statsResponse(entry, now)
      case 'sandbox':
        return sandboxPage(link, buildDestination(link, search, null, route), route)
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
        return consentPage(link.slug, buildDestination(link, search, null, route), normalized(request))
      case 'preview':
        // Crawlers are never routed: the card and its link name the link's own destination.
        if (outcome.count === 'bot') count.botHit(entry, request, ip, ua, now, null)
        return previewPage(link, shortUrl(deps, link), buildDestination(link, search, null))
    }
    if (outcome.count === 'click') return reserve(outcome, entry, v) ?? serve(outcome, entry, v, false)
    return serve(outcome, entry, v, false)
  }

  /** The visit served: counted (a bot's hit, or a click unless `counted` already), then the link's answer. */
  function serve(outcome: Served, entry: CachedLink, v: Seen, counted: boolean): Response | Promise<Response> {
    const { request, search, ip, ua, now, route } = v
    const link = entry.row
    if (outcome.count === 'bot') count.botHit(entry, request, ip, ua, now, route)
    const clickId = outcome.count === 'click' ? count.click(entry, request, ip, ua, now, v.ipHash, v.admitted, counted, route) : null
    if (outcome.kind === 'bridgePage' && pages !== null) {
      // A page deleted since the link was cached: the redirect goes ahead.
      const shown = pages.show(request, link.bridgePageId!)
      if (shown instanceof Promise) return shown.then((page) => page ?? destinationAnswer(outcome, link, search, clickId, route))
      if (shown !== null) return shown
    }
    return destinationAnswer(outcome, link, search, clickId, route)
  }

  /** The redirect to the destination chosen (or the page opening its app). */
  function destinationAnswer(outcome: Served, link: RedirectLink, search: string, clickId: string | null, route: Route | null): Response {
    const destination = buildDestination(link, search, clickId, route)
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
    if ((method !== 'GET' && method !== 'HEAD' && method !== 'POST') || isReservedSlug(slug))
      return served.size === 0 ? null : otherPath(request, parsed ?? new URL(raw))
    const host = (request.headers.get('host') ?? (parsed ?? new URL(raw)).host).toLowerCase()
    const target = shortHosts.resolve(host)
    if (target === null) return host === apiHost ? null : notFoundPage()
    const custom = target.custom
    if (custom !== null && behindCaddy) noteHttps(request, custom)

    const found = linkCache.get(target.domain, slug)
    const asked: Asked = { request, custom, method, statsPage: match[2] === '+', path, search }
    if (found instanceof Promise) return found.then((f) => visitLink(f, asked))
    return visitLink(found, asked)
  }

  /** A visit to a slug on a short host, its link (or null) found: the admitted addresses, decide(), the answer. */
  function visitLink(found: CachedLink | null, asked: Asked): Response | Promise<Response> {
    const { custom } = asked
    // A custom domain answers only the links of the workspace that holds it now: a former owner's links on it
    // (archived when it deleted the domain) never answer for the next owner.
    const entry = found !== null && custom !== null && found.row.workspaceId !== custom.workspaceId ? null : found
    // The costly facts (the admitted addresses, cookie signatures) are gathered only for links that ask for them.
    const admitted = entry !== null && entry.row.isActive && entry.row.uniqueIpLimit !== null ? linkCache.admitted(entry) : null
    if (admitted instanceof Promise) return admitted.then((a) => decideVisit(entry, a, asked))
    return decideVisit(entry, admitted, asked)
  }

  function decideVisit(entry: CachedLink | null, admitted: Set<string> | null, asked: Asked): Response | Promise<Response> {
    const { request, method } = asked
    const link = entry === null ? null : entry.row
    const now = clock.now()
    const ip = clientIp(request, config) ?? ''
    const ua = request.headers.get('user-agent') ?? ''
    const ipHash = admitted !== null && ip ? keyed(`ip|${ip}`) : null
    const cookies = link !== null && (link.passwordHash !== null || link.captchaEnabled || link.consentRequired) ? request.headers.get('cookie') : null
    const visit: Visit = {
      method: method as Visit['method'],
      statsPage: asked.statsPage,
      now,
      clicksSoFar: entry === null ? 0 : entry.clicksSoFar,
      addressesAdmitted: ipHash === null ? null : admitted!.size,
      addressKnown: ipHash !== null && admitted!.has(ipHash),
      passedPassword: cookies !== null && hasGateCookie(cookieKey, 'pw', link!, cookies, now),
      passedCaptcha: cookies !== null && hasGateCookie(cookieKey, 'cap', link!, cookies, now),
      passedConsent: cookies !== null && hasGateCookie(cookieKey, 'ok', link!, cookies, now),
      bot: isBot(ua),
      socialCrawler: isSocialCrawler(ua),
      platform: link !== null && link.deepLinkEnabled ? mobilePlatform(ua) : null,
    }
    // A link with neither rules nor variants goes the way it always went: no facts, nothing chosen.
    if (link === null || (link.routingRules === null && link.variants === null))
      return respond(decide(link, visit), entry, { ...asked, ip, ua, now, ipHash, admitted, route: null })
    const live = { live: { request, ip, now, search: asked.search } }
    const routed = decideRouted(link, visit, () => routeOf(link, createVisitFacts(live, deps.facts)))
    return respond(routed.outcome, entry, { ...asked, ip, ua, now, ipHash, admitted, route: routed.route })
  }
}
