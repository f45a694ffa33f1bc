// `POST /v1/links/{id}/resolve`: the redirect module's one API route, beside the links area's own routes.
import { Elysia, t } from 'elysia'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import type { HttpKit } from '../identity'
import { type ResolveDeps, resolveVisit } from './resolve'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 429: ErrorEnvelope }

export const ResolveBody = t.Object(
  {
    country: t.Optional(t.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2; stands in for the country of `ip`' })),
    city: t.Optional(t.String({ minLength: 1, maxLength: 128, description: 'Stands in for the city of `ip` (known only with a city database)' })),
    userAgent: t.Optional(t.String({ maxLength: 2048, description: 'The User-Agent header: device, os, browser; crawlers get the preview' })),
    acceptLanguage: t.Optional(t.String({ maxLength: 1024, description: 'The Accept-Language header: its first tag gives language and locale' })),
    ip: t.Optional(t.String({ maxLength: 64, description: 'The client address (IPv4 or IPv6): ip rules, country, city, the variant' })),
    referrer: t.Optional(t.String({ maxLength: 2048, description: 'The Referer header (a URL) or a host' })),
    query: t.Optional(
      t.Record(t.String(), t.String({ maxLength: 2048 }), {
        maxProperties: 100,
        description: 'The visit’s query parameters: query.<name> rules, forwarded to the destination',
      }),
    ),
    at: t.Optional(t.String({ format: 'date-time', description: 'When the visit happens (ISO 8601 with a zone); now when absent' })),
    trigger: t.Optional(t.Union([t.Literal('link'), t.Literal('qr')], { description: 'link (default) or qr' })),
  },
  { additionalProperties: false, title: 'LinkResolveRequest' },
)

const RuleTrace = t.Object(
  {
    ruleId: t.String(),
    matched: t.Boolean(),
    conditions: t.Array(t.Boolean(), { description: 'Whether each of the rule’s conditions held, in order' }),
  },
  { title: 'RuleTrace' },
)

export const Resolution = t.Object(
  {
    destinationUrl: t.Union([t.String(), t.Null()], {
      description: 'Where the visitor is sent: the chosen destination with UTM fields and the query applied (behind the gate, if any); null when gone',
    }),
    ruleId: t.Union([t.String(), t.Null()], { description: 'The routing rule that matched, if any' }),
    variantId: t.Union([t.String(), t.Null()], { description: 'The variant chosen when no rule matched, if any' }),
    outcome: t.Union(
      [
        t.Literal('redirect'),
        t.Literal('fallback'),
        t.Literal('gone'),
        t.Literal('password'),
        t.Literal('captcha'),
        t.Literal('consent'),
        t.Literal('bridge_page'),
        t.Literal('sandbox'),
      ],
      { description: 'What the visitor meets first' },
    ),
    trace: t.Array(RuleTrace, { description: 'Every rule evaluated, in order, up to and including the first that matched' }),
  },
  { title: 'LinkResolution' },
)

export function resolveRoutes(deps: ResolveDeps, http: HttpKit) {
  return new Elysia({ name: 'lnk.links.resolve', seed: http.instanceId, prefix: '/links', tags: ['Links'] })
    .use(http.auth)
    .post('/:id/resolve', async ({ caller, params, body }) => ok(await resolveVisit(deps, caller, params.id, body ?? {})), {
      permission: 'links:read',
      params: t.Object({ id: t.String() }),
      body: t.Optional(ResolveBody),
      response: { 200: Envelope(Resolution), ...errors },
      detail: {
        summary: 'Resolve a visit',
        description:
          'Where a visit described by the body would go: the gates, limits and expiry, then the first matching routing rule, else a variant, else the ' +
          'destination (docs/routing.md). Records nothing: no click is counted and no limit moves. Every field is optional; ip gives the country ' +
          'and city unless country or city are sent.',
      },
    })
}
