// The `qr` object of a Link (spec 4.1 rules 3-4): inline SVG plus the URL of the public PNG renderer.
import QRCode from 'qrcode'
import type { Config } from '../../config'

export interface QrObject {
  svg: string
  png: string
}

export const DEFAULT_QR_SIZE = 512

/** `{base_url}/qr/render?data=<URL-encoded short URL>&size=<px>` */
export function qrPngUrl(config: Pick<Config, 'baseUrl'>, data: string, size = DEFAULT_QR_SIZE) {
  return `${config.baseUrl}/v1/qr/render?data=${encodeURIComponent(data)}&size=${size}`
}

const svgCache = new Map<string, string>()

export async function linkQr(config: Pick<Config, 'baseUrl'>, shortUrl: string): Promise<QrObject> {
  let svg = svgCache.get(shortUrl)
  if (!svg) {
    svg = await QRCode.toString(shortUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 })
    if (svgCache.size > 10_000) svgCache.clear()
    svgCache.set(shortUrl, svg)
  }
  return { svg, png: qrPngUrl(config, shortUrl) }
}
