// QR codes of links as SVG, PNG and PDF, and the public PNG renderer behind a Link's qr.png.
import type { LinksModule } from '../links'
import { defineModule } from '../module'
import type { HttpKit } from '../identity'
import { qrRoutes } from './routes'

// What the app gives the links module, which renders a link's qr object with it.
export { linkQr } from './link-qr'

export function createQrModule(links: LinksModule, http: HttpKit) {
  return defineModule({ name: 'qr', routes: qrRoutes(links.ctx, http) })
}
