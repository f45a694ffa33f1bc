// QR routes under {base_url}:
//  GET /qr/render   public PNG renderer behind the Link's qr.png URL; renders only this service's short URLs
//                   (the shared short domains and the verified custom domains served now).
//  GET /qr/:linkId  a link's code as a png, svg or pdf download (links:read).
// Both answer bytes, not the envelope (errors still come in the envelope), with an ETag; a matching
// If-None-Match gets 304. The OpenAPI responses are written out in `detail.responses`, because the generator
// would label a binary `response` schema application/json or text/plain.
import { Elysia, t } from 'elysia'
import { ErrorEnvelope } from '../../http/envelope'
import type { HttpKit } from '../identity'
import { documentOnly, HTTP_URL_PATTERN } from '../../http/published-schema'
import type { LinksCtx } from '../links'
import { notModified, type Rendered } from './cache'
import { HEX_COLOUR_PATTERN, QR_LIMITS } from './render'
import { checkRenderData, linkQrFile, qrParams, refuseRepeated, render, type ServedHosts } from './service'

const { size: SIZE, margin: MARGIN } = QR_LIMITS

const styleQuery = {
  size: t.Optional(
    t.Integer({
      minimum: SIZE.min,
      maximum: SIZE.max,
      default: SIZE.default,
      description: `Width and height: pixels (png), points (pdf), user units (svg); quiet zone included. ${SIZE.min}-${SIZE.max}, default ${SIZE.default}`,
    }),
  ),
  margin: t.Optional(
    t.Integer({
      minimum: MARGIN.min,
      maximum: MARGIN.max,
      default: MARGIN.default,
      description:
        `Quiet zone in modules, ${MARGIN.min}-${MARGIN.max}, default ${MARGIN.default}. A PNG adds what does not divide evenly into ` +
        `whole-pixel modules to it`,
    }),
  ),
  ecc: t.Optional(
    t.Union([t.Literal('L'), t.Literal('M'), t.Literal('Q'), t.Literal('H')], {
      default: QR_LIMITS.ecc,
      description: 'Error correction: L 7 %, M 15 % (default), Q 25 %, H 30 % of the code may be damaged; higher levels make a denser code',
    }),
  ),
  fg: t.Optional(
    t.String({
      pattern: HEX_COLOUR_PATTERN,
      default: QR_LIMITS.fg,
      description: `Colour of the dark modules, #rgb or #rrggbb (send # as %23). Must differ from bg with a contrast of at least ${QR_LIMITS.minContrast}:1`,
    }),
  ),
  bg: t.Optional(
    t.String({ pattern: HEX_COLOUR_PATTERN, default: QR_LIMITS.bg, description: 'Background and quiet zone colour, #rgb or #rrggbb (send # as %23)' }),
  ),
}

