// Slug rules and short-URL building: pure, and used on the redirect path as well as by the links service.
import type { Config } from '../../platform/config'

/** Paths that belong to the service itself (contract section 4), refused as slugs in any letter case. */
export const RESERVED_SLUGS = ['v1', 'healthz', 'readyz', 'metrics', 'p', 'qr', '_', '.well-known', 'console']
const RESERVED = new Set(RESERVED_SLUGS.map((s) => s.toLowerCase()))

export const isReservedSlug = (slug: string) => RESERVED.has(slug.toLowerCase())

const schemes = new Map<string, string>()

/** `<scheme of LNK_BASE_URL>://<domain>/<slug>`; also on the redirect path, so the scheme is parsed once. */
export function shortUrl(ctx: { config: Pick<Config, 'baseUrl'> }, link: { domain: string; slug: string }) {
  let scheme = schemes.get(ctx.config.baseUrl)
  if (scheme === undefined) schemes.set(ctx.config.baseUrl, (scheme = new URL(ctx.config.baseUrl).protocol))
  return `${scheme}//${link.domain}/${link.slug}`
}
