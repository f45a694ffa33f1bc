// The web console at /console: a client of the public /v1 API, bundled from web/console at build time and
// embedded in the executable (bundle.generated.ts), so it works with no network beyond this server.
import { Elysia } from 'elysia'
import { defineModule, type Platform } from '../module'
import { ASSETS_PATH, CONSOLE_PATH, consoleAssets } from './page'

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
}

export function createConsoleModule(platform: Platform) {
  const { baseUrl, shortDomains } = platform.config
  const scheme = new URL(baseUrl).protocol
  const assets = consoleAssets(shortDomains.map((domain) => `${scheme}//${domain}`))
  const page = () =>
    new Response(assets.html, {
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', 'content-security-policy': assets.csp, ...SECURITY_HEADERS },
    })
  const routes = new Elysia({ name: 'lnk.console', seed: platform.instanceId })
    .get(CONSOLE_PATH, page, { detail: { hide: true } })
    .get(`${CONSOLE_PATH}/`, page, { detail: { hide: true } })
    .get(
      `${ASSETS_PATH}/:file`,
      ({ params }) => {
        const file = assets.files.get(params.file)
        // An old name after an upgrade: 404, and the page (no-cache) names the new one on the next load.
        if (!file) return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS } })
        return new Response(file.body, { headers: { 'content-type': file.type, 'cache-control': 'public, max-age=31536000, immutable', ...SECURITY_HEADERS } })
      },
      { detail: { hide: true } },
    )
  return defineModule({ name: 'console', root: true, routes })
}
