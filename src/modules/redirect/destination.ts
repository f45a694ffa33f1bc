// The URL a visitor is sent to: always the stored destination (never anything from the request), with the
// link's UTM fields (replacing the same keys), the visitor's own query parameters where the destination
// has none of that name, and lnk_cid for conversion tracking.
import type { RedirectLink } from '../links'

const UTM: [keyof RedirectLink, string][] = [
  ['utmSource', 'utm_source'],
  ['utmMedium', 'utm_medium'],
  ['utmCampaign', 'utm_campaign'],
  ['utmTerm', 'utm_term'],
  ['utmContent', 'utm_content'],
]

/** The stored destination as a URL serializes it, once per loaded link. */
const plain = new WeakMap<RedirectLink, string>()

const hasUtm = (link: RedirectLink) => !!(link.utmSource || link.utmMedium || link.utmCampaign || link.utmTerm || link.utmContent)

/** `search` is the request's query string, '?' included ('' for none). */
export function buildDestination(link: RedirectLink, search: string, clickId: string | null): string {
  // Most visits add nothing to the destination: skip parsing and serializing it again.
  if (search === '' && !(link.conversionTracking && clickId) && !hasUtm(link)) {
    let href = plain.get(link)
    if (href === undefined) plain.set(link, (href = new URL(link.destinationUrl).href))
    return href
  }
  const url = new URL(link.destinationUrl)
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
