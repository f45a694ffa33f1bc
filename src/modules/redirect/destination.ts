// The URL a visitor is sent to: always a stored destination (never anything from the request): the link's
// own, or the one its routing rules or A/B variants chose (routing.ts), with the link's UTM fields
// (replacing the same keys), the visitor's own query parameters where the destination has none of that
// name, and lnk_cid for conversion tracking.
import type { RedirectLink } from '../links'
import type { Route } from './routing'

const UTM: [keyof RedirectLink, string][] = [
  ['utmSource', 'utm_source'],
  ['utmMedium', 'utm_medium'],
  ['utmCampaign', 'utm_campaign'],
  ['utmTerm', 'utm_term'],
  ['utmContent', 'utm_content'],
]

/** The stored destination as a URL serializes it, once per loaded link. */
const plain = new WeakMap<RedirectLink, string>()
/** The same for the destinations its rules and variants choose (at most 60 a link), once each per loaded link. */
const plainRouted = new WeakMap<RedirectLink, Map<string, string>>()

const hasUtm = (link: RedirectLink) => !!(link.utmSource || link.utmMedium || link.utmCampaign || link.utmTerm || link.utmContent)

function serialized(link: RedirectLink, to: string): string {
  if (to === link.destinationUrl) {
    let href = plain.get(link)
    if (href === undefined) plain.set(link, (href = new URL(to).href))
    return href
  }
  let known = plainRouted.get(link)
  if (known === undefined) plainRouted.set(link, (known = new Map()))
  let href = known.get(to)
  if (href === undefined) known.set(to, (href = new URL(to).href))
  return href
}

/**
 * `search` is the request's query string, '?' included ('' for none); `route` the destination chosen by the
 * link's rules or variants (null: the link has neither).
 */
export function buildDestination(link: RedirectLink, search: string, clickId: string | null, route: Route | null = null): string {
  const to = route === null ? link.destinationUrl : route.destinationUrl
  // Most visits add nothing to the destination: skip parsing and serializing it again.
  if (search === '' && !(link.conversionTracking && clickId) && !hasUtm(link)) return serialized(link, to)
  const url = new URL(to)
  const own = new Set(url.searchParams.keys())
  for (const [field, param] of UTM) {
    const value = link[field]
    if (typeof value === 'string' && value !== '') {
      url.searchParams.set(param, value)
      own.add(param)
    }
  }
  for (const [name, value] of new URLSearchParams(search)) if (!own.has(name) && name !== 'lnk_cid') url.searchParams.append(name, value)
  if (link.conversionTracking && clickId) url.searchParams.set('lnk_cid', clickId)
  return url.href
}
