// The redirect path: `GET|HEAD|POST {short domain}/{slug}`. Checks run in the contract's order:
// unknown/inactive -> 404 page; test link -> sandbox page; expired or a limit reached -> fallbackUrl or
// 410; password; captcha; consent; social crawler -> preview; mobile + deepLinkEnabled -> app page;
// otherwise the redirect. It reads links from memory, never awaits the database, and hands clicks (and
// bots' hits, flagged) to the buffer. Only the password and captcha checks await (hash and proof
// verification).
import { readBodyCapped } from '../../http/body'
import { createHmac } from 'node:crypto'
import type { Runtime } from '../../runtime'
import { clientIp } from '../../http/request-context'
import { sortableId } from '../../platform/random'
import { isReservedSlug, shortUrl } from '../links/service'
import { isBot, isSocialCrawler, mobilePlatform } from './agents'
import type { CachedLink } from './cache'
import { appUrl, findApp } from './deep-links'
import { buildDestination } from './destination'
import { Captcha, gateCookie, hasGateCookie, PasswordThrottle, type Gate } from './gates'
import { captchaPage, consentPage, deepLinkPage, gonePage, notFoundPage, passwordPage, previewPage, sandboxPage, statsPage, throttledPage } from './pages'
import { createStatsRepo, StatsPageCache } from './stats-repo'

const SLUG_PATH = /^\/([A-Za-z0-9_-]{1,64})(\+?)$/
const FORM_LIMIT = 16 * 1024

export type RedirectHandler = (request: Request) => Response | Promise<Response> | null

