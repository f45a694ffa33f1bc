// /v1/domains: thin routes over the service. Test keys read; live keys change.
import { Elysia, t } from 'elysia'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import type { HttpKit } from '../identity'
import { CreateDomainBody, DeleteDomainQuery, Domain, UpdateDomainBody } from './model'
import { addDomain, deleteDomain, getDomain, listDomains, updateDomain, verifyDomain, type DomainsCtx } from './service'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope }
const Params = t.Object({ id: t.String() })

export function domainRoutes(ctx: DomainsCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.domains', seed: http.instanceId, prefix: '/domains', tags: ['Domains'] })
    .use(http.auth)
    .get('/', async ({ caller }) => ok(await listDomains(ctx, caller)), {
      permission: 'domains:read',
      response: { 200: Envelope(t.Array(Domain)), ...errors },
      detail: {
        summary: 'List custom domains',
        description: "Every custom domain of the workspace, oldest first (within the key's domain scope filter, if any).",
      },
    })
    .post(
      '/',
      async ({ caller, body, set }) => {
        set.status = 201
        return ok(await addDomain(ctx, caller, body))
      },
      {
        permission: 'domains:write',
        idempotent: true,
        body: CreateDomainBody,
        response: { 201: Envelope(Domain), ...errors },
        detail: {
          summary: 'Add a custom domain',
          description:
            'Answers the records to create: the TXT record _lnk-challenge.<domain> that proves control, and a CNAME (subdomain) or A/AAAA records ' +
            '(apex) that point the domain here. Checks run 1, 5 and 15 minutes after adding, then hourly to 72 hours and 6-hourly to 7 days; POST ' +
            '/domains/{id}/verify checks at once. 409 domain_taken when the workspace has the domain already or another workspace verified it. ' +
            'Supports Idempotency-Key.',
        },
      },
    )
    .get('/:id', async ({ caller, params }) => ok(await getDomain(ctx, caller, params.id)), {
      permission: 'domains:read',
      params: Params,
      response: { 200: Envelope(Domain), ...errors },
      detail: { summary: 'Get a custom domain', description: 'With the records to create and what the last check saw.' },
    })
    .patch('/:id', async ({ caller, params, body }) => ok(await updateDomain(ctx, caller, params.id, body)), {
      permission: 'domains:write',
      params: Params,
      body: UpdateDomainBody,
      response: { 200: Envelope(Domain), ...errors },
      detail: {
        summary: "Change a domain's fallbacks",
        description: 'rootRedirectUrl, notFoundUrl and expiredUrl; only the fields sent change, null clears one.',
      },
    })
    .delete('/:id', async ({ caller, params, query }) => ok(await deleteDomain(ctx, caller, params.id, query.archiveLinks === 'true')), {
      permission: 'domains:write',
      params: Params,
      query: DeleteDomainQuery,
      response: {
        200: Envelope(t.Object({ id: t.String(), deleted: t.Literal(true), archivedLinks: t.Integer({ description: 'Links archived with the domain' }) })),
        ...errors,
      },
      detail: {
        summary: 'Delete a custom domain',
        description:
          'Stops serving it at once. A domain with links that are not archived is refused (409 domain_has_links) unless archiveLinks=true, which ' +
          'archives them in the same step.',
      },
    })
    .post('/:id/verify', async ({ caller, params }) => ok(await verifyDomain(ctx, caller, params.id)), {
      permission: 'domains:write',
      params: Params,
      response: { 200: Envelope(Domain), ...errors },
      detail: {
        summary: 'Check a domain now',
        description:
          'Looks at its DNS at once and answers the domain with each record expected and seen. At most one check per 10 seconds per domain (429 ' +
          'verify_throttled with Retry-After).',
      },
    })
}
