// /v1/bridge-pages, /v1/saved-templates and the public /v1/templates: thin routes over the services.
import { Elysia, t } from 'elysia'
import { Envelope, ErrorEnvelope, ok, okPage, PageEnvelope } from '../../http/envelope'
import { ModeQuery, type HttpKit } from '../identity'
import {
  AppendBlockBody,
  Block,
  BlockTypeSchema,
  BridgePage,
  BridgePageWithTree,
  CreatePageBody,
  SavedTemplate,
  SaveTemplateBody,
  TemplateDetail,
  TemplateSummary,
  TemplatesQuery,
  UpdateBlockBody,
  UpdatePageBody,
} from './model'
import {
  appendBlock,
  createPage,
  deleteBlock,
  deletePage,
  getBlock,
  getPage,
  listBlocks,
  listBlockTypes,
  listPages,
  saveTemplate,
  updateBlock,
  updatePage,
  type PagesCtx,
} from './service'
import { deleteSavedTemplate, getPublicTemplate, listPublicTemplates, listSavedTemplates } from './templates-service'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope }
const IdParams = t.Object({ id: t.String() })
/** One name per place in the router: the page is `pageId` under /bridge-pages (the spec's name for its blocks). */
const PageIdParams = t.Object({ pageId: t.String() })
const BlockParams = t.Object({ pageId: t.String(), blockId: t.String() })

export function pageRoutes(ctx: PagesCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.pages', seed: http.instanceId, prefix: '/bridge-pages', tags: ['Bridge pages'] })
    .use(http.auth)
    .get(
      '/',
      async ({ caller, query }) => {
        const { items, pagination } = await listPages(ctx, caller, query)
        return okPage(items, pagination)
      },
      {
        permission: 'pages:read',
        query: t.Object({
          page: t.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
          perPage: t.Integer({ minimum: 1, maximum: 100, default: 25 }),
          mode: ModeQuery('bridge pages'),
        }),
        response: { 200: PageEnvelope(BridgePage), ...errors },
        detail: { summary: 'List bridge pages', description: 'Newest first, with their view and click counts; the layout is in GET /bridge-pages/{id}.' },
      },
    )
    .post(
      '/',
      async ({ caller, body, set }) => {
        set.status = 201
        return ok(await createPage(ctx, caller, body))
      },
      {
        permission: 'pages:write',
        idempotent: true,
        body: CreatePageBody,
        response: { 201: Envelope(BridgePageWithTree), ...errors },
        detail: {
          summary: 'Create a bridge page',
          description:
            'Empty, or from a built-in template (templateSlug) or a saved one (savedTemplateId), not both. The slug comes from the title when omitted; ' +
            '409 slug_taken when the domain has it. Served at <domain>/p/<slug>. Supports Idempotency-Key.',
        },
      },
    )
    .get('/block-types', () => ok(listBlockTypes()), {
      permission: 'pages:read',
      response: { 200: Envelope(t.Array(BlockTypeSchema)), ...errors },
      detail: {
        summary: 'List block types',
        description: 'Every block type with the JSON Schema of its fields and the defaults an appended block starts from.',
      },
    })
    .get('/:pageId', async ({ caller, params }) => ok(await getPage(ctx, caller, params.pageId)), {
      permission: 'pages:read',
      params: PageIdParams,
      response: { 200: Envelope(BridgePageWithTree), ...errors },
      detail: { summary: 'Get a bridge page', description: 'With its layout: sections, columns and blocks in order.' },
    })
    .patch('/:pageId', async ({ caller, params, body }) => ok(await updatePage(ctx, caller, params.pageId, body)), {
      permission: 'pages:write',
      params: PageIdParams,
      body: UpdatePageBody,
      response: { 200: Envelope(BridgePageWithTree), ...errors },
      detail: {
        summary: 'Change a bridge page',
        description:
          'Only the fields sent change. layout re-arranges sections, columns and blocks in one step (every block exactly once). With version, a change ' +
          'made on an older version is refused (409 conflict). Theme colours are checked for WCAG AA contrast.',
      },
    })
    .delete('/:pageId', async ({ caller, params }) => ok(await deletePage(ctx, caller, params.pageId)), {
      permission: 'pages:write',
      params: PageIdParams,
      response: { 200: Envelope(t.Object({ id: t.String(), deleted: t.Literal(true) })), ...errors },
      detail: { summary: 'Delete a bridge page', description: 'With its blocks and counts. Refused (409 conflict) while a link shows it (bridgePageId).' },
    })
    .get('/:pageId/blocks', async ({ caller, params }) => ok(await listBlocks(ctx, caller, params.pageId)), {
      permission: 'pages:read',
      params: PageIdParams,
      response: { 200: Envelope(t.Array(Block)), ...errors },
      detail: {
        summary: "List a page's blocks",
        description:
          'Flat, in reading order: sections top to bottom, columns left to right, blocks top to bottom; each with its index, sectionId, columnId and position.',
      },
    })
    .post(
      '/:pageId/blocks',
      async ({ caller, params, body, set }) => {
        set.status = 201
        return ok(await appendBlock(ctx, caller, params.pageId, body))
      },
      {
        permission: 'pages:write',
        idempotent: true,
        params: PageIdParams,
        body: AppendBlockBody,
        response: { 201: Envelope(Block), ...errors },
        detail: {
          summary: 'Append a block',
          description:
            "Starts from the type's defaults and overlays fields (id and type inside fields are ignored), validates, and places the block at the end of " +
            "the page's last column, or where sectionId/columnId/position say. An empty page first gets one full-width section. 400 " +
            'unknown_block_type for a type not in GET /bridge-pages/block-types. Supports Idempotency-Key.',
        },
      },
    )
    .get('/:pageId/blocks/:blockId', async ({ caller, params }) => ok(await getBlock(ctx, caller, params.pageId, params.blockId)), {
      permission: 'pages:read',
      params: BlockParams,
      response: { 200: Envelope(Block), ...errors },
      detail: { summary: 'Get a block' },
    })
    .patch('/:pageId/blocks/:blockId', async ({ caller, params, body }) => ok(await updateBlock(ctx, caller, params.pageId, params.blockId, body)), {
      permission: 'pages:write',
      params: BlockParams,
      body: UpdateBlockBody,
      response: { 200: Envelope(Block), ...errors },
      detail: {
        summary: "Change a block's fields",
        description:
          "The body is merged into the block's fields (JSON Merge Patch; null returns a field to its default) and the result validated. Sending a " +
          'different type is refused with 400 block_type_immutable.',
      },
    })
    .delete(
      '/:pageId/blocks/:blockId',
      async ({ caller, params, set }) => {
        await deleteBlock(ctx, caller, params.pageId, params.blockId)
        set.status = 204
        return null
      },
      {
        permission: 'pages:write',
        params: BlockParams,
        response: { 204: t.Null({ description: 'Deleted; no body' }), ...errors },
        detail: { summary: 'Delete a block', description: 'Answers 204 with no body.' },
      },
    )
}

