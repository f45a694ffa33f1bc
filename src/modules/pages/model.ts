// TypeBox schemas of the pages area: bridge pages, their sections, columns and blocks, block types,
// templates and saved templates. Block fields are published per type (the union below names each type's
// schema), so a client sees every block schema in the OpenAPI document.
import { t, type Static } from 'elysia'
import type { EventDefinition } from '../../events/catalogue'
import { documentOnly, HTTP_URL_PATTERN, publishedString } from '../../http/published-schema'
import { BLOCK_TYPES } from './blocks'
import { BUILTIN_TEMPLATES } from './templates'

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T, options: Record<string, unknown> = {}) => t.Union([schema, t.Null()], options)

export const PAGE_SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$'
export const MAX_BLOCKS_PER_PAGE = 200
export const MAX_SECTIONS_PER_PAGE = 50

const Color = (what: string) => t.String({ pattern: '^#[0-9a-fA-F]{6}$', description: `${what}, #rrggbb` })
const ThemeColors = t.Object(
  {
    background: Color('Page background'),
    text: Color('Body text; at least 4.5:1 against background'),
    accent: Color('Button fill and link colour; at least 4.5:1 against background'),
    accentText: Color('Text on the accent fill; at least 4.5:1 against accent'),
  },
  { additionalProperties: false },
)

export const Theme = t.Object(
  {
    light: ThemeColors,
    dark: ThemeColors,
    font: t.Union([t.Literal('system'), t.Literal('serif'), t.Literal('mono')], {
      description: "A font stack installed on the visitor's device (no web fonts are loaded)",
    }),
    buttonShape: t.Union([t.Literal('rounded'), t.Literal('pill'), t.Literal('square')]),
  },
  {
    additionalProperties: false,
    description: "Colours for light and dark schemes (the page follows the visitor's preference), checked for WCAG AA contrast when saved",
  },
)

export const SectionLayoutSchema = t.Union([t.Literal('full'), t.Literal('1-1'), t.Literal('2-1'), t.Literal('1-2'), t.Literal('1-1-1')], {
  description: 'Column widths of 12: full = 12, 1-1 = 6+6, 2-1 = 8+4, 1-2 = 4+8, 1-1-1 = 4+4+4; columns stack on phones',
})

/** A block's fields: exactly the schema of its type (GET /bridge-pages/block-types lists them with their defaults). */
export const BlockFields = t.Unsafe<Record<string, unknown>>(
  t.Union(
    BLOCK_TYPES.map((b) => b.schema),
    { description: 'The fields of the block, as the schema of its type says' },
  ),
)

export const TreeBlockSchema = t.Object({ id: t.String({ description: 'blk_…' }), type: t.String(), fields: BlockFields })

export const SectionSchema = t.Object({
  id: t.String({ description: 'sec_…' }),
  layout: SectionLayoutSchema,
  columns: t.Array(t.Object({ id: t.String({ description: 'col_…' }), width: t.Integer({ minimum: 1, maximum: 12 }), blocks: t.Array(TreeBlockSchema) })),
})

export const Block = t.Object({
  id: t.String({ description: 'blk_…' }),
  type: t.String({ description: 'The block type (GET /bridge-pages/block-types)' }),
  fields: BlockFields,
  index: t.Integer({ minimum: 0, description: 'Place in reading order: sections top to bottom, columns left to right, blocks top to bottom' }),
  sectionId: t.String(),
  columnId: t.String(),
  position: t.Integer({ minimum: 0, description: 'Place within its column' }),
  clicks: t.Integer({ minimum: 0, description: "Counted clicks through the block's tracked links (buttons, social links); 0 for other blocks" }),
})

