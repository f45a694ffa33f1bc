// QR codes of links as SVG, PNG and PDF, and the public PNG renderer behind a Link's qr.png. The renderer
// asks the domains area which custom domains are served (its `serves` port), so their short URLs render too.
import type { LinksModule } from '../links'
import { defineModule } from '../module'
import type { HttpKit } from '../identity'
import { qrRoutes } from './routes'
import type { ServedHosts } from './service'

// What the app gives the links module, which renders a link's qr object with it.
export { linkQr } from './link-qr'

export function createQrModule(links: LinksModule, domains: ServedHosts, http: HttpKit) {
  return defineModule({ name: 'qr', routes: qrRoutes(links.ctx, domains, http) })
}
