import { Elysia, t, type Static } from 'elysia'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import { qrPageTooLarge } from './errors'
import type { HttpKit } from '../identity'
import type { LinksCtx } from './context'
import { CreateLinkBody, Link, UpdateLinkBody } from './model'
import { LinkPageEnvelope, ListLinksQuery, QR_PAGE_MAX } from './list-model'
import { listLinks } from './list-query'
import { BULK_MAX, bulkCreate, createLink, deleteLink, getLink, updateLink } from './service'
import { bulkEditRoutes } from './bulk-edit-routes'
import { LinkIdParams } from './external-id'
import { upsertRoutes } from './upsert-routes'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope }
export { QR_PAGE_MAX } from './list-model'

const IncludeQuery = t.Optional(t.Literal('qr', { description: 'Attach the qr object (inline SVG and PNG URL)' }))

const BulkResult = t.Object(
  {
    ok: t.Boolean(),
    link: t.Optional(Link),
    error: t.Optional(t.Object({ code: t.String(), message: t.String(), details: t.Optional(t.Record(t.String(), t.Unknown())) })),
  },
  { description: 'ok true with the link, or ok false with the error that kept this input from being created' },
)
const BulkResponse = t.Object({ created: t.Integer(), failed: t.Integer(), results: t.Array(BulkResult) })

export function linkRoutes(ctx: LinksCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.links', seed: http.instanceId, prefix: '/links', tags: ['Links'] })
    .use(http.auth)
    .get(
      '/',
      async ({ caller, query }) => {
        const includeQr = query.include === 'qr'
        if (includeQr && query.perPage > QR_PAGE_MAX) {
          throw qrPageTooLarge(QR_PAGE_MAX)
        }
        const { items, meta } = await listLinks(ctx, caller, { ...query, includeQr })
        return { success: true as const, data: items, meta }
      },
      {
        permission: 'links:read',
        query: ListLinksQuery,
        response: { 200: LinkPageEnvelope(Link), ...errors },
        detail: {
          summary: 'List links',
          description:
            "Filtered by tag, folderId, campaignId, domain, isArchived, isActive, isTest and search, within the key's scope filters; sorted by sort and " +
            'order (newest first by default), ties by id. ' +
            'Without cursor, pages by number: meta.pagination (page, perPage, total, totalPages) and meta.nextCursor. With cursor (empty for the first ' +
            'page), keyset pages: ' +
            'only meta.nextCursor, null on the last page; a walk neither skips nor repeats a link while links are created or deleted. ' +
            "A live key lists live links unless mode (or isTest) says otherwise; a test key lists only its workspace's test links.",
        },
      },
    )
    .post(
      '/',
      async ({ caller, body, set }) => {
        set.status = 201
        return ok(await createLink(ctx, caller, body))
      },
      {
        permission: 'links:write',
        idempotent: true,
        body: CreateLinkBody,
        response: { 201: Envelope(Link), ...errors },
        detail: {
          summary: 'Create a link',
          description:
            'Only destinationUrl is required. A test key creates a sandboxed link (isTest). include: ["qr"] returns the qr object. Supports Idempotency-Key.',
        },
      },
    )
    .post(
      '/bulk',
      async ({ caller, body, set }) => {
        set.status = 200

        const results = await bulkCreate(ctx, caller, body.links)
        const payload: Static<typeof BulkResponse> = { created: results.filter((r) => r.ok).length, failed: results.filter((r) => !r.ok).length, results }
        return ok(payload)
      },
      {
        permission: 'links:write',
        idempotent: true,
        body: t.Object(
          {
            links: t.Array(t.Union([CreateLinkBody, t.Unknown()]), {
              minItems: 1,
              maxItems: BULK_MAX,
              description:
                `1 to ${BULK_MAX} link create bodies (LinkCreate). Each is checked on its own: an invalid one gets an error result and never ` +
                `rejects the others.`,
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(BulkResponse), ...errors },
        detail: {
          summary: 'Create links in bulk',
          description:
            'One result per input, in order: the Link or an error with code and message. The valid ones are written in one transaction. Supports ' +
            'Idempotency-Key.',
        },
      },
    )
    .use(upsertRoutes(ctx, http))
    .use(bulkEditRoutes(ctx, http))
    .get('/:id', async ({ caller, params, query }) => ok(await getLink(ctx, caller, params.id, query.include === 'qr')), {
      permission: 'links:read',
      params: LinkIdParams,
      query: t.Object({ include: IncludeQuery }),
      response: { 200: Envelope(Link), ...errors },
      detail: { summary: 'Get a link', description: 'A test key sees test links only: a live link is 404 to it. A live key reads test links too.' },
    })
    .patch('/:id', async ({ caller, params, body }) => ok(await updateLink(ctx, caller, params.id, body ?? {})), {
      permission: 'links:write',
      params: LinkIdParams,
      body: t.Optional(UpdateLinkBody),
      response: { 200: Envelope(Link), ...errors },
      detail: {
        summary: 'Update a link',
        description:
          'Partial: only the fields sent change; null clears a nullable field. The slug or domain may change when the new pair is free. The redirect ' +
          'uses the new values from the next request on. The body has the create body\'s shape: include: ["qr"] returns the link with its qr ' +
          "object. The Link's read-only fields (id, shortUrl, hasPassword, totalClicks, uniqueClicks, isTest, createdAt, updatedAt, qr) are " +
          'accepted and ignored, so a fetched Link can be sent back; any other unknown field is 400.',
      },
    })
    .delete('/:id', async ({ caller, params }) => ok(await deleteLink(ctx, caller, params.id)), {
      permission: 'links:write',
      params: LinkIdParams,
      response: { 200: Envelope(t.Object({ id: t.String(), deleted: t.Literal(true) })), ...errors },
      detail: { summary: 'Delete a link', description: 'Removes the link and its redirect at once, with its clicks.' },
    })
}
