// POST {base_url}/conversions: the public conversion beacon (spec 4.5, section 5 rule 4: no credential).
// Destination sites call it from the visitor's browser, on any origin, usually with navigator.sendBeacon,
// which sends a string as text/plain (a CORS "simple" request: no preflight). So this route:
//  - answers CORS for any origin: the preflight (OPTIONS), and Access-Control-Allow-Origin: * on every
//    answer, errors included;
//  - reads JSON sent as application/json (the app's parser) or as text/plain (parseBeacon below);
//  - takes at most 16 KiB of body and 120 beacons a minute per client address (an IPv6 /64 counting as
//    one address), both checked in onRequest, before any of the body is read.
import { isIP } from 'node:net'
import { Elysia } from 'elysia'
import { readBodyCapped } from '../../http/body'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import { conversionTooLarge, malformedBeacon, tooManyConversions, unreadableBeaconType } from './errors'
import { clientIp } from '../../http/request-context'
import type { HttpKit, RateDecision, RateLimit } from '../identity'
import { Conversion, ConversionBody, EVENT_NAME_MAX, METADATA_MAX_BYTES } from './model'
import { recordConversion, type ConversionsCtx } from './service'

/** The route's full path: onRequest runs before routing, for every request, and must pick it out itself. */
export const CONVERSIONS_PATH = '/v1/conversions'
export const CONVERSION_BODY_LIMIT = 16 * 1024
export const CONVERSIONS_PER_MINUTE = 120
const PREFLIGHT_MAX_AGE_SECONDS = 86_400

const PREFLIGHT_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'content-type',
  'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
}
/** Response headers a page may read besides the CORS-safelisted ones. */
const EXPOSED = 'retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset, x-request-id'

function isConversionsPath(url: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return false
  const query = url.indexOf('?', start)
  const path = url.slice(start, query === -1 ? url.length : query)
  return path === CONVERSIONS_PATH || path === `${CONVERSIONS_PATH}/`
}

