// The links list's filters and order as they live in the address (#/links?folderId=fld_1&sort=title&order=asc),
// how they become GET /v1/links's query, and the cursor paging over it: the first page comes with the address,
// "Load more" appends the pages after it until meta.nextCursor runs out.
import { useEffect, useState } from 'preact/hooks'
import { api } from '../../api'
import type { QueryOf } from '../../api-types'
import { announce } from '../../ui/announce'
import { useAsync } from '../../ui/async'
import type { Link } from './model'

export const PER_PAGE = 25

/** Three-way flags: 'all' sends nothing. Archived defaults to 'false' (archived links hidden), as before. */
export type Tri = 'all' | 'true' | 'false'

export interface Filters {
  search: string
  tag: string
  folderId: string
  domain: string
  archived: Tri
  active: Tri
  test: Tri
  sort: string
  order: 'asc' | 'desc'
}

export const SORTS = [
  { value: 'createdAt', label: 'Created' },
  { value: 'updatedAt', label: 'Updated' },
  { value: 'totalClicks', label: 'Clicks' },
  { value: 'lastClickedAt', label: 'Last clicked' },
  { value: 'title', label: 'Title' },
  { value: 'slug', label: 'Slug' },
] as const

export const DEFAULTS: Filters = {
  search: '',
  tag: '',
  folderId: '',
  domain: '',
  archived: 'false',
  active: 'all',
  test: 'all',
  sort: 'createdAt',
  order: 'desc',
}

const tri = (value: string | null, fallback: Tri): Tri => (value === 'true' || value === 'false' || value === 'all' ? value : fallback)

export function filtersOf(query: URLSearchParams): Filters {
  const sort = query.get('sort') ?? DEFAULTS.sort
  return {
    search: query.get('search') ?? '',
    tag: query.get('tag') ?? '',
    folderId: query.get('folderId') ?? '',
    domain: query.get('domain') ?? '',
    archived: tri(query.get('archived'), DEFAULTS.archived),
    active: tri(query.get('active'), DEFAULTS.active),
    test: tri(query.get('test'), DEFAULTS.test),
    sort: SORTS.some((s) => s.value === sort) ? sort : DEFAULTS.sort,
    order: query.get('order') === 'asc' ? 'asc' : 'desc',
  }
}

/** The address's query for these filters: defaults are left out, so the plain list is plain '#/links'. */
export function addressOf(filters: Filters): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {}
  for (const name of Object.keys(DEFAULTS) as (keyof Filters)[]) out[name] = filters[name] === DEFAULTS[name] ? undefined : filters[name]
  return out
}

/** Whether anything narrows the list (the order does not). */
export const isFiltered = (f: Filters) =>
  Boolean(f.search || f.tag || f.folderId || f.domain || f.archived !== DEFAULTS.archived || f.active !== 'all' || f.test !== 'all')

const flag = (value: Tri) => (value === 'all' ? undefined : value)

export function apiQuery(f: Filters, cursor?: string): QueryOf<'/links', 'get'> {
  return {
    perPage: PER_PAGE,
    search: f.search,
    tag: f.tag,
    folderId: f.folderId,
    domain: f.domain,
    isArchived: flag(f.archived),
    isActive: flag(f.active),
    isTest: flag(f.test),
    sort: f.sort as QueryOf<'/links', 'get'>['sort'],
    order: f.order,
    cursor,
  }
}

/**
 * The list for the address `key` (its query text): the first page, then "more" pages appended by cursor.
 * A change of address or a reload starts over from the first page.
 */
export function useCursorList(filters: Filters, key: string) {
  const first = useAsync(() => api.page<'/links'>('/links', apiQuery(filters)), [key])
  const [extra, setExtra] = useState<{ links: Link[]; cursor: string | null } | null>(null)
  const [loadingMore, setLoadingMore] = useState(false)
  const [moreError, setMoreError] = useState<unknown>(null)
  useEffect(() => {
    // A new first page (new address or reload) drops what was appended to the old one.
    setExtra(null)
    setMoreError(null)
  }, [first.data])
  const links = first.data ? [...first.data.data, ...(extra?.links ?? [])] : []
  const nextCursor = extra ? extra.cursor : (first.data?.meta?.nextCursor ?? null)
  const loadMore = async () => {
    if (!nextCursor || loadingMore) return
    setLoadingMore(true)
    setMoreError(null)
    try {
      const page = await api.page<'/links'>('/links', apiQuery(filters, nextCursor))
      setExtra((e) => ({ links: [...(e?.links ?? []), ...page.data], cursor: page.meta?.nextCursor ?? null }))
      announce(page.data.length === 1 ? '1 more link shown' : `${page.data.length} more links shown`)
    } catch (error) {
      setMoreError(error)
    } finally {
      setLoadingMore(false)
    }
  }
  return { first, links, nextCursor, loadMore, loadingMore, moreError, total: first.data?.pagination?.total }
}
