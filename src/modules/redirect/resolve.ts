// `POST /links/{id}/resolve` (contract 7.1): what a described visit would get, asked of the same parts a real
// visit goes through (the link cache's entry and live counters, decideRouted(), the rules and variants through
// explain(), buildDestination()), with nothing recorded: no click, no counter, no admitted address, no limit
// moved.
//
// Outcomes beyond the contract's list map onto it: a paused link, or one on a domain no longer served to its
// workspace, is what a visitor would find gone (404) → `gone`; a social crawler's preview page is `redirect` to
// the unrouted destination (crawlers are never routed); a deep link's app page is `redirect` to the destination
// it falls back to. A gate (password, captcha, consent) is named with the destination the visitor reaches once
// through it; a used-up or expired link gives its fallbackUrl (or the custom domain's expired URL) as
// `fallback`, or `gone` with no destination.
import { createHmac } from 'node:crypto'
import { isIP } from 'node:net'
import { isBot, isSocialCrawler, mobilePlatform } from '../../platform/agents'
import type { Clock } from '../../platform/clock'
import { Issues, notFound } from '../../platform/errors'
import { unmapIp } from '../../platform/ip'
import type { Caller } from '../identity'
import { getLink, type LinksCtx, type RedirectLink } from '../links'
import type { LinkCache } from './cache'
import { decideRouted, type Outcome, type Visit } from './decide'
import { buildDestination } from './destination'
import { fillFallback } from './domain-fallbacks'
import { explain, type Route, type RuleTrace, type Trigger } from './routing'
import type { ShortHosts } from './short-hosts'
import { createVisitFacts, type DescribedVisit, type FactSources } from './visit-facts'

export type ResolveOutcome = 'redirect' | 'fallback' | 'gone' | 'password' | 'captcha' | 'consent' | 'bridge_page' | 'sandbox'

export interface ResolveInput {
  country?: string
  city?: string
  userAgent?: string
  acceptLanguage?: string
  ip?: string
  referrer?: string
  query?: Record<string, string>
  /** ISO 8601 with a zone; the visit happens now when absent. */
  at?: string
  trigger?: Trigger
}

export interface Resolution {
  destinationUrl: string | null
  ruleId: string | null
  variantId: string | null
  outcome: ResolveOutcome
  trace: RuleTrace[]
}

export interface ResolveDeps {
  links: LinksCtx
  clock: Pick<Clock, 'now'>
  linkCache: Pick<LinkCache, 'get' | 'admitted'>
  shortHosts: Pick<ShortHosts, 'resolve'>
  sources: FactSources
  /** Key of the keyed hashes of client addresses (the uniqueIpLimit's admitted addresses are kept so). */
  visitorKey: Buffer
}

type Traced = Route & { trace: RuleTrace[] }

const GATES: Partial<Record<Outcome['kind'], ResolveOutcome>> = { password: 'password', captcha: 'captcha', consent: 'consent', sandbox: 'sandbox' }

const unrouted = (destinationUrl: string | null, outcome: ResolveOutcome): Resolution => ({ destinationUrl, ruleId: null, variantId: null, outcome, trace: [] })

export async function resolveVisit(deps: ResolveDeps, caller: Caller, id: string, input: ResolveInput): Promise<Resolution> {
  // The link as its owner may read it (workspace, sandbox and scope rules), then as the redirect keeps it.
  const view = await getLink(deps.links, caller, id)
  const issues = new Issues()
  const ip = input.ip === undefined ? null : unmapIp(input.ip.trim())
  if (ip !== null && !isIP(ip)) issues.add('ip', 'must be an IPv4 or IPv6 address')
  const now = input.at === undefined ? deps.clock.now() : Date.parse(input.at)
  if (Number.isNaN(now)) issues.add('at', 'must be an ISO 8601 date-time with a zone')
  issues.throwIfAny()

  const found = await deps.linkCache.get(view.domain, view.slug)
  if (found === null) throw notFound(`Link ${id}`)
  const link = found.row
  const served = deps.shortHosts.resolve(link.domain)
  // A visitor on a domain that is not served, or served to another workspace now, finds nothing there.
  if (served === null || (served.custom !== null && served.custom.workspaceId !== link.workspaceId)) return unrouted(null, 'gone')

  const admitted = link.isActive && link.uniqueIpLimit !== null ? await deps.linkCache.admitted(found) : null
  const ipHash = admitted !== null && ip ? createHmac('sha256', deps.visitorKey).update(`ip|${ip}`).digest('base64url').slice(0, 32) : null
  const ua = input.userAgent ?? ''
  const query = input.query ?? {}
  const qs = new URLSearchParams(Object.entries(query)).toString()
  const search = qs ? `?${qs}` : ''
  const described: DescribedVisit = { ...input, ip: ip ?? undefined, query }
  let traced: Traced | null = null
  const choose = (): Traced => (traced ??= explain(link, createVisitFacts({ described, now }, deps.sources)))
  // The handler's own order: the destination is chosen past the gates and the crawler's preview, or for the
  // sandbox and consent pages that name it.
  const { outcome, route } = decideRouted(link, visitOf(link, found.clicksSoFar, now, ua, ipHash, admitted), choose)
  switch (outcome.kind) {
    case 'notFound':
    case 'statsPage':
    case 'gatePost':
      return unrouted(null, 'gone')
    case 'fallback':
      return unrouted(link.fallbackUrl, 'fallback')
    case 'gone': {
      const custom = served.custom
      if (custom !== null && custom.expiredUrl !== null) return unrouted(fillFallback(custom.expiredUrl, custom.domain, `/${link.slug}`), 'fallback')
      return unrouted(null, 'gone')
    }
    case 'preview':
      return unrouted(buildDestination(link, search, null), 'redirect')
  }
  // Past a password or captcha the visitor is routed as anyone else: name where they would land.
  const chosen = route ?? choose()
  return {
    destinationUrl: buildDestination(link, search, null, chosen),
    ruleId: chosen.ruleId,
    variantId: chosen.variantId,
    outcome: GATES[outcome.kind] ?? (outcome.kind === 'bridgePage' ? 'bridge_page' : 'redirect'),
    trace: chosen.trace,
  }
}

/** What decide() is told of a described visit: a GET holding no gate cookies, so it meets every gate the link has. */
function visitOf(link: RedirectLink, clicksSoFar: number, now: number, ua: string, ipHash: string | null, admitted: Set<string> | null): Visit {
  return {
    method: 'GET',
    statsPage: false,
    now,
    clicksSoFar,
    addressesAdmitted: ipHash === null ? null : admitted!.size,
    addressKnown: ipHash !== null && admitted!.has(ipHash),
    passedPassword: false,
    passedCaptcha: false,
    passedConsent: false,
    bot: isBot(ua),
    socialCrawler: isSocialCrawler(ua),
    platform: link.deepLinkEnabled ? mobilePlatform(ua) : null,
  }
}
