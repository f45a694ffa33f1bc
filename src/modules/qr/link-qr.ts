// The `qr` object of a Link (spec 4.1 rules 3-4): inline SVG plus the URL of the public PNG renderer.
import type { Config } from '../../platform/config'
import { renderQr } from './cache'
import { QR_LIMITS } from './render'

export interface QrObject {
  svg: string
  png: string
}

export const DEFAULT_QR_SIZE = QR_LIMITS.size.default

/** `{base_url}/qr/render?data=<URL-encoded short URL>&size=<px>` */
export function qrPngUrl(config: Pick<Config, 'baseUrl'>, data: string, size = DEFAULT_QR_SIZE) {
  return `${config.baseUrl}/v1/qr/render?data=${encodeURIComponent(data)}&size=${size}`
}

const decoder = new TextDecoder()

/** The SVG is the one GET /v1/qr/{linkId}?format=svg answers with default parameters (and shares its cache). */
export async function linkQr(config: Pick<Config, 'baseUrl'>, shortUrl: string): Promise<QrObject> {
  const { body } = await renderQr({
    format: 'svg',
    data: shortUrl,
    size: DEFAULT_QR_SIZE,
    margin: QR_LIMITS.margin.default,
    ecc: QR_LIMITS.ecc,
    fg: QR_LIMITS.fg,
    bg: QR_LIMITS.bg,
  })
  return { svg: decoder.decode(body), png: qrPngUrl(config, shortUrl) }
}