export function savedTemplateRoutes(ctx: PagesCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.saved-templates', seed: http.instanceId, prefix: '/saved-templates', tags: ['Bridge pages'] })
    .use(http.auth)
    .get('/', async ({ caller }) => ok(await listSavedTemplates(ctx, caller)), {
      permission: 'pages:read',
      response: { 200: Envelope(t.Array(SavedTemplate)), ...errors },
      detail: {
        summary: 'List saved templates',
        description: "The workspace's private templates, oldest first; POST /bridge-pages with savedTemplateId starts a page from one.",
      },
    })
    .post(
      '/',
      async ({ caller, body, set }) => {
        set.status = 201
        return ok(await saveTemplate(ctx, caller, body))
      },
      {
        permission: 'pages:write',
        body: SaveTemplateBody,
        response: { 201: Envelope(SavedTemplate), ...errors },
        detail: { summary: 'Save a page as a template', description: "Keeps a copy of the page's layout, blocks, title and theme, private to the workspace." },
      },
    )
    .delete('/:id', async ({ caller, params }) => ok(await deleteSavedTemplate(ctx, caller, params.id)), {
      permission: 'pages:write',
      params: IdParams,
      response: { 200: Envelope(t.Object({ id: t.String(), deleted: t.Literal(true) })), ...errors },
      detail: { summary: 'Delete a saved template', description: 'Pages made from it keep their blocks.' },
    })
}

/** Public (spec section 5 rule 4): no credential. */
export function templateRoutes(http: Pick<HttpKit, 'instanceId'>) {
  return new Elysia({ name: 'lnk.templates', seed: http.instanceId, prefix: '/templates', tags: ['Templates'] })
    .get(
      '/',
      ({ query }) => {
        const { items, pagination } = listPublicTemplates(query)
        return okPage(items, pagination)
      },
      {
        query: TemplatesQuery,
        response: { 200: PageEnvelope(TemplateSummary), 400: ErrorEnvelope },
        detail: {
          summary: 'List templates',
          description: 'Public. The built-in templates, filtered by category, tag and words (q); limit and offset page through them (meta.pagination).',
          security: [],
        },
      },
    )
    .get('/:slug', ({ params }) => ok(getPublicTemplate(params.slug)), {
      params: t.Object({ slug: t.String() }),
      response: { 200: Envelope(TemplateDetail), 400: ErrorEnvelope, 404: ErrorEnvelope },
      detail: {
        summary: 'Get a template',
        description: "Public. With the page tree it builds: sections, columns and blocks with the block types' defaults merged in.",
        security: [],
      },
    })
}
