// Queries of the pages area, on either engine. A change to a page's layout or blocks rewrites its whole tree
// in one transaction guarded by the page's version, in one conditional UPDATE: a second writer at the same
// version waits for the first (SQLite's one writer, PostgreSQL's row lock), then finds the version moved on
// and answers `stale`, so trees never interleave and positions stay 0..n-1 per parent. A tree is read in one
// statement: at PostgreSQL's READ COMMITTED separate reads of sections, columns and blocks could straddle
// another node's rewrite.
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm'
import { rows, type Builder, type Engine, type Steps } from '../../db/engine'
import { isUniqueViolation } from '../../db/errors'
import type { StoredTheme } from '../../db/schema'
import { publishing } from '../../events/outbox'
import { asTarget, type BlockOwner, type PageCounts, type PageRow, type PagesRepo, type SavedTemplateRow } from './port'
import type { SectionLayout, TreeColumn, TreeSection } from './tree'

type Tables = Engine['t']

const asPage = (row: Tables['bridgePages']['$inferSelect']) => row as unknown as PageRow
// The stored theme is the Theme the service checked; the schema below src/modules cannot name its type.
const stored = <T>(row: T) => row as T & { theme: StoredTheme }

/** The statement that reads a page's tree, and how its rows become the tree. */
export function treeQuery(t: Tables, db: Builder, pageId: string) {
  const { pageSections, pageColumns, pageBlocks } = t
  return db
    .select({
      sectionId: pageSections.id,
      layout: pageSections.layout,
      columnId: pageColumns.id,
      width: pageColumns.width,
      blockId: pageBlocks.id,
      type: pageBlocks.type,
      fields: pageBlocks.fields,
    })
    .from(pageSections)
    .leftJoin(pageColumns, eq(pageColumns.sectionId, pageSections.id))
    .leftJoin(pageBlocks, eq(pageBlocks.columnId, pageColumns.id))
    .where(eq(pageSections.pageId, pageId))
    .orderBy(asc(pageSections.position), asc(pageColumns.position), asc(pageBlocks.position))
}

type TreeRow = Awaited<ReturnType<typeof treeQuery>>[number]

export function treeOf(found: TreeRow[]): TreeSection[] {
  const sections: TreeSection[] = []
  let section: TreeSection | undefined
  let column: TreeColumn | undefined
  for (const r of found) {
    if (section?.id !== r.sectionId) {
      section = { id: r.sectionId, layout: r.layout as SectionLayout, columns: [] }
      column = undefined
      sections.push(section)
    }
    if (r.columnId === null) continue
    if (column?.id !== r.columnId) {
      column = { id: r.columnId, width: r.width!, blocks: [] }
      section.columns.push(column)
    }
    if (r.blockId !== null) column.blocks.push({ id: r.blockId, type: r.type!, fields: r.fields as Record<string, unknown> })
  }
  return sections
}

export const linkTargetColumns = ({ links }: Tables) => ({
  id: links.id,
  workspaceId: links.workspaceId,
  domain: links.domain,
  slug: links.slug,
  isTest: links.isTest,
  isActive: links.isActive,
  isArchived: links.isArchived,
})

/** The block and its page, as a button's click needs them. */
export function blockOwnerQuery({ bridgePages, pageBlocks }: Tables, db: Builder) {
  return db
    .select({
      pageId: bridgePages.id,
      workspaceId: bridgePages.workspaceId,
      isTest: bridgePages.isTest,
      domain: bridgePages.domain,
      type: pageBlocks.type,
      fields: pageBlocks.fields,
    })
    .from(pageBlocks)
    .innerJoin(bridgePages, eq(bridgePages.id, pageBlocks.pageId))
}

/** Sums rows of the same (page, block, day), in key order: one upsert may touch a row once, and a fixed order keeps two flushes from deadlocking. */
function summed(counted: { pageId: string; blockId: string; day: number; count: number }[]) {
  const byKey = new Map<string, { pageId: string; blockId: string; day: number; count: number }>()
  for (const r of counted) {
    const key = JSON.stringify([r.pageId, r.blockId, r.day])
    const seen = byKey.get(key)
    if (seen) seen.count += r.count
    else byKey.set(key, { ...r })
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r)
}

