// Outside /v1: the proof a domain check looks for on any host, and the question Caddy asks before it gets a
// certificate for a hostname (on-demand TLS). Both answer plain text.
import { Elysia, t } from 'elysia'
import { socketAddress } from '../../http/request-context'
import { classifyAddress } from '../../net/egress'
import type { Config } from '../../platform/config'
import { proofOf } from './check'
import { serviceHostnames, toHostname } from './hostname'
import type { DomainsRepo } from './port'
import type { ServedDomains } from './served'

export interface RootRoutesDeps {
  instanceId: string
  config: Pick<Config, 'shortDomains' | 'baseUrl'>
  domains: Pick<DomainsRepo, 'findByToken'>
  served: Pick<ServedDomains, 'get'>
  proofKey: Buffer
}

const text = (body: string, status: number) => new Response(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } })

export function domainRootRoutes(deps: RootRoutesDeps) {
  // The API's own host is served here too, and needs its certificate like the shared pool.
  const pool = serviceHostnames(deps.config)
  return new Elysia({ name: 'lnk.domains.root', seed: deps.instanceId, tags: ['Domains'] })
    .get(
      '/.well-known/lnk/:token',
      async ({ params }) => {
        const row = /^lnk-verify=[A-Za-z0-9]{32}$/.test(params.token) ? await deps.domains.findByToken(params.token) : undefined
        return row ? text(proofOf(deps.proofKey, row.token), 200) : text('unknown token', 404)
      },
      {
        params: t.Object({ token: t.String() }),
        response: { 200: t.String({ description: 'The proof the domain check expects' }), 404: t.String() },
        detail: { summary: 'Domain reachability proof', description: 'What the plain-HTTP domain check fetches on a custom domain: a keyed hash of the token, so only this instance answers it.', security: [] },
      },
    )
    .get(
      '/internal/tls/ask',
      ({ query, request }) => {
        // Caddy asks from this machine, directly: anything proxied or remote is not Caddy.
        const peer = socketAddress(request)
        if (!peer || classifyAddress(peer) !== 'loopback' || request.headers.has('x-forwarded-for')) return text('loopback only', 403)
        const hostname = query.domain === undefined ? null : toHostname(query.domain)
        if (hostname === null) return text('domain must be a hostname', 400)
        return deps.served.get(hostname) || pool.has(hostname) ? text('ok', 200) : text('not served here', 404)
      },
      {
        query: t.Object({ domain: t.Optional(t.String({ description: 'The hostname Caddy wants a certificate for' })) }),
        response: { 200: t.String(), 400: t.String(), 403: t.String(), 404: t.String() },
        detail: {
          summary: 'May Caddy get a certificate for this hostname?',
          description: 'For Caddy\'s on_demand_tls ask (LNK_TLS_MODE=caddy), from loopback only: 200 for served custom domains, the shared pool and the API host, 404 otherwise. Answered from memory.',
          security: [],
        },
      },
    )
}
