// The URL a visitor is sent to: always the stored destination (never anything from the request), with the
// link's UTM fields (replacing the same keys), the visitor's own query parameters where the destination
// has none of that name, and lnk_cid for conversion tracking.
import type { LinkRow } from '../links/repo'

const UTM: [keyof LinkRow, string][] = [
  ['utmSource', 'utm_source'],
  ['utmMedium', 'utm_medium'],
  ['utmCampaign', 'utm_campaign'],
  ['utmTerm', 'utm_term'],
  ['utmContent', 'utm_content'],
]

export function buildDestination(link: LinkRow, requestUrl: URL, clickId: string | null): string {
  const url = new URL(link.destinationUrl)
  const own = new Set(url.searchParams.keys())
  for (const [field, param] of UTM) {
    const value = link[field]
    if (typeof value === 'string' && value !== '') {
      url.searchParams.set(param, value)
      own.add(param)
    }
  }
  for (const [name, value] of requestUrl.searchParams) if (!own.has(name) && name !== 'lnk_cid') url.searchParams.append(name, value)
  if (link.conversionTracking && clickId) url.searchParams.set('lnk_cid', clickId)
  return url.href
}