const binary = (contentTypes: string[], description: string) => ({
  description,
  headers: {
    ETag: { description: 'Strong validator of these bytes; send it back in If-None-Match', schema: { type: 'string' as const } },
    'Cache-Control': { schema: { type: 'string' as const } },
  },
  content: Object.fromEntries(contentTypes.map((type) => [type, { schema: { type: 'string' as const, format: 'binary', description: `${type} bytes` } }])),
})
// The error envelope (ErrorEnvelope, titled "Error"): every other route declares it as a response schema, and the
// document's polish states it once in components.schemas and refers to it, so these responses refer to it too.
// (A copy of it here could drift: Elysia adds keywords to the shared schema object when it compiles validators.)
const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${ErrorEnvelope.title}` } } },
})
const notModifiedResponse = { description: 'Not Modified: If-None-Match holds the current ETag; no body' }

/** The rendered bytes, or 304 when the client already holds them (`set.status` too, for the request log and metrics). */
function answer(request: Request, set: { status?: number | string }, rendered: Rendered, headers: Record<string, string>): Response {
  const common = { etag: rendered.etag, ...headers }
  if (notModified(request.headers.get('if-none-match'), rendered.etag)) {
    set.status = 304
    return new Response(null, { status: 304, headers: common })
  }
  return new Response(rendered.body, {
    headers: { 'content-type': rendered.contentType, 'content-length': String(rendered.body.byteLength), 'x-content-type-options': 'nosniff', ...common },
  })
}

export function qrRoutes(ctx: LinksCtx, domains: ServedHosts, http: HttpKit) {
  return (
    new Elysia({ name: 'lnk.qr', seed: http.instanceId, prefix: '/qr', tags: ['QR codes'] })
      .use(http.auth)
      // Our own checks of the raw query, with messages that name the parameter and the rule, run before Elysia's
      // schema check (the schemas document the same rules). A macro's transform is appended to the route's in
      // the order the options list them, so listing `qrQuery` after `permission` keeps 401/403 ahead of 400.
      .macro({
        qrQuery: (kind: 'render' | 'link') => ({
          transform({ query, request }: { query: Record<string, unknown>; request: Request }) {
            refuseRepeated(request.url)
            if (kind === 'render') {
              checkRenderData(ctx, domains, query.data)
              qrParams(query, 'png')
            } else qrParams(query)
          },
        }),
      })
      // Registered first, and a static segment besides, so it wins over /qr/:linkId.
      .get(
        '/render',
        async ({ query, request, set }) => {
          const data = checkRenderData(ctx, domains, query.data)
          const rendered = await render({ ...qrParams(query, 'png'), data })
          return answer(request, set, rendered, {
            'cache-control': 'public, max-age=86400, immutable',
            // <img> embedding from other origins, also on pages that require CORP.
            'cross-origin-resource-policy': 'cross-origin',
          })
        },
        {
          qrQuery: 'render',
          query: t.Object({
            // Format and scheme are checkRenderData's to judge (it runs first, see the macro), as browsers read URLs.
            data: t.String({
              minLength: 1,
              maxLength: QR_LIMITS.maxDataLength,
              ...documentOnly({ format: 'uri', pattern: HTTP_URL_PATTERN }),
              description:
                `The short URL to encode (URL-encoded), exactly as it should decode: an http(s) URL on one of this service's short domains ` +
                `or a verified custom domain it serves, at most ${QR_LIMITS.maxDataLength} characters, without a user name or password. Not every ` +
                `such URL fits every code: a long one may need a lower ecc or a larger size (400 otherwise)`,
            }),
            ...styleQuery,
          }),
          detail: {
            summary: 'Render a short URL as a PNG QR code',
            description:
              "Public: the qr.png URL of a Link points here, so it can be used as an <img> source. Renders only this service's short URLs, on its " +
              'shared short domains or the verified custom domains it serves (any other host, scheme or text is 400): it is not an open QR ' +
              'generator. The output is cached, immutable for the given parameters, and carries an ETag.',
            security: [],
            responses: {
              200: binary(['image/png'], 'The QR code as a PNG of exactly size x size pixels'),
              304: notModifiedResponse,
              400: errorResponse('Bad Request: data is not a short URL of this service, or a parameter is out of range'),
              // A data longer than maxLength, of characters outside ASCII (up to 12 bytes each once encoded), can
              // make a request line over the server's header limit, which Bun answers before lnk sees it.
              431: {
                description:
                  "Request Header Fields Too Large: the request line is over the server's 16 KiB limit; answered by the HTTP server itself, with no body",
              },
            },
          },
        },
      )
      .get(
        '/:linkId',
        async ({ caller, params, query, request, set }) => {
          const options = qrParams(query)
          const file = await linkQrFile(ctx, caller, params.linkId, options)
          return answer(request, set, file, {
            'content-disposition': `attachment; filename="${file.filename}"`,
            'cache-control': 'private, max-age=300',
            vary: 'Authorization, X-Workspace-Id',
            ...(options.format === 'svg' ? { 'content-security-policy': "default-src 'none'" } : {}),
          })
        },
        {
          permission: 'links:read',
          qrQuery: 'link', // after permission: see the macro
          params: t.Object({ linkId: t.String({ description: 'The link id (UUID)' }) }),
          query: t.Object({
            format: t.Optional(
              t.Union([t.Literal('png'), t.Literal('svg'), t.Literal('pdf')], {
                default: 'png',
                description: 'png (default), svg or pdf (vector, a page of exactly size x size points)',
              }),
            ),
            ...styleQuery,
          }),
          detail: {
            summary: "Download a link's QR code",
            description:
              'The code of the link\'s short URL as a file: Content-Disposition names it "<slug>-qr.<png|svg|pdf>". PNG is a raster of exactly size x ' +
              'size pixels; SVG and PDF are vector (the PDF draws every module as a rectangle on a page the size of the code). Carries an ETag; ' +
              'If-None-Match answers 304.',
            responses: {
              200: binary(['image/png', 'image/svg+xml', 'application/pdf'], 'The QR code file, in the format asked for'),
              304: notModifiedResponse,
              400: errorResponse('Bad Request: a parameter is out of range, or colours are equal or too close'),
              401: errorResponse('Unauthorized'),
              403: errorResponse('Forbidden'),
              404: errorResponse('Not Found: no such link in this workspace'),
              429: errorResponse('Too Many Requests'),
            },
          },
        },
      )
  )
}