/** The rate-limit key of a client address: IPv4 as is, IPv6 by its /64 (what one subscriber usually holds). */
export function addressKey(ip: string | null): string {
  if (!ip) return 'unknown'
  const address = ip.split('%')[0]!
  if (isIP(address) !== 6) return address
  const [head = '', tail] = address.split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`
}

/** Bodies our own text/plain parser measured exactly (the app's JSON parser measures against its own limit). */
const measured = new WeakSet<Request>()

/**
 * text/plain holding JSON: what navigator.sendBeacon sends for a string, and what fetch sends for one
 * without a Content-Type. (application/json never gets here: the app's parser answers it first.)
 */
async function parseBeacon({ request, contentType }: { request: Request; contentType?: string }) {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  if (type !== '' && type !== 'text/plain') {
    throw unreadableBeaconType(type)
  }
  const text = new TextDecoder().decode(await readBodyCapped(request, CONVERSION_BODY_LIMIT, conversionTooLarge))
  measured.add(request)
  if (text.trim() === '') return {}
  try {
    return JSON.parse(text) as unknown
  } catch (err) {
    throw malformedBeacon(err as Error)
  }
}

/** The RateLimit-* headers of a decision; a refusal throws (its envelope carries them). */
function applyRate(rate: RateDecision, headers: Record<string, unknown>) {
  headers['ratelimit-limit'] = String(rate.limit)
  headers['ratelimit-remaining'] = String(rate.remaining)
  headers['ratelimit-reset'] = String(rate.reset)
  if (!rate.allowed) throw tooManyConversions(rate.limit, rate.retryAfter)
}

const errors = { 400: ErrorEnvelope, 404: ErrorEnvelope, 405: ErrorEnvelope, 413: ErrorEnvelope, 429: ErrorEnvelope }

/** `limiter` counts beacons per client address: in memory on SQLite, in the database across nodes on PostgreSQL. */
export function conversionRoutes(ctx: ConversionsCtx, http: Pick<HttpKit, 'instanceId'>, limiter: RateLimit) {
  /**
   * A decision the database is still making (PostgreSQL), awaited before the handler runs: Elysia's
   * onRequest cannot wait for it, so there the body is read (within its small limit) before the refusal.
   */
  const deciding = new WeakMap<Request, Promise<RateDecision>>()

  return (
    new Elysia({ name: 'lnk.conversions', seed: http.instanceId, tags: ['Conversions'] })
      // Before the body is read (the app's JSON parser runs ahead of any route hook): the CORS header goes
      // into `set.headers`, which the error envelope carries too; then the rate limit and the declared size.
      .onRequest(({ request, set }) => {
        if (!isConversionsPath(request.url)) return
        set.headers['access-control-allow-origin'] = '*'
        set.headers['access-control-expose-headers'] = EXPOSED
        if (request.method !== 'POST') return
        const rate = limiter.take(addressKey(clientIp(request, ctx.config)), CONVERSIONS_PER_MINUTE, ctx.clock.now())
        if (rate instanceof Promise) deciding.set(request, rate)
        else applyRate(rate, set.headers)
        const length = request.headers.get('content-length')
        if (length !== null && Number(length) > CONVERSION_BODY_LIMIT) throw conversionTooLarge(CONVERSION_BODY_LIMIT)
      })
      .onBeforeHandle(async ({ request, set }) => {
        const rate = deciding.get(request)
        if (rate) applyRate(await rate, set.headers)
      })
      .options(
        '/conversions',
        ({ set }) => {
          set.status = 204
          return new Response(null, { status: 204, headers: PREFLIGHT_HEADERS })
        },
        { detail: { hide: true } },
      )
      .post(
        '/conversions',
        async ({ body, request, set }) => {
          // A JSON body sent without Content-Length (chunked) was read by the app's parser against the app's
          // own limit: measure it here, by its compact JSON.
          if (
            !measured.has(request) &&
            request.headers.get('content-length') === null &&
            Buffer.byteLength(JSON.stringify(body) ?? '') > CONVERSION_BODY_LIMIT
          ) {
            throw conversionTooLarge(CONVERSION_BODY_LIMIT)
          }
          const conversion = await recordConversion(ctx, body)
          set.status = conversion.duplicate ? 200 : 201
          return ok(conversion)
        },
        {
          parse: parseBeacon,
          response: { 200: Envelope(Conversion), 201: Envelope(Conversion), ...errors },
          detail: {
            summary: 'Record a conversion (public beacon)',
            description: [
              `Public: needs no key. Called from the visitor's browser on the destination site, from any origin (CORS), typically with navigator.sendBeacon.`,
              `The body is JSON, sent as application/json or as text/plain (what sendBeacon sends for a string), at most ${CONVERSION_BODY_LIMIT} bytes.`,
              `clickId (the lnk_cid query parameter the redirect added to the destination URL) and eventName (1-${EVENT_NAME_MAX} characters) are ` +
                `required; value (≥ 0) and currency (ISO 4217) come together; metadata is an object of at most ${METADATA_MAX_BYTES} bytes.`,
              'The click must be a recorded click (not a bot hit) of a link with conversionTracking: an unknown click is 404 not_found, a click of a ' +
                'link without conversionTracking 400 validation_failed.',
              'A new conversion is 201. The same beacon again (same clickId, eventName, value, currency and metadata) less than 24 h later is counted ' +
                'once: 200 with the first conversion and duplicate true.',
              `At most ${CONVERSIONS_PER_MINUTE} beacons a minute per client address (429 rate_limited with Retry-After).`,
            ].join('\n\n'),
            security: [],
            requestBody: {
              required: true,
              description: 'JSON as application/json, or as text/plain',
              content: { 'application/json': { schema: ConversionBody }, 'text/plain': { schema: ConversionBody } },
            },
          } as Record<string, unknown>,
        },
      )
  )
}
