// Queries of the pages area. A change to a page's layout or blocks rewrites its whole tree in one
// transaction guarded by the page's version, so two editors never interleave half-changes: the second one
// sees a newer version and starts again from what the first wrote. The serving path reads synchronously.
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { isUniqueViolation } from '../../db/errors'
import type { Tx } from '../../db/tx'
import { bridgePages, links, pageBlocks, pageColumns, pageSections, pageStats, savedTemplates, type StoredTheme } from '../../db/schema'
import { publish, type PublishInput } from '../../events/outbox'
import type { BareSections, SectionLayout, Theme, TreeSection } from './tree'

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
  save(id: string, workspaceId: string, version: number, patch: PagePatch, tree: TreeSection[] | null, now: number, event: (row: PageRow) => PublishInput): Promise<WriteOutcome>
  /** Deletes the page unless links show it. */
  delete(id: string, workspaceId: string, event: PublishInput): Promise<{ ok: true } | { ok: false; reason: 'gone' } | { ok: false; reason: 'in_use'; links: number }>
  slugsInUse(domain: string, candidates: string[]): Promise<Set<string>>
  /** The links among `ids` that belong to the workspace. */
  linkTargets(workspaceId: string, ids: string[]): Promise<LinkTarget[]>

  insertSavedTemplate(row: SavedTemplateRow): Promise<void>
  findSavedTemplate(workspaceId: string, id: string): Promise<SavedTemplateRow | undefined>
  listSavedTemplates(workspaceId: string): Promise<SavedTemplateRow[]>
  deleteSavedTemplate(workspaceId: string, id: string): Promise<boolean>

  // The serving path: synchronous reads, as a cache miss of the redirect path is.
  findBySlugSync(domain: string, slug: string): PageRow | undefined
  findByIdSync(id: string): PageRow | undefined
  treeSync(pageId: string): TreeSection[]
  blockOwnerSync(blockId: string): BlockOwner | undefined
  linkTargetsSync(ids: string[]): LinkTarget[]
  /** Adds counted views and clicks; pages deleted meanwhile are skipped. */
  addCounts(rows: { pageId: string; blockId: string; day: number; count: number }[]): Promise<void>
}

// --- SQLite ------------------------------------------------------------------------------------------

const asPage = (row: typeof bridgePages.$inferSelect) => row as unknown as PageRow
// The stored theme is the Theme the service checked; the schema below src/modules cannot name its type.
const stored = <T>(row: T) => row as T & { theme: StoredTheme }

function readTree(db: Tx, pageId: string): TreeSection[] {
  const sections = db.select().from(pageSections).where(eq(pageSections.pageId, pageId)).orderBy(asc(pageSections.position)).all()
  const columns = db.select().from(pageColumns).where(eq(pageColumns.pageId, pageId)).orderBy(asc(pageColumns.position)).all()
  const blocks = db.select().from(pageBlocks).where(eq(pageBlocks.pageId, pageId)).orderBy(asc(pageBlocks.position)).all()
  return sections.map((s) => ({
    id: s.id,
    layout: s.layout as SectionLayout,
    columns: columns
      .filter((c) => c.sectionId === s.id)
      .map((c) => ({ id: c.id, width: c.width, blocks: blocks.filter((b) => b.columnId === c.id).map((b) => ({ id: b.id, type: b.type, fields: b.fields })) })),
  }))
}

function writeTree(tx: Tx, pageId: string, tree: TreeSection[]) {
  // Sections cascade to their columns and blocks; every id is written again as it was.
  tx.delete(pageSections).where(eq(pageSections.pageId, pageId)).run()
  tree.forEach((s, sp) => {
    tx.insert(pageSections).values({ id: s.id, pageId, position: sp, layout: s.layout }).run()
    s.columns.forEach((c, cp) => {
      tx.insert(pageColumns).values({ id: c.id, pageId, sectionId: s.id, position: cp, width: c.width }).run()
      if (c.blocks.length) tx.insert(pageBlocks).values(c.blocks.map((b, bp) => ({ id: b.id, pageId, columnId: c.id, position: bp, type: b.type, fields: b.fields }))).run()
    })
  })
}

