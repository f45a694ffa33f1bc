// The pages area's port: plain types, no engine (repo.ts answers it on either engine; repo-sqlite.ts the
// synchronous reads of SQLite's serving path).
import type { PublishInput } from '../../events/outbox'
import type { BareSections, TreeSection, Theme } from './tree'

export interface PageRow {
  id: string
  workspaceId: string
  isTest: boolean
  domain: string
  slug: string
  title: string
  description: string | null
  lang: string
  theme: Theme
  ogImageUrl: string | null
  templateSlug: string | null
  savedTemplateId: string | null
  version: number
  createdAt: number
  updatedAt: number
}

export type PagePatch = Partial<Pick<PageRow, 'domain' | 'slug' | 'title' | 'description' | 'lang' | 'theme' | 'ogImageUrl'>>

export interface SavedTemplateRow {
  id: string
  workspaceId: string
  name: string
  description: string | null
  sourcePageId: string | null
  title: string
  lang: string
  theme: Theme
  sections: BareSections
  createdAt: number
}

/** Counted visits and button clicks of a page; `blocks` by block id. */
export interface PageCounts {
  views: number
  buttonClicks: number
  blocks: Record<string, number>
}

/** A workspace link as a button or a link option names it. */
export interface LinkTarget {
  id: string
  workspaceId: string
  domain: string
  slug: string
  isTest: boolean
  usable: boolean
}

export interface BlockOwner {
  pageId: string
  workspaceId: string
  isTest: boolean
  domain: string
  type: string
  fields: Record<string, unknown>
}

export type WriteOutcome = { ok: true; row: PageRow } | { ok: false; reason: 'gone' | 'slug_taken' | 'stale' }

export interface PagesRepo {
  insert(row: PageRow, tree: TreeSection[], event: (row: PageRow) => PublishInput): Promise<WriteOutcome>
  find(workspaceId: string, id: string): Promise<PageRow | undefined>
  /** Newest first; `isTest` undefined lists both modes; `domains` limits to those domains when given. */
  list(workspaceId: string, filter: { isTest?: boolean; domains?: string[] }, offset: number, limit: number): Promise<{ rows: PageRow[]; total: number }>
  tree(pageId: string): Promise<TreeSection[]>
  /** Block counts per page. */
  blockCounts(pageIds: string[]): Promise<Map<string, number>>
  counts(pageIds: string[]): Promise<Map<string, PageCounts>>
  /**
   * Writes the page's fields and, when given, its whole tree, if the page is still at `version`; bumps the
   * version and publishes the event built from the new row, in one transaction.
   */
  save(
    id: string,
    workspaceId: string,
    version: number,
    patch: PagePatch,
    tree: TreeSection[] | null,
    now: number,
    event: (row: PageRow) => PublishInput,
  ): Promise<WriteOutcome>
  /** Deletes the page unless links show it. */
  delete(
    id: string,
    workspaceId: string,
    event: PublishInput,
  ): Promise<{ ok: true } | { ok: false; reason: 'gone' } | { ok: false; reason: 'in_use'; links: number }>
  slugsInUse(domain: string, candidates: string[]): Promise<Set<string>>
  /** The links among `ids` that belong to the workspace. */
  linkTargets(workspaceId: string, ids: string[]): Promise<LinkTarget[]>

  insertSavedTemplate(row: SavedTemplateRow): Promise<void>
  findSavedTemplate(workspaceId: string, id: string): Promise<SavedTemplateRow | undefined>
  listSavedTemplates(workspaceId: string): Promise<SavedTemplateRow[]>
  deleteSavedTemplate(workspaceId: string, id: string): Promise<boolean>

  // The serving path, where PostgreSQL serves (SQLite answers it synchronously: PagesSyncReads).
  findBySlug(domain: string, slug: string): Promise<PageRow | undefined>
  findById(id: string): Promise<PageRow | undefined>
  blockOwner(blockId: string): Promise<BlockOwner | undefined>
  /** Adds counted views and clicks; pages deleted meanwhile are skipped. */
  addCounts(rows: { pageId: string; blockId: string; day: number; count: number }[]): Promise<void>
}

/** The serving path on SQLite: synchronous reads, as a cache miss of the redirect path is. */
export interface PagesSyncReads {
  findBySlugSync(domain: string, slug: string): PageRow | undefined
  findByIdSync(id: string): PageRow | undefined
  treeSync(pageId: string): TreeSection[]
  blockOwnerSync(blockId: string): BlockOwner | undefined
  linkTargetsSync(ids: string[]): LinkTarget[]
}

/** A link as a page's block targets it. */
export const asTarget = (r: {
  id: string
  workspaceId: string
  domain: string
  slug: string
  isTest: boolean
  isActive: boolean
  isArchived: boolean
}): LinkTarget => ({
  id: r.id,
  workspaceId: r.workspaceId,
  domain: r.domain,
  slug: r.slug,
  isTest: r.isTest,
  usable: r.isActive && !r.isArchived,
})
