// PATCH /links/bulk and POST /links/bulk/delete (contract 7.3). Mounted inside the links routes, beside
// POST /links/bulk; fixed paths, so the router never takes them for /links/{id}.
import type { TSchema } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import type { HttpKit } from '../identity'
import { BULK_EDIT_MAX, bulkDelete, bulkUpdate } from './bulk-edit'
import type { LinksCtx } from './context'
import { Link, UpdateLinkBody, type UpdateLinkInput } from './model'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope }

/** Fields that name one link, never many: setting one value on many links could only fail for all but one. */
const ONE_LINK_FIELDS = new Set(['slug', 'externalId', 'include'])

/** The PATCH body's writable fields, less those naming one link (read-only fields are ignored there, absent here). */
const settable = Object.fromEntries(
  Object.entries(UpdateLinkBody.properties).filter(([key, schema]) => !ONE_LINK_FIELDS.has(key) && !(schema as TSchema & { readOnly?: boolean }).readOnly),
)

const Ids = t.Array(t.String({ minLength: 1, maxLength: 1024 }), {
  minItems: 1,
  maxItems: BULK_EDIT_MAX,
  description: `1 to ${BULK_EDIT_MAX} link ids (UUID) or ext_{externalId} references, as sent (not percent-encoded)`,
})

const BulkEditBody = t.Object(
  {
    ids: Ids,
    set: t.Object(settable, {
      additionalProperties: false,
      minProperties: 1,
      title: 'LinkBulkSet',
      description: 'Fields set on every link named, as PATCH /links/{id} sets them (null clears a nullable field); not slug or externalId',
    }),
  },
  { additionalProperties: false },
)
const BulkDeleteBody = t.Object({ ids: Ids }, { additionalProperties: false })

const ItemError = t.Object(
  { code: t.String(), message: t.String(), details: t.Optional(t.Record(t.String(), t.Unknown())) },
  { description: 'Why this id was not changed: the error a single call would have answered' },
)
const BulkEditResponse = t.Object({
  updated: t.Integer({ minimum: 0 }),
  failed: t.Integer({ minimum: 0 }),
  results: t.Array(
    t.Object(
      { id: t.String({ description: 'The id as sent' }), ok: t.Boolean(), link: t.Optional(Link), error: t.Optional(ItemError) },
      { description: 'ok true with the changed link, or ok false with the error' },
    ),
  ),
})
const BulkDeleteResponse = t.Object({
  deleted: t.Integer({ minimum: 0 }),
  failed: t.Integer({ minimum: 0 }),
  results: t.Array(
    t.Object(
      { id: t.String({ description: 'The id as sent' }), ok: t.Boolean(), deleted: t.Optional(t.Literal(true)), error: t.Optional(ItemError) },
      { description: 'ok true with deleted true, or ok false with the error' },
    ),
  ),
})

export function bulkEditRoutes(ctx: LinksCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.links.bulk-edit', seed: http.instanceId, tags: ['Links'] })
    .use(http.auth)
    .patch(
      '/bulk',
      async ({ caller, body }) => {
        // The set schema is the PATCH body's, less fields; what it lets through is a PATCH body.
        const results = await bulkUpdate(ctx, caller, body.ids, body.set as UpdateLinkInput)
        const updated = results.filter((r) => r.ok).length
        return ok({ updated, failed: results.length - updated, results })
      },
      {
        permission: 'links:write',
        body: BulkEditBody,
        response: { 200: Envelope(BulkEditResponse), ...errors },
        detail: {
          summary: 'Change links in bulk',
          description:
            'Sets the same fields on up to 1000 links. One result per id, in order: the changed Link, or the error that link met ' +
            '(not_found, out_of_scope, slug_taken, validation_failed…); one bad id never holds up the others. Each link is changed in a ' +
            'transaction of its own and emits its link.updated event. A test key reaches test links only.',
        },
      },
    )
    .post(
      '/bulk/delete',
      async ({ caller, body }) => {
        const results = await bulkDelete(ctx, caller, body.ids)
        const deleted = results.filter((r) => r.ok).length
        return ok({ deleted, failed: results.length - deleted, results })
      },
      {
        permission: 'links:write',
        idempotent: true,
        body: BulkDeleteBody,
        response: { 200: Envelope(BulkDeleteResponse), ...errors },
        detail: {
          summary: 'Delete links in bulk',
          description:
            'Deletes up to 1000 links with their redirects. One result per id, in order: {id, ok: true, deleted: true}, or the error that ' +
            'link met; one bad id never holds up the others. Each link emits its link.deleted event. A test key reaches test links only. ' +
            'Supports Idempotency-Key.',
        },
      },
    )
}
