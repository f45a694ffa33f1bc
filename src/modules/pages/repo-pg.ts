// The pages area on PostgreSQL (repo.ts's PagesRepo, same meaning). A save is guarded by the page's version
// in one conditional UPDATE: a second writer at the same version waits for the first's row lock, then finds
// the version moved on and answers `stale`, so trees never interleave and positions stay 0..n-1 per parent.
// A tree is read in one statement: at READ COMMITTED separate reads of sections, columns and blocks could
// straddle another node's rewrite.
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm'
import type { PgDb, PgTx } from '../../db/pg/client'
import { bridgePages, links, pageBlocks, pageColumns, pageSections, pageStats, savedTemplates } from '../../db/pg/schema.generated'
import { isUniqueViolation } from '../../db/errors'
import type { AsyncPort } from '../../db/rows'
import { publishPg } from '../../events/repo-outbox-pg'
import { asTarget, type BlockOwner, type PageCounts, type PageRow, type PagesRepo, type SavedTemplateRow } from './repo'
import type { SectionLayout, TreeColumn, TreeSection } from './tree'

const asPage = (row: typeof bridgePages.$inferSelect) => row as unknown as PageRow

async function readTree(db: PgTx, pageId: string): Promise<TreeSection[]> {
  const rows = await db
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
  const sections: TreeSection[] = []
  let section: TreeSection | undefined
  let column: TreeColumn | undefined
  for (const r of rows) {
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

async function writeTree(tx: PgTx, pageId: string, tree: TreeSection[]) {
  // Sections cascade to their columns and blocks; every id is written again as it was, one statement per level.
  await tx.delete(pageSections).where(eq(pageSections.pageId, pageId))
  const columns = tree.flatMap((s) => s.columns.map((c, cp) => ({ id: c.id, pageId, sectionId: s.id, position: cp, width: c.width })))
  const blocks = tree.flatMap((s) => s.columns.flatMap((c) => c.blocks.map((b, bp) => ({ id: b.id, pageId, columnId: c.id, position: bp, type: b.type, fields: b.fields }))))
  if (tree.length) await tx.insert(pageSections).values(tree.map((s, sp) => ({ id: s.id, pageId, position: sp, layout: s.layout })))
  if (columns.length) await tx.insert(pageColumns).values(columns)
  if (blocks.length) await tx.insert(pageBlocks).values(blocks)
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

/** Sums rows of the same (page, block, day), in key order: one upsert may touch a row once, and a fixed order keeps two flushes from deadlocking. */
function summed(rows: { pageId: string; blockId: string; day: number; count: number }[]) {
  const byKey = new Map<string, { pageId: string; blockId: string; day: number; count: number }>()
  for (const r of rows) {
    const key = JSON.stringify([r.pageId, r.blockId, r.day])
    const seen = byKey.get(key)
    if (seen) seen.count += r.count
    else byKey.set(key, { ...r })
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r)
}

export function createPagesRepoPg(db: PgDb, now: () => number): AsyncPort<PagesRepo> {
  const ownPage = (workspaceId: string, id: string) => and(eq(bridgePages.id, id), eq(bridgePages.workspaceId, workspaceId))

  return {
    async insert(row, tree, event) {
      try {
        return await db.transaction(async (tx) => {
          await tx.insert(bridgePages).values(row)
          await writeTree(tx, row.id, tree)
          await publishPg(tx, event(row), now())
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
      const [rows, [total]] = await Promise.all([
        db.select().from(bridgePages).where(where).orderBy(desc(bridgePages.createdAt), desc(bridgePages.id)).limit(limit).offset(offset),
        db.select({ n: count() }).from(bridgePages).where(where),
      ])
      return { rows: rows.map(asPage), total: total!.n }
    },

    async tree(pageId) {
      return readTree(db, pageId)
    },

    async blockCounts(pageIds) {
      if (!pageIds.length) return new Map()
      const rows = await db.select({ pageId: pageBlocks.pageId, n: count() }).from(pageBlocks).where(inArray(pageBlocks.pageId, pageIds)).groupBy(pageBlocks.pageId)
      return new Map(rows.map((r) => [r.pageId, r.n]))
    },

    async counts(pageIds) {
      const out = new Map<string, PageCounts>(pageIds.map((id) => [id, { views: 0, buttonClicks: 0, blocks: {} }]))
      if (!pageIds.length) return out
      // sum() of a bigint is numeric, which arrives as a string.
      const rows = await db
        .select({ pageId: pageStats.pageId, blockId: pageStats.blockId, n: sql<number>`sum(${pageStats.count})`.mapWith(Number) })
        .from(pageStats)
        .where(inArray(pageStats.pageId, pageIds))
        .groupBy(pageStats.pageId, pageStats.blockId)
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
        return await db.transaction(async (tx) => {
          // The version guard and the row lock in one statement: see the header.
          const [row] = await tx
            .update(bridgePages)
            .set({ ...patch, version: version + 1, updatedAt: at })
            .where(and(ownPage(workspaceId, id), eq(bridgePages.version, version)))
            .returning()
          if (!row) {
            const [exists] = await tx.select({ id: bridgePages.id }).from(bridgePages).where(ownPage(workspaceId, id))
            return { ok: false as const, reason: exists ? ('stale' as const) : ('gone' as const) }
          }
          if (tree) await writeTree(tx, id, tree)
          const page = asPage(row)
          await publishPg(tx, event(page), now())
          return { ok: true as const, row: page }
        })
      } catch (err) {
        if (isUniqueViolation(err, 'bridge_pages_domain_slug_unique')) return { ok: false, reason: 'slug_taken' }
        throw err
      }
    },

    async delete(id, workspaceId, event) {
      return db.transaction(async (tx) => {
        // Locked so that of two deletes one publishes the event and the other answers gone; a writer that
        // points a link at the page must lock it FOR SHARE for the count below to see its link.
        const [row] = await tx.select({ id: bridgePages.id }).from(bridgePages).where(ownPage(workspaceId, id)).for('update')
        if (!row) return { ok: false as const, reason: 'gone' as const }
        const [showing] = await tx.select({ n: count() }).from(links).where(eq(links.bridgePageId, id))
        if (showing!.n > 0) return { ok: false as const, reason: 'in_use' as const, links: showing!.n }
        await tx.delete(bridgePages).where(eq(bridgePages.id, id))
        await publishPg(tx, event, now())
        return { ok: true as const }
      })
    },

    async slugsInUse(domain, candidates) {
      if (!candidates.length) return new Set()
      const rows = await db.select({ slug: bridgePages.slug }).from(bridgePages).where(and(eq(bridgePages.domain, domain), inArray(bridgePages.slug, candidates)))
      return new Set(rows.map((r) => r.slug))
    },

    async linkTargets(workspaceId, ids) {
      if (!ids.length) return []
      const rows = await db.select(linkTargetColumns).from(links).where(and(eq(links.workspaceId, workspaceId), inArray(links.id, ids))).orderBy(asc(links.id))
      return rows.map(asTarget)
    },

    async insertSavedTemplate(row) {
      await db.insert(savedTemplates).values(row)
    },

    async findSavedTemplate(workspaceId, id) {
      const [row] = await db.select().from(savedTemplates).where(and(eq(savedTemplates.id, id), eq(savedTemplates.workspaceId, workspaceId)))
      return row as SavedTemplateRow | undefined
    },

    async listSavedTemplates(workspaceId) {
      const rows = await db.select().from(savedTemplates).where(eq(savedTemplates.workspaceId, workspaceId)).orderBy(asc(savedTemplates.createdAt), asc(savedTemplates.id))
      return rows as SavedTemplateRow[]
    },

    async deleteSavedTemplate(workspaceId, id) {
      const gone = await db.delete(savedTemplates).where(and(eq(savedTemplates.id, id), eq(savedTemplates.workspaceId, workspaceId))).returning({ id: savedTemplates.id })
      return gone.length > 0
    },

    async findBySlug(domain, slug) {
      const [row] = await db.select().from(bridgePages).where(and(eq(bridgePages.domain, domain), eq(bridgePages.slug, slug)))
      return row ? asPage(row) : undefined
    },

    async findById(id) {
      const [row] = await db.select().from(bridgePages).where(eq(bridgePages.id, id))
      return row ? asPage(row) : undefined
    },

    async blockOwner(blockId) {
      const [row] = await db
        .select({ pageId: bridgePages.id, workspaceId: bridgePages.workspaceId, isTest: bridgePages.isTest, domain: bridgePages.domain, type: pageBlocks.type, fields: pageBlocks.fields })
        .from(pageBlocks)
        .innerJoin(bridgePages, eq(bridgePages.id, pageBlocks.pageId))
        .where(eq(pageBlocks.id, blockId))
      return row as BlockOwner | undefined
    },

    async addCounts(rows) {
      if (!rows.length) return
      await db.transaction(async (tx) => {
        // FOR KEY SHARE holds the pages until commit: a page deleted meanwhile is skipped here instead of
        // failing the whole flush on page_stats' foreign key, and a delete waits for the flush.
        const pageIds = [...new Set(rows.map((r) => r.pageId))].sort()
        const locked = await tx.select({ id: bridgePages.id }).from(bridgePages).where(inArray(bridgePages.id, pageIds)).orderBy(asc(bridgePages.id)).for('key share')
        const live = new Set(locked.map((r) => r.id))
        const values = summed(rows.filter((r) => live.has(r.pageId)))
        if (!values.length) return
        // Added in SQL, never read and written back, so flushes of several nodes add up.
        await tx
          .insert(pageStats)
          .values(values)
          .onConflictDoUpdate({ target: [pageStats.pageId, pageStats.blockId, pageStats.day], set: { count: sql`${pageStats.count} + excluded.count` } })
      })
    },
  }
}
