// The query and the answer of GET /links (spec 4.1, contract 7.3): filters, sort, order, page numbers and cursors.
import { t, type TSchema } from 'elysia'
import { PaginationSchema } from '../../http/envelope'
import { ModeQuery } from '../identity'
import { SORT_FIELDS } from './list-port'

export const QR_PAGE_MAX = 50
export const PER_PAGE_MAX = 100
export const CURSOR_MAX = 512

const IncludeQuery = t.Optional(t.Literal('qr', { description: 'Attach the qr object (inline SVG and PNG URL)' }))

export const ListLinksQuery = t.Object({
  include: IncludeQuery,
  page: t.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 1,
    description: 'Page number (page-number pagination). Not together with cursor, except page=1. Deep pages are slow: prefer cursor',
  }),
  perPage: t.Integer({ minimum: 1, maximum: PER_PAGE_MAX, default: 25, description: `At most ${PER_PAGE_MAX}; at most ${QR_PAGE_MAX} with include=qr` }),
  search: t.Optional(t.String({ maxLength: 200, description: 'Case-insensitive match on slug, title, destination and tags' })),
  tag: t.Optional(t.String({ minLength: 1, maxLength: 64, description: 'Only links carrying this tag' })),
  folderId: t.Optional(t.String({ minLength: 1, maxLength: 128, description: 'Only links in this folder' })),
  campaignId: t.Optional(t.String({ minLength: 1, maxLength: 128, description: 'Only links of this campaign' })),
  domain: t.Optional(t.String({ minLength: 1, maxLength: 253, description: 'Only links on this domain' })),
  isArchived: t.Optional(t.Boolean({ description: 'Only archived (true) or unarchived (false) links' })),
  archived: t.Optional(t.Boolean({ description: 'The former name of isArchived, still accepted', deprecated: true })),
  isActive: t.Optional(t.Boolean({ description: 'Only active (true) or inactive (false) links' })),
  isTest: t.Optional(
    t.Boolean({ description: 'Only test (true) or live (false) links: the same as mode=test / mode=live (a test key may only ask for test links)' }),
  ),
  mode: ModeQuery('links'),
  sort: t.Optional(
    t.Union(
      SORT_FIELDS.map((s) => t.Literal(s)),
      {
        description:
          'createdAt (default), updatedAt, totalClicks, lastClickedAt, title or slug; ties by id. Links without a lastClickedAt or title come last in ' +
          'either order',
      },
    ),
  ),
  order: t.Optional(t.Union([t.Literal('desc'), t.Literal('asc')], { description: 'desc (default) or asc' })),
  cursor: t.Optional(
    t.String({
      maxLength: CURSOR_MAX,
      description:
        'Keyset pagination: meta.nextCursor of the previous page, with the same filters, sort and order. An empty cursor starts a walk at the first ' +
        'page. With a cursor meta.pagination is left out (no count is made)',
    }),
  ),
})

const ListMeta = t.Object({
  pagination: t.Optional(PaginationSchema),
  nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as cursor for the next page; null on the last page' }),
})

export const LinkPageEnvelope = <T extends TSchema>(item: T) => t.Object({ success: t.Literal(true), data: t.Array(item), meta: ListMeta })
