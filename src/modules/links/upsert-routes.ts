// PUT /links/upsert (contract 7.3), mounted inside the links routes; a fixed path, so the router never takes
// it for /links/{id}.
import { Elysia } from 'elysia'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import type { HttpKit } from '../identity'
import type { LinksCtx } from './context'
import { CreateLinkBody, Link } from './model'
import { upsertLink } from './upsert'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope }

export function upsertRoutes(ctx: LinksCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.links.upsert', seed: http.instanceId, tags: ['Links'] }).use(http.auth).put(
    '/upsert',
    async ({ caller, body, set }) => {
      const { created, link } = await upsertLink(ctx, caller, body)
      set.status = created ? 201 : 200
      return ok(link)
    },
    {
      permission: 'links:write',
      idempotent: true,
      body: CreateLinkBody,
      response: { 200: Envelope(Link), 201: Envelope(Link), ...errors },
      detail: {
        summary: 'Create or update a link',
        description:
          'The create body. The link is found by externalId, or by domain + slug when no externalId is sent (one of externalId and slug ' +
          'is required). Found: changed like PATCH /links/{id}, only the fields sent (200, link.updated). Not found: created like ' +
          'POST /links (201, link.created; the plan allowance applies). A test key finds and creates test links only. Supports Idempotency-Key.',
      },
    },
  )
}
