// What a visit to a short link gets, as the contract's order of checks (section 4): a pure function of the
// link and of what the handler found out about the request. The handler does the I/O (cache, cookies,
// counting) and answers the outcome; nothing here reads, writes or awaits.
//
// A link with routing rules or A/B variants (contract 7.1) has its destination chosen where the contract puts
// it: after the gates and the crawler's preview (crawlers are never routed), before the deep link, which
// opens the app of the destination chosen. decideRouted() asks for the choice only there.
import type { RedirectLink } from '../links'
import type { MobilePlatform } from '../../platform/agents'
import { findApp, type DeepLinkApp } from './deep-links'
import type { Route } from './routing'

/** What the handler found out about one request, before anything is answered or counted. */
export interface Visit {
  method: 'GET' | 'HEAD' | 'POST'
  /** `{slug}+`: the link's public stats page. */
  statsPage: boolean
  now: number
  /** Clicks counted so far: stored, buffered and served since the link was loaded. */
  clicksSoFar: number
  /** Under a uniqueIpLimit, with the visitor's address known: addresses admitted so far; else null. */
  addressesAdmitted: number | null
  /** Under a uniqueIpLimit: the visitor's address is one of those admitted. */
  addressKnown: boolean
  /** The gate cookies the visitor holds (looked at only for the gates the link has). */
  passedPassword: boolean
  passedCaptcha: boolean
  passedConsent: boolean
  bot: boolean
  socialCrawler: boolean
  /** The visitor's phone platform, looked at only when the link has deep links. */
  platform: MobilePlatform
}

/** What a served visit counts: a person's click, a bot's hit (kept apart), or nothing (HEAD). */
export type Count = 'click' | 'bot' | 'none'
export type Unavailable = 'expired' | 'clickLimit' | 'uniqueIpLimit'

export type Outcome =
  | { kind: 'notFound' }
  | { kind: 'statsPage' }
  | { kind: 'sandbox' }
  /** 302 to the link's fallbackUrl. */
  | { kind: 'fallback' }
  | { kind: 'gone'; reason: Unavailable }
  /** A gate page posted back: check what was sent. */
  | { kind: 'gatePost' }
  | { kind: 'password' }
  | { kind: 'captcha' }
  | { kind: 'consent' }
  | { kind: 'preview'; count: Count }
  | { kind: 'deepLink'; count: Count; app: DeepLinkApp; platform: 'ios' | 'android' }
  /** The link's bridge page instead of the redirect. */
  | { kind: 'bridgePage'; count: Count }
  | { kind: 'redirect'; count: Count; cacheable: boolean }

const NOT_FOUND: Outcome = { kind: 'notFound' }
const STATS_PAGE: Outcome = { kind: 'statsPage' }
const SANDBOX: Outcome = { kind: 'sandbox' }
const FALLBACK: Outcome = { kind: 'fallback' }
const GATE_POST: Outcome = { kind: 'gatePost' }
const PASSWORD: Outcome = { kind: 'password' }
const CAPTCHA: Outcome = { kind: 'captcha' }
const CONSENT: Outcome = { kind: 'consent' }
const GONE: Record<Unavailable, Outcome> = {
  expired: { kind: 'gone', reason: 'expired' },
  clickLimit: { kind: 'gone', reason: 'clickLimit' },
  uniqueIpLimit: { kind: 'gone', reason: 'uniqueIpLimit' },
}
const PREVIEW_GET: Outcome = { kind: 'preview', count: 'bot' }
const PREVIEW_HEAD: Outcome = { kind: 'preview', count: 'none' }
/** The redirect outcomes made once, not per visit: by what is counted, then cacheable or not. */
const REDIRECT: Record<Count, readonly [Outcome, Outcome]> = {
  click: [
    { kind: 'redirect', count: 'click', cacheable: false },
    { kind: 'redirect', count: 'click', cacheable: true },
  ],
  bot: [
    { kind: 'redirect', count: 'bot', cacheable: false },
    { kind: 'redirect', count: 'bot', cacheable: true },
  ],
  none: [
    { kind: 'redirect', count: 'none', cacheable: false },
    { kind: 'redirect', count: 'none', cacheable: true },
  ],
}

/** A used-up or expired link's answer: its fallbackUrl, else the page saying why (the handler's, after a refused reservation, too). */
export const unavailable = (link: RedirectLink, reason: Unavailable): Outcome => (link.fallbackUrl ? FALLBACK : GONE[reason])

/** A person's GET is a click; a bot's GET is a bot hit (never counted, no click id); HEAD is neither. */
const countOf = (v: Visit): Count => (v.method !== 'GET' ? 'none' : v.bot ? 'bot' : 'click')

/** Links checked afresh on each visit (limits, expiry, gates, click ids) are never cached by others. */
const perVisit = (l: RedirectLink) =>
  l.passwordHash !== null ||
  l.captchaEnabled ||
  l.consentRequired ||
  l.expiresAt !== null ||
  l.clickLimit !== null ||
  l.uniqueIpLimit !== null ||
  l.conversionTracking ||
  // Each visitor may be sent elsewhere: a shared cache must never keep one visitor's redirect for the next.
  l.routingRules !== null ||
  l.variants !== null

