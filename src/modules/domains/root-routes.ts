// Outside /v1: the proof a domain check looks for on any host, and the question Caddy asks before it gets a
// certificate for a hostname (on-demand TLS). Both answer plain text.
import { Elysia, t } from 'elysia'
import { socketAddress } from '../../http/request-context'
import { tlsProxyPeers } from '../../net/tls-proxy'
import type { Config } from '../../platform/config'
import { proofOf } from './check'
import { serviceHostnames, toHostname } from './hostname'
import type { DomainsRepo } from './port'
import type { ServedDomains } from './served'

export interface RootRoutesDeps {
  instanceId: string
  config: Pick<Config, 'shortDomains' | 'baseUrl' | 'tlsAskAllowedCidrs'>
  domains: Pick<DomainsRepo, 'findByToken'>
  served: Pick<ServedDomains, 'get'>
  proofKey: Buffer
}

/**
 * Why a request may not ask, or null when it may. The socket peer must be the TLS proxy: loopback, or inside
 * LNK_TLS_ASK_ALLOWED_CIDRS (one Caddy in front of several nodes is not on their loopback).
 *
 * X-Forwarded-For: the proxy also forwards visitors' requests, and a visitor can ask for
 * https://<any served host>/internal/tls/ask, which reaches us from the proxy's own trusted address. Caddy's
 * ask itself carries no X-Forwarded-For when it goes straight to a node; when it is load-balanced through a
 * proxy of the operator's (Caddy's own reverse_proxy, say), that proxy adds the address it came from, which
 * is Caddy's, inside the trusted ranges. A visitor's request carries the visitor's address there (Caddy and
 * nginx write or append the client they saw; an entry a visitor forges can only add to the list, never hide
 * their own; a proxy that passed the header on without adding its client would defeat this, as it would the
 * old rule). So every entry must be a trusted address too: that refuses visitors as the old rule ("any
 * X-Forwarded-For refuses") did, and lets a load-balanced ask through. `Forwarded` (RFC 7239) is refused
 * outright: Caddy never sends it, and a proxy that writes only it would otherwise pass visitors off as itself.
 */
function askRefusal(request: Request, trusted: (address: string | null) => boolean): string | null {
  const peer = socketAddress(request)
  if (!trusted(peer)) return `loopback and LNK_TLS_ASK_ALLOWED_CIDRS only: ${peer ?? 'an unknown peer'} is neither; set LNK_TLS_ASK_ALLOWED_CIDRS to allow it`
  if (request.headers.has('forwarded')) return 'proxied (Forwarded header): the TLS proxy asks without one'
  const forwarded = request.headers.get('x-forwarded-for')
  if (forwarded === null) return null
  const outsider = forwarded
    .split(',')
    .map((hop) => hop.trim())
    .find((hop) => !trusted(hop))
  return outsider === undefined
    ? null
    : `proxied for ${outsider.slice(0, 64) || 'an empty X-Forwarded-For'}: only loopback and LNK_TLS_ASK_ALLOWED_CIDRS may ask, through proxies within them`
}

/** A plain-text answer; `set.status` too, so the request log and metrics record the status sent. */
const text = (set: { status?: number | string }, body: string, status: number) => {
  set.status = status
  return new Response(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } })
}

export function domainRootRoutes(deps: RootRoutesDeps) {
  // The API's own host is served here too, and needs its certificate like the shared pool.
  const pool = serviceHostnames(deps.config)
  const trusted = tlsProxyPeers(deps.config.tlsAskAllowedCidrs)
  return new Elysia({ name: 'lnk.domains.root', seed: deps.instanceId, tags: ['Domains'] })
    .get(
      '/.well-known/lnk/:token',
      async ({ params, set }) => {
        const row = /^lnk-verify=[A-Za-z0-9]{32}$/.test(params.token) ? await deps.domains.findByToken(params.token) : undefined
        return row ? text(set, proofOf(deps.proofKey, row.token), 200) : text(set, 'unknown token', 404)
      },
      {
        params: t.Object({ token: t.String() }),
        response: { 200: t.String({ description: 'The proof the domain check expects' }), 404: t.String() },
        detail: {
          summary: 'Domain reachability proof',
          description: 'What the plain-HTTP domain check fetches on a custom domain: a keyed hash of the token, so only this instance answers it.',
          security: [],
        },
      },
    )
    .get(
      '/internal/tls/ask',
      ({ request, set }) => {
        const refusal = askRefusal(request, trusted)
        if (refusal !== null) return text(set, refusal, 403)
        // Read here rather than by a query schema, so that the 403 above comes first and every answer is text.
        const domains = new URL(request.url).searchParams.getAll('domain')
        if (domains.length === 0) return text(set, 'domain is required: the hostname to ask about', 400)
        if (domains.length > 1) return text(set, 'domain must be given once', 400)
        // Any other value is a hostname this instance does not serve, well formed or not: Caddy asks with the
        // TLS handshake's server name, whatever a client sent, and only 200 lets it go on.
        const hostname = toHostname(domains[0]!)
        return hostname !== null && (deps.served.get(hostname) || pool.has(hostname)) ? text(set, 'ok', 200) : text(set, 'not served here', 404)
      },
      {
        response: { 200: t.String(), 400: t.String(), 403: t.String(), 404: t.String() },
        detail: {
          summary: 'May Caddy get a certificate for this hostname?',
          description:
            "For Caddy's on_demand_tls ask (LNK_TLS_MODE=caddy): 200 for served custom domains, the shared pool and the API host, 404 for any other " +
            'value of domain (an empty one, one that is no hostname, an IP address). Answered from memory. Only from loopback or a peer inside ' +
            'LNK_TLS_ASK_ALLOWED_CIDRS, and, when proxied, only for clients in those ranges (every X-Forwarded-For entry); 403 otherwise. 400 ' +
            'when domain is missing or repeated.',
          security: [],
          // Published here, not as a query schema (see the handler): without one, the generator takes these.
          parameters: [
            {
              name: 'domain',
              in: 'query',
              required: true,
              description:
                'The hostname Caddy wants a certificate for, as in the TLS handshake (any case, a trailing dot, an internationalised name in Unicode or ' +
                'punycode)',
              schema: { type: 'string' },
            },
          ],
        },
      },
    )
}