export function createPagesRepo(engine: Engine, now: () => number): PagesRepo {
  const { db, t } = engine
  const { bridgePages, links, pageBlocks, pageColumns, pageSections, pageStats, savedTemplates } = t
  const ownPage = (workspaceId: string, id: string) => and(eq(bridgePages.id, id), eq(bridgePages.workspaceId, workspaceId))

  function* writeTree(tx: Builder, pageId: string, tree: TreeSection[]): Steps<void> {
    // Sections cascade to their columns and blocks; every id is written again as it was, one statement per level.
    yield* rows(tx.delete(pageSections).where(eq(pageSections.pageId, pageId)))
    const columns = tree.flatMap((s) => s.columns.map((c, cp) => ({ id: c.id, pageId, sectionId: s.id, position: cp, width: c.width })))
    const blocks = tree.flatMap((s) =>
      s.columns.flatMap((c) => c.blocks.map((b, bp) => ({ id: b.id, pageId, columnId: c.id, position: bp, type: b.type, fields: b.fields }))),
    )
    if (tree.length) yield* rows(tx.insert(pageSections).values(tree.map((s, sp) => ({ id: s.id, pageId, position: sp, layout: s.layout }))))
    if (columns.length) yield* rows(tx.insert(pageColumns).values(columns))
    if (blocks.length) yield* rows(tx.insert(pageBlocks).values(blocks))
  }

  return {
    async insert(row, tree, event) {
      try {
        return await engine.transaction(function* (tx) {
          yield* rows(tx.insert(bridgePages).values(stored(row)))
          yield* writeTree(tx, row.id, tree)
          yield* publishing(engine, tx, event(row), now())
          return { ok: true as const, row }
        })
      } catch (err) {
        if (isUniqueViolation(err, 'bridge_pages_domain_slug_unique')) return { ok: false, reason: 'slug_taken' }
        throw err
      }
    },

    async find(workspaceId, id) {
      const [row] = await db.select().from(bridgePages).where(ownPage(workspaceId, id))
      return row ? asPage(row) : undefined
    },

    async list(workspaceId, filter, offset, limit) {
      const where = and(
        eq(bridgePages.workspaceId, workspaceId),
        filter.isTest === undefined ? undefined : eq(bridgePages.isTest, filter.isTest),
        filter.domains?.length ? inArray(bridgePages.domain, filter.domains) : undefined,
      )
      const [found, [total]] = await Promise.all([
        db.select().from(bridgePages).where(where).orderBy(desc(bridgePages.createdAt), desc(bridgePages.id)).limit(limit).offset(offset),
        db.select({ n: count() }).from(bridgePages).where(where),
      ])
      return { rows: found.map(asPage), total: total!.n }
    },

    async tree(pageId) {
      return treeOf(await treeQuery(t, db, pageId))
    },

    async blockCounts(pageIds) {
      if (!pageIds.length) return new Map()
      const found = await db
        .select({ pageId: pageBlocks.pageId, n: count() })
        .from(pageBlocks)
        .where(inArray(pageBlocks.pageId, pageIds))
        .groupBy(pageBlocks.pageId)
      return new Map(found.map((r) => [r.pageId, r.n]))
    },

    async counts(pageIds) {
      const out = new Map<string, PageCounts>(pageIds.map((id) => [id, { views: 0, buttonClicks: 0, blocks: {} }]))
      if (!pageIds.length) return out
      // PostgreSQL's sum() of a bigint is numeric, which arrives as a string.
      const found = await db
        .select({ pageId: pageStats.pageId, blockId: pageStats.blockId, n: sql<number>`sum(${pageStats.count})`.mapWith(Number) })
        .from(pageStats)
        .where(inArray(pageStats.pageId, pageIds))
        .groupBy(pageStats.pageId, pageStats.blockId)
      for (const r of found) {
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
        return await engine.transaction(function* (tx) {
          // The version guard and the row lock in one statement: see the header.
          const [row] = yield* rows(
            tx
              .update(bridgePages)
              .set(stored({ ...patch, version: version + 1, updatedAt: at }))
              .where(and(ownPage(workspaceId, id), eq(bridgePages.version, version)))
              .returning(),
          )
          if (!row) {
            const [exists] = yield* rows(tx.select({ id: bridgePages.id }).from(bridgePages).where(ownPage(workspaceId, id)))
            return { ok: false as const, reason: exists ? ('stale' as const) : ('gone' as const) }
          }
          if (tree) yield* writeTree(tx, id, tree)
          const page = asPage(row)
          yield* publishing(engine, tx, event(page), now())
          return { ok: true as const, row: page }
        })
      } catch (err) {
        if (isUniqueViolation(err, 'bridge_pages_domain_slug_unique')) return { ok: false, reason: 'slug_taken' }
        throw err
      }
    },

    delete: (id, workspaceId, event) =>
      engine.transaction(
        function* (tx) {
          // Locked so that of two deletes one publishes the event and the other answers gone; a writer that
          // points a link at the page must lock it FOR SHARE for the count below to see its link.
          const [row] = yield* rows(engine.forUpdate(tx.select({ id: bridgePages.id }).from(bridgePages).where(ownPage(workspaceId, id))))
          if (!row) return { ok: false as const, reason: 'gone' as const }
          const [showing] = yield* rows(tx.select({ n: count() }).from(links).where(eq(links.bridgePageId, id)))
          if (showing!.n > 0) return { ok: false as const, reason: 'in_use' as const, links: showing!.n }
          yield* rows(tx.delete(bridgePages).where(eq(bridgePages.id, id)))
          yield* publishing(engine, tx, event, now())
          return { ok: true as const }
        },
        { immediate: true },
      ),

    async slugsInUse(domain, candidates) {
      if (!candidates.length) return new Set()
      const found = await db
        .select({ slug: bridgePages.slug })
        .from(bridgePages)
        .where(and(eq(bridgePages.domain, domain), inArray(bridgePages.slug, candidates)))
      return new Set(found.map((r) => r.slug))
    },

    async linkTargets(workspaceId, ids) {
      if (!ids.length) return []
      const found = await db
        .select(linkTargetColumns(t))
        .from(links)
        .where(and(eq(links.workspaceId, workspaceId), inArray(links.id, ids)))
        .orderBy(engine.byteOrder(links.id))
      return found.map(asTarget)
    },

    async insertSavedTemplate(row) {
      await db.insert(savedTemplates).values(stored(row))
    },

    async findSavedTemplate(workspaceId, id) {
      const [row] = await db
        .select()
        .from(savedTemplates)
        .where(and(eq(savedTemplates.id, id), eq(savedTemplates.workspaceId, workspaceId)))
      return row as unknown as SavedTemplateRow | undefined
    },

    async listSavedTemplates(workspaceId) {
      const found = await db
        .select()
        .from(savedTemplates)
        .where(eq(savedTemplates.workspaceId, workspaceId))
        .orderBy(asc(savedTemplates.createdAt), asc(savedTemplates.id))
      return found as unknown as SavedTemplateRow[]
    },

    async deleteSavedTemplate(workspaceId, id) {
      const gone = await db
        .delete(savedTemplates)
        .where(and(eq(savedTemplates.id, id), eq(savedTemplates.workspaceId, workspaceId)))
        .returning({ id: savedTemplates.id })
      return gone.length > 0
    },

    async findBySlug(domain, slug) {
      const [row] = await db
        .select()
        .from(bridgePages)
        .where(and(eq(bridgePages.domain, domain), eq(bridgePages.slug, slug)))
      return row ? asPage(row) : undefined
    },

    async findById(id) {
      const [row] = await db.select().from(bridgePages).where(eq(bridgePages.id, id))
      return row ? asPage(row) : undefined
    },

    async blockOwner(blockId) {
      const [row] = await blockOwnerQuery(t, db).where(eq(pageBlocks.id, blockId))
      return row as BlockOwner | undefined
    },

    async addCounts(counted) {
      if (!counted.length) return
      await engine.transaction(
        function* (tx) {
          // FOR KEY SHARE holds the pages until commit: a page deleted meanwhile is skipped here instead of
          // failing the whole flush on page_stats' foreign key, and a delete waits for the flush.
          const pageIds = [...new Set(counted.map((r) => r.pageId))].sort()
          const locked = yield* rows(
            engine.forUpdate(tx.select({ id: bridgePages.id }).from(bridgePages).where(inArray(bridgePages.id, pageIds)).orderBy(asc(bridgePages.id)), {
              keyShare: true,
            }),
          )
          const live = new Set(locked.map((r) => r.id))
          const values = summed(counted.filter((r) => live.has(r.pageId)))
          if (!values.length) return
          // Added in SQL, never read and written back, so flushes of several nodes add up.
          yield* rows(
            tx
              .insert(pageStats)
              .values(values)
              .onConflictDoUpdate({ target: [pageStats.pageId, pageStats.blockId, pageStats.day], set: { count: sql`${pageStats.count} + excluded.count` } }),
          )
        },
        { immediate: true },
      )
    },
  }
}
