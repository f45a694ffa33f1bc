// Listing links (contract 7.3): the filters of the query, the key's scope and mode, the sort, and the two ways
// to page. Without a cursor a page is found by its number (OFFSET, with a count for meta.pagination); with one
// it continues after the row the cursor names (keyset, no count), so a walk neither skips nor repeats a link
// while links are created or deleted, and a deep page costs what the first does. Every page answers
// meta.nextCursor, so a walk may start from a numbered page.
import { createHash } from 'node:crypto'
import { invalid } from '../../platform/errors'
import { type Caller, listedMode, type ModeFilter } from '../identity'
import type { LinksCtx } from './context'
import { type KeysetPosition, type ListFilter, NULLABLE_SORTS, SORT_FIELDS, type SortField, type SortOrder } from './list-port'
import type { LinkRow } from './port'
import { toLink, withQr } from './view'

export interface ListQuery {
  page: number
  perPage: number
  search?: string
  tag?: string
  folderId?: string
  campaignId?: string
  domain?: string
  isArchived?: boolean
  archived?: boolean
  isActive?: boolean
  isTest?: boolean
  mode?: ModeFilter
  sort?: SortField
  order?: SortOrder
  cursor?: string
  includeQr: boolean
}

const badQuery = (path: string, message: string) => invalid('query', [{ path, message }])

/** The mode asked for, from mode and its spelling as isTest (which must agree). */
function askedMode(q: ListQuery): ModeFilter | undefined {
  if (q.isTest === undefined) return q.mode
  const asked = q.isTest ? 'test' : 'live'
  if (q.mode !== undefined && q.mode !== 'all' && q.mode !== asked) throw badQuery('isTest', `isTest=${q.isTest} contradicts mode=${q.mode}`)
  return asked
}

/**
 * What a cursor is bound to: the filters, the scope, the sort and the order. A cursor of another query would
 * name a position in another list, so it is refused rather than answered with a list that skips or repeats.
 */
function fingerprint(filter: ListFilter, sort: SortField, order: SortOrder): string {
  const canonical = JSON.stringify([filter, sort, order])
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 12)
}

/** Opaque to clients: base64url of [value, id, fingerprint]. */
function encodeCursor(row: LinkRow, sort: SortField, print: string): string {
  return Buffer.from(JSON.stringify([row[sort], row.id, print])).toString('base64url')
}

function decodeCursor(cursor: string, sort: SortField, print: string): KeysetPosition {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw badQuery('cursor', 'not a cursor this service issued')
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || typeof parsed[1] !== 'string' || typeof parsed[2] !== 'string') {
    throw badQuery('cursor', 'not a cursor this service issued')
  }
  const [value, id, issuedFor] = parsed as [unknown, string, string]
  if (issuedFor !== print) throw badQuery('cursor', 'the cursor belongs to another list: send the filters, sort and order it was issued with')
  const textual = sort === 'title' || sort === 'slug'
  const fits = value === null ? NULLABLE_SORTS.has(sort) : textual ? typeof value === 'string' : Number.isSafeInteger(value)
  if (!fits) throw badQuery('cursor', 'not a cursor this service issued')
  return { value: value as KeysetPosition['value'], id }
}

export async function listLinks(ctx: LinksCtx, caller: Caller, q: ListQuery) {
  const isArchived = q.isArchived ?? q.archived
  if (q.isArchived !== undefined && q.archived !== undefined && q.isArchived !== q.archived) {
    throw badQuery('archived', 'archived is the former name of isArchived: send one of them')
  }
  const mode = listedMode(caller, askedMode(q), 'links')
  const filter: ListFilter = {
    workspaceId: caller.workspace.id,
    scope: caller.key.scopeFilters,
    search: q.search?.trim() || undefined,
    tag: q.tag,
    folderId: q.folderId,
    campaignId: q.campaignId,
    domain: q.domain?.toLowerCase(),
    isArchived,
    isActive: q.isActive,
    isTest: mode === undefined ? undefined : mode === 'test',
  }
  const sort = q.sort ?? 'createdAt'
  const order = q.order ?? 'desc'
  if (!SORT_FIELDS.includes(sort)) throw badQuery('sort', `one of ${SORT_FIELDS.join(', ')}`)
  const print = fingerprint(filter, sort, order)
  const keyset = q.cursor !== undefined
  if (keyset && q.page !== 1) throw badQuery('page', 'page and cursor exclude each other: a cursor names its own position')
  const after = keyset && q.cursor !== '' ? decodeCursor(q.cursor!, sort, print) : undefined
  // One row more than asked tells whether another page follows.
  const request = { filter, sort, order, limit: q.perPage + 1, ...(keyset ? { after } : { offset: (q.page - 1) * q.perPage }) }
  const [found, total] = await Promise.all([ctx.linkList.page(request), keyset ? undefined : ctx.linkList.count(filter)])
  const rows = found.slice(0, q.perPage)
  const nextCursor = found.length > q.perPage ? encodeCursor(rows[rows.length - 1]!, sort, print) : null
  const items = await Promise.all(rows.map((r) => withQr(ctx, toLink(ctx, r), q.includeQr)))
  const pagination = total === undefined ? undefined : { page: q.page, perPage: q.perPage, total, totalPages: Math.ceil(total / q.perPage) }
  return { items, meta: pagination ? { pagination, nextCursor } : { nextCursor } }
}