const linkTargetColumns = {
  id: links.id,
  workspaceId: links.workspaceId,
  domain: links.domain,
  slug: links.slug,
  isTest: links.isTest,
  isActive: links.isActive,
  isArchived: links.isArchived,
}
/** A link as a page's block targets it (either engine). */
export const asTarget = (r: { id: string; workspaceId: string; domain: string; slug: string; isTest: boolean; isActive: boolean; isArchived: boolean }): LinkTarget => ({
  id: r.id,
  workspaceId: r.workspaceId,
  domain: r.domain,
  slug: r.slug,
  isTest: r.isTest,
  usable: r.isActive && !r.isArchived,
})

export function createPagesRepo(db: Db, now: () => number): PagesRepo {
  const findOne = (workspaceId: string, id: string) => db.select().from(bridgePages).where(and(eq(bridgePages.id, id), eq(bridgePages.workspaceId, workspaceId))).get()
  const byBlock = db
    .select({ pageId: bridgePages.id, workspaceId: bridgePages.workspaceId, isTest: bridgePages.isTest, domain: bridgePages.domain, type: pageBlocks.type, fields: pageBlocks.fields })
    .from(pageBlocks)
    .innerJoin(bridgePages, eq(bridgePages.id, pageBlocks.pageId))
    .where(eq(pageBlocks.id, sql.placeholder('id')))
    .prepare()
  const bySlug = db
    .select()
    .from(bridgePages)
    .where(and(eq(bridgePages.domain, sql.placeholder('domain')), eq(bridgePages.slug, sql.placeholder('slug'))))
    .prepare()

  return {
    async insert(row, tree, event) {
      try {
        return db.transaction((tx) => {
          tx.insert(bridgePages).values(stored(row)).run()
          writeTree(tx, row.id, tree)
          publish(tx, event(row), now())
          return { ok: true as const, row }
        })
      } catch (err) {
        if (isUniqueViolation(err, 'bridge_pages_domain_slug_unique')) return { ok: false, reason: 'slug_taken' }
        throw err
      }
    },

    async find(workspaceId, id) {
      const row = findOne(workspaceId, id)
      return row ? asPage(row) : undefined
    },

    async list(workspaceId, filter, offset, limit) {
      const where = and(
        eq(bridgePages.workspaceId, workspaceId),
        filter.isTest === undefined ? undefined : eq(bridgePages.isTest, filter.isTest),
        filter.domains?.length ? inArray(bridgePages.domain, filter.domains) : undefined,
      )
      const rows = db.select().from(bridgePages).where(where).orderBy(desc(bridgePages.createdAt), desc(bridgePages.id)).limit(limit).offset(offset).all()
      const total = db.select({ n: count() }).from(bridgePages).where(where).get()!.n
      return { rows: rows.map(asPage), total }
    },

    async tree(pageId) {
      return readTree(db, pageId)
    },

    async blockCounts(pageIds) {
      if (!pageIds.length) return new Map()
      const rows = db.select({ pageId: pageBlocks.pageId, n: count() }).from(pageBlocks).where(inArray(pageBlocks.pageId, pageIds)).groupBy(pageBlocks.pageId).all()
      return new Map(rows.map((r) => [r.pageId, r.n]))
    },

    async counts(pageIds) {
      const out = new Map<string, PageCounts>(pageIds.map((id) => [id, { views: 0, buttonClicks: 0, blocks: {} }]))
      if (!pageIds.length) return out
      const rows = db
        .select({ pageId: pageStats.pageId, blockId: pageStats.blockId, n: sql<number>`sum(${pageStats.count})` })
        .from(pageStats)
        .where(inArray(pageStats.pageId, pageIds))
        .groupBy(pageStats.pageId, pageStats.blockId)
        .all()
      for (const r of rows) {
        const c = out.get(r.pageId)!
        if (r.blockId === '') c.views += r.n
        else {
          c.buttonClicks += r.n
          c.blocks[r.blockId] = r.n
        }
      }
      return out
    },

    async save(id, workspaceId, version, patch, tree, at, event) {
      try {
        return db.transaction((tx) => {
          const row = tx
            .update(bridgePages)
            .set(stored({ ...patch, version: version + 1, updatedAt: at }))
            .where(and(eq(bridgePages.id, id), eq(bridgePages.workspaceId, workspaceId), eq(bridgePages.version, version)))
            .returning()
            .get()
          if (!row) {
            const exists = tx.select({ id: bridgePages.id }).from(bridgePages).where(and(eq(bridgePages.id, id), eq(bridgePages.workspaceId, workspaceId))).get()
            return { ok: false as const, reason: exists ? ('stale' as const) : ('gone' as const) }
          }
          if (tree) writeTree(tx, id, tree)
          const page = asPage(row)
          publish(tx, event(page), now())
          return { ok: true as const, row: page }
        })
      } catch (err) {
        if (isUniqueViolation(err, 'bridge_pages_domain_slug_unique')) return { ok: false, reason: 'slug_taken' }
        throw err
      }
    },

    async delete(id, workspaceId, event) {
      return db.transaction((tx) => {
        const row = tx.select({ id: bridgePages.id }).from(bridgePages).where(and(eq(bridgePages.id, id), eq(bridgePages.workspaceId, workspaceId))).get()
        if (!row) return { ok: false as const, reason: 'gone' as const }
        const showing = tx.select({ n: count() }).from(links).where(eq(links.bridgePageId, id)).get()!.n
        if (showing > 0) return { ok: false as const, reason: 'in_use' as const, links: showing }
        tx.delete(bridgePages).where(eq(bridgePages.id, id)).run()
        publish(tx, event, now())
        return { ok: true as const }
      })
    },

    async slugsInUse(domain, candidates) {
      if (!candidates.length) return new Set()
      const rows = db.select({ slug: bridgePages.slug }).from(bridgePages).where(and(eq(bridgePages.domain, domain), inArray(bridgePages.slug, candidates))).all()
      return new Set(rows.map((r) => r.slug))
    },

    async linkTargets(workspaceId, ids) {
      if (!ids.length) return []
      return db.select(linkTargetColumns).from(links).where(and(eq(links.workspaceId, workspaceId), inArray(links.id, ids))).all().map(asTarget)
    },

    async insertSavedTemplate(row) {
      db.insert(savedTemplates).values(stored(row)).run()
    },

    async findSavedTemplate(workspaceId, id) {
      return db.select().from(savedTemplates).where(and(eq(savedTemplates.id, id), eq(savedTemplates.workspaceId, workspaceId))).get() as unknown as SavedTemplateRow | undefined
    },

    async listSavedTemplates(workspaceId) {
      return db.select().from(savedTemplates).where(eq(savedTemplates.workspaceId, workspaceId)).orderBy(asc(savedTemplates.createdAt), asc(savedTemplates.id)).all() as unknown as SavedTemplateRow[]
    },

    async deleteSavedTemplate(workspaceId, id) {
      return db.delete(savedTemplates).where(and(eq(savedTemplates.id, id), eq(savedTemplates.workspaceId, workspaceId))).returning({ id: savedTemplates.id }).all().length > 0
    },

    findBySlugSync(domain, slug) {
      const row = bySlug.get({ domain, slug })
      return row ? asPage(row) : undefined
    },

    findByIdSync(id) {
      const row = db.select().from(bridgePages).where(eq(bridgePages.id, id)).get()
      return row ? asPage(row) : undefined
    },

    treeSync(pageId) {
      return readTree(db, pageId)
    },

    blockOwnerSync(blockId) {
      return byBlock.get({ id: blockId }) as BlockOwner | undefined
    },

    linkTargetsSync(ids) {
      if (!ids.length) return []
      return db.select(linkTargetColumns).from(links).where(inArray(links.id, ids)).all().map(asTarget)
    },

    async addCounts(rows) {
      if (!rows.length) return
      db.transaction((tx) => {
        const live = new Set(tx.select({ id: bridgePages.id }).from(bridgePages).where(inArray(bridgePages.id, [...new Set(rows.map((r) => r.pageId))])).all().map((r) => r.id))
        for (const r of rows) {
          if (!live.has(r.pageId)) continue
          tx.insert(pageStats)
            .values(r)
            .onConflictDoUpdate({ target: [pageStats.pageId, pageStats.blockId, pageStats.day], set: { count: sql`${pageStats.count} + ${r.count}` } })
            .run()
        }
      })
    },
  }
}