export function createRedirectHandler(rt: Runtime): RedirectHandler {
  const shortDomains = new Set(rt.config.shortDomains)
  const secure = rt.config.baseUrl.startsWith('https:')
  const throttle = new PasswordThrottle()
  const captcha = new Captcha(createHmac('sha256', rt.cookieKey).update('altcha').digest('base64url'))
  const keyed = (value: string) => createHmac('sha256', rt.visitorKey).update(value).digest('base64url').slice(0, 32)
  const stats = createStatsRepo(rt.db.db)
  const statsPages = new StatsPageCache()

  function noindex(res: Response) {
    res.headers.set('x-robots-tag', 'noindex')
    return res
  }

  /**
   * `{slug}+`: the link's public stats page, only with publicStatsEnabled (test links record nothing and
   * have none). Rendered at most once a minute per link; reads the database synchronously, like a cache miss.
   */
  function statsResponse(entry: CachedLink, method: string): Response {
    const link = entry.row
    if (!link.publicStatsEnabled || link.isTest || method === 'POST') return noindex(notFoundPage())
    const now = rt.clock.now()
    const cached = statsPages.get(link, now)
    if (cached) return cached
    const data = stats.publicStatsSync(link.id, now)
    if (!data) return noindex(notFoundPage())
    return statsPages.set(link, now, statsPage({ shortUrl: shortUrl(rt, link), title: link.title, stats: data, now }))
  }

  function redirectTo(location: string, status: number, cacheable: boolean) {
    return new Response(null, {
      status,
      headers: {
        location,
        // Permanent redirects of links without per-visit checks may be cached briefly; everything else is
        // decided afresh on each visit (limits, expiry, click counting).
        'cache-control': cacheable && (status === 301 || status === 308) ? 'public, max-age=300' : 'private, no-store',
        // Crawlers and phones may get a page instead of this redirect: a shared cache must tell them apart.
        vary: 'User-Agent',
        'x-robots-tag': 'noindex',
        'referrer-policy': 'unsafe-url',
      },
    })
  }

  /** Why the link cannot be served now, or null. Counts nothing. */
  function unavailable(entry: CachedLink, ipHash: string | null, now: number): string | null {
    const link = entry.row
    if (link.expiresAt !== null && link.expiresAt <= now) return 'This link has expired.'
    if (link.clickLimit !== null && entry.served >= link.clickLimit) return 'This link has reached its click limit.'
    if (link.uniqueIpLimit !== null && ipHash !== null) {
      const admitted = rt.linkCache.admitted(entry)
      if (!admitted.has(ipHash) && admitted.size >= link.uniqueIpLimit) return 'This link has reached the number of visitors it admits.'
    }
    return null
  }

  /** Counts the click (synchronously, so concurrent visitors never overshoot a limit) and buffers it. */
  function record(entry: CachedLink, request: Request, ip: string, ua: string, now: number): string {
    const link = entry.row
    entry.served++
    let newAddress: string | null = null
    if (link.uniqueIpLimit !== null) {
      const ipHash = keyed(`ip|${ip}`)
      const admitted = rt.linkCache.admitted(entry)
      if (!admitted.has(ipHash)) {
        admitted.add(ipHash)
        newAddress = ipHash
      }
    }
    return buffer(entry, request, ip, ua, now, newAddress, false)
  }

  /** A bot's hit (a crawler's preview too): buffered for the bot count, touching no limit, given no click id. */
  function recordBot(entry: CachedLink, request: Request, ip: string, ua: string, now: number) {
    buffer(entry, request, ip, ua, now, null, true)
  }

  function buffer(entry: CachedLink, request: Request, ip: string, ua: string, now: number, newAddress: string | null, isBot: boolean): string {
    const link = entry.row
    const clickId = sortableId('clk', now)
    const referrer = request.headers.get('referer')
    let referrerHost: string | null = null
    if (referrer) {
      try {
        referrerHost = new URL(referrer).hostname.toLowerCase()
      } catch {
        referrerHost = null
      }
    }
    entry.ref ??= { id: link.id, slug: link.slug, domain: link.domain, shortUrl: shortUrl(rt, link), destinationUrl: link.destinationUrl }
    // Plain data: the visitor hash, the enrichment (country, device…) and the event are made by the
    // writer, off the redirect path.
    rt.clickBuffer.add({
      id: clickId,
      linkId: link.id,
      workspaceId: link.workspaceId,
      clickedAt: now,
      ip,
      userAgent: ua.slice(0, 512) || null,
      referrer: referrer?.slice(0, 2048) ?? null,
      referrerHost,
      newAddress,
      isBot,
      link: entry.ref,
    })
    return clickId
  }

  async function readForm(request: Request): Promise<URLSearchParams | null> {
    const length = Number(request.headers.get('content-length') ?? 0)
    if (length > FORM_LIMIT) return null
    const bytes = await readBodyCapped(request, FORM_LIMIT).catch(() => null)
    return bytes && new URLSearchParams(new TextDecoder().decode(bytes))
  }

  /** POST back from a gate page: check what was sent, set the gate's cookie, and send the visitor on. */
  async function passGate(entry: CachedLink, request: Request, url: URL, ip: string, now: number): Promise<Response> {
    const link = entry.row
    const form = await readForm(request)
    const gate = form?.get('gate')
    const back = (g: Gate) => new Response(null, { status: 303, headers: { location: `${url.pathname}${url.search}`, 'set-cookie': gateCookie(rt.cookieKey, g, link, now, secure), 'cache-control': 'no-store', 'x-robots-tag': 'noindex' } })
    if (gate === 'password' && link.passwordHash) {
      const throttleKey = `${link.id}|${keyed(`ip|${ip}`)}`
      // Counted before the (slow) hash check, so concurrent guesses cannot run past the limit.
      const wait = throttle.attempt(throttleKey, now)
      if (wait) return throttledPage(wait)
      const password = form?.get('password') ?? ''
      if (password && password.length <= 128 && (await Bun.password.verify(password, link.passwordHash))) {
        throttle.succeed(throttleKey)
        return back('pw')
      }
      const after = throttle.blockedFor(throttleKey, now)
      return after ? throttledPage(after) : passwordPage(link.slug, { error: 'That password is not right. Try again.', query: url.search })
    }
    if (gate === 'captcha' && link.captchaEnabled) {
      if (await captcha.verify(form?.get('altcha') ?? '', now)) return back('cap')
      return captchaPage(link.slug, await captcha.challenge(now), 'The check did not pass. It will run again.', url.search)
    }
    if (gate === 'consent' && link.consentRequired) return back('ok')
    return new Response(null, { status: 303, headers: { location: `${url.pathname}${url.search}`, 'cache-control': 'no-store' } })
  }

  async function captchaChallenge(slug: string, query: string, now: number) {
    return captchaPage(slug, await captcha.challenge(now), undefined, query)
  }

  return function handle(request: Request): Response | Promise<Response> | null {
    const url = new URL(request.url)
    const match = SLUG_PATH.exec(url.pathname)
    if (!match) return null
    const host = (request.headers.get('host') ?? url.host).toLowerCase()
    if (!shortDomains.has(host)) return null
    const slug = match[1]!
    if (isReservedSlug(slug)) return null
    const method = request.method
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') return null

    const entry = rt.linkCache.get(host, slug)
    if (!entry || !entry.row.isActive) return noindex(notFoundPage())
    const link = entry.row
    // {slug}+ is the public stats page; it exists only for links with publicStatsEnabled.
    if (match[2]) return statsResponse(entry, method)
    if (link.isTest) return sandboxPage(link, buildDestination(link, url, null))

    const now = rt.clock.now()
    const ip = clientIp(request, rt.config) ?? ''
    const ua = request.headers.get('user-agent') ?? ''
    const bot = isBot(ua)
    const ipHash = link.uniqueIpLimit !== null && ip ? keyed(`ip|${ip}`) : null
    const reason = unavailable(entry, ipHash, now)
    if (reason) return link.fallbackUrl ? redirectTo(link.fallbackUrl, 302, false) : gonePage(reason)

    if (method === 'POST') return passGate(entry, request, url, ip, now)
    const cookies = request.headers.get('cookie')
    // The gate pages post back to the same URL, query included, so the visitor's parameters reach the destination.
    if (link.passwordHash && !hasGateCookie(rt.cookieKey, 'pw', link, cookies, now)) return passwordPage(link.slug, { query: url.search })
    if (link.captchaEnabled && !hasGateCookie(rt.cookieKey, 'cap', link, cookies, now)) return captchaChallenge(link.slug, url.search, now)
    if (link.consentRequired && !hasGateCookie(rt.cookieKey, 'ok', link, cookies, now)) return consentPage(link.slug, buildDestination(link, url, null), url.search)

    if (isSocialCrawler(ua)) {
      if (method === 'GET') recordBot(entry, request, ip, ua, now)
      return previewPage(link, shortUrl(rt, link), buildDestination(link, url, null))
    }

    // A person's GET is a click; a bot's GET is a bot hit (kept apart, never counted, no click id); HEAD is neither.
    if (bot && method === 'GET') recordBot(entry, request, ip, ua, now)
    const clickId = !bot && method === 'GET' ? record(entry, request, ip, ua, now) : null
    const destination = buildDestination(link, url, clickId)

    const platform = link.deepLinkEnabled ? mobilePlatform(ua) : null
    if (platform) {
      const app = findApp(new URL(destination))
      if (app) return deepLinkPage(app.name, appUrl(app, new URL(destination), platform), destination)
    }
    const perVisit = link.passwordHash !== null || link.captchaEnabled || link.consentRequired || link.expiresAt !== null || link.clickLimit !== null || link.uniqueIpLimit !== null || link.conversionTracking
    return redirectTo(destination, link.redirectStatus, !perVisit)
  }
}

