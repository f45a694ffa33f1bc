// GET /v1/docs: a page for people, Scalar's API reference over /v1/openapi.json. Everything it loads comes from
// lnk itself (the script from /v1/docs/scalar.js, the document from /v1/openapi.json); a Content-Security-Policy
// makes the browser refuse anything else, so the page behaves the same with or without internet access.
import { Elysia } from 'elysia'
import { scalarBundle, serveScalarBundle } from './scalar-bundle'

export const DOCS_PATH = '/v1/docs'
export const SCALAR_SCRIPT_PATH = '/v1/docs/scalar.js'

export interface DocsPageOptions {
  title: string
  description: string
  /** Absolute path of the OpenAPI document on this origin. */
  specPath: string
}

/**
 * Scalar's configuration. Each option that would make the page talk to a Scalar-hosted service is turned off:
 * fonts (withDefaultFonts), telemetry, the request proxy that "Test request" uses by default on the web
 * (proxyUrl '' means requests go straight to this origin), the hosted AI agent and MCP panel, and the
 * developer toolbar shown on localhost.
 */
export function scalarConfiguration(options: DocsPageOptions) {
  return {
    title: options.title,
    url: options.specPath,
    withDefaultFonts: false,
    telemetry: false,
    proxyUrl: '',
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    documentDownloadType: 'json',
    persistAuth: false,
    hideModels: false,
    metaData: { title: options.title },
  }
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/** JSON inside <script>: `<` escaped so no `</script>` or `<!--` can end or confuse the element. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')

const sha256Base64 = (s: string) => new Bun.CryptoHasher('sha256').update(s).digest('base64')

export function renderDocsPage(options: DocsPageOptions, scriptVersion: string) {
  // Not id="api-reference": the bundle mounts a second reference, with default settings, on that id by itself.
  const init = `Scalar.createApiReference('#lnk-docs', ${scriptJson(scalarConfiguration(options))})`
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(options.title)}</title>
    <meta name="description" content="${escapeHtml(options.description)}" />
    <link rel="icon" href="data:," />
    <style>
      body { margin: 0; }
    </style>
  </head>
  <body>
    <noscript>This page needs JavaScript. The API description it shows is at
      <a href="${escapeHtml(options.specPath)}">${escapeHtml(options.specPath)}</a>.</noscript>
    <div id="lnk-docs"></div>
    <script src="${SCALAR_SCRIPT_PATH}?v=${encodeURIComponent(scriptVersion)}"></script>
    <script>${init}</script>
  </body>
</html>
`
  // Scalar adds <style> elements at run time, hence 'unsafe-inline' for styles; scripts are this origin's plus
  // the one inline call above, by hash. connect-src 'self': the document and "Test request" calls stay on lnk.
  const csp = [
    "default-src 'none'",
    `script-src 'self' 'sha256-${sha256Base64(init)}'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
  return { html, csp }
}

export function docsRoutes(options: DocsPageOptions) {
  let page: ReturnType<typeof renderDocsPage> | undefined
  return new Elysia()
    .get(
      DOCS_PATH,
      async () => {
        page ??= renderDocsPage(options, (await scalarBundle()).hash)
        return new Response(page.html, {
          headers: {
            'content-type': 'text/html; charset=utf-8',
            'cache-control': 'no-cache',
            'content-security-policy': page.csp,
            'x-content-type-options': 'nosniff',
            'referrer-policy': 'no-referrer',
          },
        })
      },
      { detail: { hide: true } },
    )
    .get(SCALAR_SCRIPT_PATH, ({ request }) => serveScalarBundle(request), { detail: { hide: true } })
}
