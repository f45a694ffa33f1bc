// The console's HTML shell and its Content-Security-Policy. The page is static apart from the asset names,
// which carry a hash of their content, so a new build is never mixed with a cached old one.
import { CONSOLE_CSS, CONSOLE_JS } from './bundle.generated'

export const CONSOLE_PATH = '/console'
export const ASSETS_PATH = '/console/assets'

const shortHash = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest('hex').slice(0, 16)

export interface ConsoleAssets {
  html: string
  csp: string
  /** File name → body and type, e.g. 'app-3f2a….js'. */
  files: Map<string, { body: string; type: string }>
}

/**
 * frameOrigins: the shared short domains, where bridge pages are served, so the block editor can preview the
 * public page in a frame. Everything else comes from this origin only: no inline script or style, no CDN.
 */
export function consoleAssets(frameOrigins: string[]): ConsoleAssets {
  const script = `app-${shortHash(CONSOLE_JS)}.js`
  const style = `app-${shortHash(CONSOLE_CSS)}.css`
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="color-scheme" content="light dark" />
    <meta name="referrer" content="no-referrer" />
    <title>lnk console</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="${ASSETS_PATH}/${style}" />
    <script type="module" src="${ASSETS_PATH}/${script}"></script>
  </head>
  <body>
    <div id="app"><noscript>The lnk console needs JavaScript. The API itself is documented at /v1/docs.</noscript></div>
  </body>
</html>
`
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    `frame-src 'self' ${frameOrigins.join(' ')}`,
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
  return {
    html,
    csp,
    files: new Map([
      [script, { body: CONSOLE_JS, type: 'text/javascript; charset=utf-8' }],
      [style, { body: CONSOLE_CSS, type: 'text/css; charset=utf-8' }],
    ]),
  }
}