// The checks, each answering or passing (null) to the next. Plain functions chained in decide() rather than
// a list looped over: every call site stays direct, which keeps the redirect as fast as a hand-written chain.
const statsPage = (l: RedirectLink, v: Visit) => (!v.statsPage ? null : l.publicStatsEnabled && !l.isTest && v.method !== 'POST' ? STATS_PAGE : NOT_FOUND)
const testLink = (l: RedirectLink) => (l.isTest ? SANDBOX : null)
const expired = (l: RedirectLink, v: Visit) => (l.expiresAt !== null && l.expiresAt <= v.now ? unavailable(l, 'expired') : null)
const clickLimit = (l: RedirectLink, v: Visit) => (l.clickLimit !== null && v.clicksSoFar >= l.clickLimit ? unavailable(l, 'clickLimit') : null)
const uniqueIpLimit = (l: RedirectLink, v: Visit) =>
  l.uniqueIpLimit !== null && v.addressesAdmitted !== null && !v.addressKnown && v.addressesAdmitted >= l.uniqueIpLimit ? unavailable(l, 'uniqueIpLimit') : null
const gatePostedBack = (v: Visit) => (v.method === 'POST' ? GATE_POST : null)
const password = (l: RedirectLink, v: Visit) => (l.passwordHash !== null && !v.passedPassword ? PASSWORD : null)
const captcha = (l: RedirectLink, v: Visit) => (l.captchaEnabled && !v.passedCaptcha ? CAPTCHA : null)
const consent = (l: RedirectLink, v: Visit) => (l.consentRequired && !v.passedConsent ? CONSENT : null)
/** A crawler's GET is a bot's hit, whatever else its user agent says. */
const socialCrawlerPreview = (v: Visit) => (!v.socialCrawler ? null : v.method === 'GET' ? PREVIEW_GET : PREVIEW_HEAD)
/** `destinationUrl`: the link's own, or the one its rules or variants chose. */
function mobileDeepLink(l: RedirectLink, v: Visit, destinationUrl: string): Outcome | null {
  const app = l.deepLinkEnabled && v.platform ? findApp(new URL(destinationUrl)) : undefined
  return app ? { kind: 'deepLink', count: countOf(v), app, platform: v.platform! } : null
}
const BRIDGE_PAGE: Record<Count, Outcome> = {
  click: { kind: 'bridgePage', count: 'click' },
  bot: { kind: 'bridgePage', count: 'bot' },
  none: { kind: 'bridgePage', count: 'none' },
}
const bridgePage = (l: RedirectLink, v: Visit) => (l.bridgePageId !== null ? BRIDGE_PAGE[countOf(v)] : null)
const redirect = (l: RedirectLink, v: Visit): Outcome => REDIRECT[countOf(v)][(l.redirectStatus === 301 || l.redirectStatus === 308) && !perVisit(l) ? 1 : 0]

/** The checks that answer before a destination is chosen, up to the crawler's preview; null: the visit is served. */
const beforeDestination = (link: RedirectLink, visit: Visit): Outcome | null =>
  statsPage(link, visit) ??
  testLink(link) ??
  expired(link, visit) ??
  clickLimit(link, visit) ??
  uniqueIpLimit(link, visit) ??
  gatePostedBack(visit) ??
  password(link, visit) ??
  captcha(link, visit) ??
  consent(link, visit) ??
  socialCrawlerPreview(visit)

/** How a served visit reaches `destinationUrl`: the app, the bridge page or the redirect. */
const towards = (link: RedirectLink, visit: Visit, destinationUrl: string): Outcome =>
  mobileDeepLink(link, visit, destinationUrl) ?? bridgePage(link, visit) ?? redirect(link, visit)

/** The contract's order of checks (section 4): the first that answers decides the visit. */
export function decide(link: RedirectLink | null, visit: Visit): Outcome {
  if (link === null || !link.isActive) return NOT_FOUND
  return beforeDestination(link, visit) ?? towards(link, visit, link.destinationUrl)
}

/** A routed link's outcome, and the route chosen (null where none was: a gate, a crawler, a used-up link…). */
export interface Routed<R extends Route = Route> {
  outcome: Outcome
  route: R | null
}

/**
 * decide() for a link with routing rules or variants. `choose` is called at most once, and only where a
 * destination is named: a served visit (its app or redirect), a test link's sandbox page (where it would have
 * gone) and the consent page (where Continue leads). Gates, crawlers and used-up links never route.
 */
export function decideRouted<R extends Route>(link: RedirectLink, visit: Visit, choose: () => R): Routed<R> {
  if (!link.isActive) return { outcome: NOT_FOUND, route: null }
  const early = beforeDestination(link, visit)
  if (early === null) {
    const route = choose()
    return { outcome: towards(link, visit, route.destinationUrl), route }
  }
  return { outcome: early, route: early.kind === 'sandbox' || early.kind === 'consent' ? choose() : null }
}
