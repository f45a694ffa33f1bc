import { Elysia, t } from 'elysia'
import { Envelope, ErrorEnvelope, ok, okPage, PageEnvelope } from '../../http/envelope'
import { type HttpKit, ModeQuery } from '../identity'
import { CreateTagBody, Tag, UpdateTagBody } from './model'
import { createTag, deleteTag, listTags, type TagsCtx, updateTag } from './service'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope }
const TagId = t.Object({ id: t.String({ maxLength: 64 }) })

export function tagRoutes(ctx: TagsCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.tags', seed: http.instanceId, prefix: '/tags', tags: ['Tags'] })
    .use(http.auth)
    .get(
      '/',
      async ({ caller, query }) => {
        const { items, pagination } = await listTags(ctx, caller, { page: query.page, perPage: query.perPage, mode: query.mode })
        return okPage(items, pagination)
      },
      {
        permission: 'links:read',
        query: t.Object({
          page: t.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
          perPage: t.Integer({ minimum: 1, maximum: 100, default: 100 }),
          mode: ModeQuery('links'),
        }),
        response: { 200: PageEnvelope(Tag), ...errors },
        detail: {
          summary: 'List tags',
          description:
            "By name (bytewise). linkCount counts the links of the key's mode (mode: live by default for a live key; a test key counts test links) on " +
            "the key's scoped domains. A key with tag scope filters lists only those tags.",
        },
      },
    )
    .post(
      '/',
      async ({ caller, body, set }) => {
        set.status = 201
        return ok(await createTag(ctx, caller, body))
      },
      {
        permission: 'links:write',
        idempotent: true,
        body: CreateTagBody,
        response: { 201: Envelope(Tag), ...errors },
        detail: {
          summary: 'Create a tag',
          description: 'A name the workspace has already is 409 tag_exists. A link using a new tag name creates the tag as well. Supports Idempotency-Key.',
        },
      },
    )
    .patch('/:id', async ({ caller, params, body }) => ok(await updateTag(ctx, caller, params.id, body)), {
      permission: 'links:write',
      params: TagId,
      body: UpdateTagBody,
      response: { 200: Envelope(Tag), ...errors },
      detail: {
        summary: 'Rename or recolour a tag',
        description:
          'A new name is renamed on every link of the workspace carrying the tag, in one transaction (their updatedAt changes; no link.updated events ' +
          'are sent, tag.updated says how many links changed). A name another tag has is 409 tag_exists. Needs a live key: tags are shared with ' +
          'live links.',
      },
    })
    .delete('/:id', async ({ caller, params }) => ok(await deleteTag(ctx, caller, params.id)), {
      permission: 'links:write',
      params: TagId,
      response: { 200: Envelope(t.Object({ id: t.String(), deleted: t.Literal(true), linksChanged: t.Integer({ minimum: 0 }) })), ...errors },
      detail: {
        summary: 'Delete a tag',
        description: 'Removes the tag from every link of the workspace carrying it, in one transaction (linksChanged counts them). Needs a live key.',
      },
    })
}
