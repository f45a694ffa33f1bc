// QR logic behind the routes: checking the style parameters, deciding what /qr/render may encode (only this
// service's short URLs: it is not an open QR generator), and rendering a link's code for download.
import type { Caller } from '../identity'
import type { ValidationIssue } from '../../platform/errors'
import { badRenderData, invalidQrQuery, repeatedParams } from './errors'
import { getLink, type LinksCtx } from '../links'
import { renderQr, type QrRequest, type Rendered } from './cache'
import { contrastRatio, ECC_LEVELS, normaliseColour, QR_FORMATS, QR_LIMITS, type QrFormat } from './render'

/** The query as sent (strings) or as coerced by the route schema (numbers); arrays when a name repeats. */
export type QrQueryInput = Record<string, unknown>

export type QrParams = Omit<QrRequest, 'data'>

/** A parameter given twice is refused: which one would count is not obvious to the sender. */
export function refuseRepeated(url: string) {
  const params = new URL(url).searchParams
  const repeated = [...new Set(params.keys())].filter((name) => params.getAll(name).length > 1)
  if (repeated.length) throw repeatedParams(repeated)
}

/**
 * Format and style parameters with defaults filled in, or 400 naming every problem at once. The routes call it
 * on the raw query before Elysia's schema check, so people get these messages rather than the generic ones.
 * `format` fixes the format (the renderer); otherwise the query's `format` is read (png by default).
 */
export function qrParams(query: QrQueryInput, format?: QrFormat): QrParams {
  const issues: ValidationIssue[] = []
  const one = (path: string): string | number | undefined => {
    const v = query[path]
    if (v === undefined || typeof v === 'string' || typeof v === 'number') return v
    issues.push({ path, message: 'must be given once' })
    return undefined
  }
  const int = (path: string, { min, max, default: fallback }: { min: number; max: number; default: number }, unit = '') => {
    const v = one(path)
    if (v === undefined) return fallback
    const n = typeof v === 'number' ? v : /^\d{1,6}$/.test(v) ? Number(v) : Number.NaN
    if (!Number.isInteger(n) || n < min || n > max) {
      issues.push({ path, message: `must be a whole number${unit} from ${min} to ${max}, not "${String(v).slice(0, 16)}"` })
      return fallback
    }
    return n
  }
  const choice = <T extends string>(path: string, allowed: readonly T[], fallback: T): T => {
    const v = one(path)
    if (v === undefined) return fallback
    if ((allowed as readonly unknown[]).includes(v)) return v as T
    issues.push({ path, message: `must be one of ${allowed.join(', ')}, not "${String(v).slice(0, 16)}"` })
    return fallback
  }
  const colour = (path: 'fg' | 'bg', fallback: string) => {
    const v = one(path)
    if (v === undefined) return fallback
    const c = normaliseColour(String(v))
    if (!c) issues.push({ path, message: `must be a hex colour #rgb or #rrggbb (send # as %23 in a URL), not "${String(v).slice(0, 16)}"` })
    return c
  }

  const chosen = format ?? choice('format', QR_FORMATS, 'png')
  const size = int('size', QR_LIMITS.size)
  const margin = int('margin', QR_LIMITS.margin, ' of modules')
  const ecc = choice('ecc', ECC_LEVELS, QR_LIMITS.ecc)
  const fg = colour('fg', QR_LIMITS.fg)
  const bg = colour('bg', QR_LIMITS.bg)
  if (fg && bg) {
    if (fg === bg) issues.push({ path: 'fg', message: `must differ from bg (both are ${fg}): the code would be invisible` })
    else {
      const ratio = contrastRatio(fg, bg)
      if (ratio < QR_LIMITS.minContrast) {
        issues.push({
          path: 'fg',
          message:
            `contrast with bg is ${ratio.toFixed(2)}:1, too low for scanners; use at least ${QR_LIMITS.minContrast}:1 (a dark colour on a light ` +
            `one is safest)`,
        })
      }
    }
  }
  if (issues.length) throw invalidQrQuery(issues)
  return { format: chosen, size, margin, ecc, fg: fg!, bg: bg! }
}

/**
 * What /qr/render asks the domains area: whether a hostname (lower case, punycode, no port) is a custom domain
 * this instance serves now (verified; also during a misconfiguration's grace, while its links still answer).
 */
export interface ServedHosts {
  serves(hostname: string): boolean
}

/**
 * Hosts /qr/render encodes URLs of: the shared short domains (host or host:port, as configured) and the custom
 * domains served now, without a port (a custom domain's short URL never has one: the proxy in front answers
 * on the default ports). The route is public, so this is every served domain, not one workspace's: an
 * anonymous request names no workspace.
 */
export function isServiceShortHost(ctx: Pick<LinksCtx, 'config'>, domains: ServedHosts, url: URL): boolean {
  if (ctx.config.shortDomains.includes(url.host.toLowerCase())) return true
  return url.port === '' && domains.serves(url.hostname.toLowerCase())
}

/** The `data` of /qr/render: an http(s) URL on one of this service's short domains, at most 2048 characters. */
export function checkRenderData(ctx: Pick<LinksCtx, 'config'>, domains: ServedHosts, data: unknown): string {
  if (Array.isArray(data)) throw badRenderData('must be given once')
  if (typeof data !== 'string' || data.length === 0) throw badRenderData('is required: the URL-encoded short URL to render')
  if (data.length > QR_LIMITS.maxDataLength) throw badRenderData(`must be at most ${QR_LIMITS.maxDataLength} characters`)
  let url: URL
  try {
    url = new URL(data)
  } catch {
    throw badRenderData('must be an absolute short URL of this service, such as ' + `http://${ctx.config.shortDomains[0]}/abc1234`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRenderData('must be an http or https URL')
  if (url.username || url.password) throw badRenderData('must not carry a user name or password')
  if (!isServiceShortHost(ctx, domains, url)) {
    throw badRenderData(
      `must be a short URL of this service: "${url.host.slice(0, 253)}" is not one of its short domains or a verified custom domain it serves. This ` +
        `endpoint renders only this service's links; use GET /v1/qr/{linkId} for a link's code`,
    )
  }
  return data
}

/** Renders; an input the QR code cannot hold (too long, too small a size) is refused by the renderer, a 400. */
export const render = (r: QrRequest): Promise<Rendered> => renderQr(r)

/** The code of one of the caller's links (404 for another workspace's), with the file name to download it as. */
export async function linkQrFile(ctx: LinksCtx, caller: Caller, linkId: string, params: QrParams) {
  const link = await getLink(ctx, caller, linkId)
  const rendered = await render({ ...params, data: link.shortUrl })
  return { ...rendered, filename: `${link.slug}-qr.${params.format}` }
}