export const BridgePage = t.Object({
  id: t.String({ description: 'bp_…' }),
  title: t.String(),
  slug: t.String(),
  domain: t.String({ description: 'The short or custom domain the page is served on' }),
  url: t.String({ description: 'The public page: <scheme>://<domain>/p/<slug>' }),
  description: Nullable(t.String(), { description: 'For search engines and link previews' }),
  lang: t.String({ description: 'BCP 47 language tag of the page' }),
  theme: Theme,
  ogImageUrl: Nullable(t.String(), { description: 'The image link previews show' }),
  isTest: t.Boolean({ description: 'Made with a test key: served with a test banner, never counted, never indexed' }),
  version: t.Integer({
    minimum: 1,
    description: 'Bumped by every change to the page or its blocks; PATCH may send it to refuse a change made on an older version',
  }),
  templateSlug: Nullable(t.String(), { description: 'The built-in template it was made from' }),
  savedTemplateId: Nullable(t.String(), { description: 'The saved template it was made from' }),
  blockCount: t.Integer({ minimum: 0 }),
  views: t.Integer({ minimum: 0, description: 'Counted page views (bots, HEAD requests and test pages never count)' }),
  buttonClicks: t.Integer({ minimum: 0, description: "Counted clicks through the page's tracked links" }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

export const BridgePageWithTree = t.Composite([
  BridgePage,
  t.Object({ sections: t.Array(SectionSchema, { description: 'The layout: sections, their columns and blocks, in order' }) }),
])

const Title = t.String({ minLength: 1, maxLength: 120, description: "1-120 characters; the <title> and, without a profile block, the page's heading" })
const Slug = t.String({ pattern: PAGE_SLUG_PATTERN, description: '1-64 of a-z 0-9 and inner hyphens; unique per domain; generated when omitted' })
const Domain = t.String({ maxLength: 253, description: 'A shared short domain (default: the first) or a verified custom domain of the workspace' })
const Description = Nullable(t.String({ maxLength: 300 }), { description: 'At most 300 characters' })
const Lang = t.String({ pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$', maxLength: 35, description: 'BCP 47 tag such as en or pt-BR (default en)' })
// Length is the route's to enforce, format and scheme the service's (checkOgImage), as browsers read URLs.
const OgImageUrl = Nullable(t.String({ minLength: 1, maxLength: 2048, ...documentOnly({ format: 'uri', pattern: HTTP_URL_PATTERN }) }), {
  description: 'Absolute http(s) URL of the preview image, at most 2048 characters',
})

/** A built-in template's slug, listed from the templates; the service refuses any other (400, naming templateSlug). */
const TemplateSlug = publishedString('TemplateSlug', {
  title: 'TemplateSlug',
  enum: BUILTIN_TEMPLATES.map((template) => template.slug),
  description: "A built-in template's slug, as GET /templates lists them",
})

export const CreatePageBody = t.Object(
  {
    title: t.Optional(Title),
    slug: t.Optional(Slug),
    templateSlug: t.Optional(TemplateSlug),
    savedTemplateId: t.Optional(t.String({ maxLength: 64, description: 'Start from this saved template of the workspace (tpl_…); not with templateSlug' })),
    domain: t.Optional(Domain),
    description: t.Optional(Description),
    lang: t.Optional(Lang),
    theme: t.Optional(Theme),
    ogImageUrl: t.Optional(OgImageUrl),
  },
  // Not both: the service names savedTemplateId when both come.
  { additionalProperties: false, ...documentOnly({ not: { required: ['templateSlug', 'savedTemplateId'] } }) },
)
export type CreatePageInput = Static<typeof CreatePageBody>

export const LayoutBody = t.Array(
  t.Object(
    {
      id: t.Optional(t.String({ maxLength: 64, description: 'An existing section (sec_…) to keep; omitted: a new section' })),
      layout: SectionLayoutSchema,
      columns: t.Array(t.Array(t.String({ maxLength: 64, description: 'blk_…' }), { maxItems: MAX_BLOCKS_PER_PAGE }), {
        maxItems: 3,
        description: 'Per column, left to right, the ids of its blocks top to bottom; as many columns as the layout has',
      }),
    },
    { additionalProperties: false },
  ),
  {
    maxItems: MAX_SECTIONS_PER_PAGE,
    description:
      'The whole arrangement: every block of the page exactly once. Sections left out are removed (they must hold no block that is not placed elsewhere).',
  },
)
export type LayoutInput = Static<typeof LayoutBody>

export const UpdatePageBody = t.Object(
  {
    title: t.Optional(Title),
    slug: t.Optional(Slug),
    domain: t.Optional(Domain),
    description: t.Optional(Description),
    lang: t.Optional(Lang),
    theme: t.Optional(Theme),
    ogImageUrl: t.Optional(OgImageUrl),
    layout: t.Optional(LayoutBody),
    version: t.Optional(t.Integer({ minimum: 1, description: 'The version the change was made on: refused with 409 conflict when the page has moved on' })),
  },
  { additionalProperties: false },
)
export type UpdatePageInput = Static<typeof UpdatePageBody>

/**
 * A block type's name, listed from the block catalogue. Published as an enum and checked by the service
 * (publishedString), whose 400 unknown_block_type lists the same names, as does GET /bridge-pages/block-types.
 */
export const BlockTypeName = publishedString('BlockTypeName', {
  title: 'BlockTypeName',
  enum: BLOCK_TYPES.map((b) => b.type),
  description: 'A block type; GET /bridge-pages/block-types lists each with its fields and defaults',
})

export const AppendBlockBody = t.Object(
  {
    type: BlockTypeName,
    fields: t.Optional(t.Record(t.String(), t.Unknown(), { description: "Overlaid on the type's defaults; id and type inside are ignored" })),
    sectionId: t.Optional(
      t.String({
        maxLength: 64,
        description: 'Place in this section of the page (sec_…; another is 400), in its last column unless columnId says otherwise; default: the last section',
      }),
    ),
    columnId: t.Optional(t.String({ maxLength: 64, description: 'Place in this column of the page (col_…; another is 400)' })),
    position: t.Optional(
      t.Integer({ minimum: 0, maximum: MAX_BLOCKS_PER_PAGE, description: 'Place at this position in the column (0 = top); default: the end' }),
    ),
  },
  { additionalProperties: false },
)
export type AppendBlockInput = Static<typeof AppendBlockBody>

export const UpdateBlockBody = t.Record(t.String(), t.Unknown(), {
  description:
    "An object of fields merged into the block's fields as a JSON Merge Patch (RFC 7396): a field set to null returns to the type's default. A type " +
    "different from the block's is refused (400 block_type_immutable); id is ignored.",
})

export const BlockTypeSchema = t.Object({
  type: BlockTypeName,
  title: t.String(),
  description: t.String(),
  schema: t.Record(t.String(), t.Unknown(), { description: 'JSON Schema of the fields' }),
  defaults: t.Record(t.String(), t.Unknown(), { description: 'What an appended block starts from' }),
})

const TemplateBlock = t.Object({ type: t.String(), fields: BlockFields })
const TemplateSections = t.Array(
  t.Object({ layout: SectionLayoutSchema, columns: t.Array(t.Object({ width: t.Integer({ minimum: 1, maximum: 12 }), blocks: t.Array(TemplateBlock) })) }),
)

export const TemplateSummary = t.Object({
  slug: TemplateSlug,
  name: t.String(),
  description: t.String(),
  category: t.String(),
  tags: t.Array(t.String()),
  blockCount: t.Integer({ minimum: 0 }),
})

export const TemplateDetail = t.Composite([TemplateSummary, t.Object({ title: t.String(), lang: t.String(), theme: Theme, sections: TemplateSections })])

export const TemplatesQuery = t.Object({
  category: t.Optional(t.String({ maxLength: 64, description: 'Only templates of this category' })),
  tag: t.Optional(t.String({ maxLength: 64, description: 'Only templates carrying this tag' })),
  q: t.Optional(t.String({ maxLength: 100, description: 'Words matched in name, description and tags (case-insensitive)' })),
  limit: t.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: t.Integer({ minimum: 0, default: 0 }),
})

export const SavedTemplate = t.Object({
  id: t.String({ description: 'tpl_…' }),
  name: t.String(),
  description: Nullable(t.String()),
  sourcePageId: Nullable(t.String({ description: 'The page it was saved from' })),
  title: t.String(),
  lang: t.String(),
  theme: Theme,
  sections: TemplateSections,
  blockCount: t.Integer({ minimum: 0 }),
  createdAt: t.String({ format: 'date-time' }),
})

export const SaveTemplateBody = t.Object(
  {
    pageId: t.String({ maxLength: 64, description: 'The page (bp_…) whose layout, blocks and theme to save' }),
    name: t.String({ minLength: 1, maxLength: 80 }),
    description: t.Optional(Nullable(t.String({ maxLength: 300 }))),
  },
  { additionalProperties: false },
)

/** A page as its events carry it: without the view and click counters, which change without events. */
const PageData = t.Omit(BridgePage, ['views', 'buttonClicks'])

export const PAGE_EVENTS: EventDefinition[] = [
  { type: 'bridge_page.created', description: 'A bridge page was created (empty, or from a template).', data: PageData },
  {
    type: 'bridge_page.updated',
    description:
      'A bridge page or its blocks changed; `changes` names the page fields sent, or `blocks` when a block was appended, changed or deleted. version is ' +
      "the page's new version.",
    data: t.Composite([PageData, t.Object({ changes: t.Array(t.String()) })]),
  },
  {
    type: 'bridge_page.deleted',
    description: 'A bridge page was deleted with its blocks; its URL no longer answers.',
    data: t.Object({ id: t.String(), slug: t.String(), domain: t.String(), url: t.String(), title: t.String() }),
  },
]
