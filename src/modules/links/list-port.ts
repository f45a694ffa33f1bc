// What listing links asks of storage (contract 7.3): filters, one sort with its order, and either a keyset
// position (after a row) or an offset. Plain types; repo-list.ts answers them on either engine.
import type { LinkRow } from './port'

export const SORT_FIELDS = ['createdAt', 'updatedAt', 'totalClicks', 'lastClickedAt', 'title', 'slug'] as const
export type SortField = (typeof SORT_FIELDS)[number]
export type SortOrder = 'asc' | 'desc'

/** Sorts whose column may be null: their nulls come last in either order. */
export const NULLABLE_SORTS: ReadonlySet<SortField> = new Set(['lastClickedAt', 'title'])

export interface ListFilter {
  workspaceId: string
  search?: string
  tag?: string
  folderId?: string
  campaignId?: string
  domain?: string
  isArchived?: boolean
  isActive?: boolean
  isTest?: boolean
  /** The calling key's scope filters: only links on these domains / carrying one of these tags / in these folders. */
  scope?: { domains?: string[]; tags?: string[]; folders?: string[] } | null
}

/** A position in a sort: the sort column's value of the last row seen (null: it had none) and its id. */
export interface KeysetPosition {
  value: number | string | null
  id: string
}

export interface ListRequest {
  filter: ListFilter
  sort: SortField
  order: SortOrder
  limit: number
  /** Keyset: rows strictly after this position. Without it, rows from `offset` on. */
  after?: KeysetPosition
  offset?: number
}

export interface LinkListRepo {
  /** Up to `limit` rows in the sort's order (ties by id, bytewise, in the same direction). */
  page(req: ListRequest): Promise<LinkRow[]>
  /** How many links match the filter. */
  count(filter: ListFilter): Promise<number>
}
