// QR codes of links as SVG, PNG and PDF, and the public PNG renderer behind a Link's qr.png.
import type { LinksModule } from '../links'
import { defineModule, type HttpKit } from '../module'
import { qrRoutes } from './routes'

export function createQrModule(links: LinksModule, http: HttpKit) {
  return defineModule({ name: 'qr', routes: qrRoutes(links.ctx, http) })
}
