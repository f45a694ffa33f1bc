// Queries of the links area. Writes run in one synchronous transaction together with their outbox events
// and the plan-allowance counter, so a refused or failed write leaves nothing behind.
import { and, count, desc, eq, exists, getTableColumns, inArray, sql, type SQL } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { linkTags, linkUsage, links } from '../../db/schema'
import type { Tx } from '../../db/tx'
import { preparedPublisher, publish, type PublishInput } from '../../events/outbox'

export type LinkRow = typeof links.$inferSelect
export type NewLink = typeof links.$inferInsert

export interface LinkFilter {
  workspaceId: string
  search?: string
  tag?: string
  domain?: string
  archived?: boolean
  isTest?: boolean
  /** The calling key's scope filters: only links on these domains / carrying one of these tags. */
  scope?: { domains?: string[]; tags?: string[] } | null
}

/** Thrown inside a write transaction to roll it back with a reason the service turns into an AppError. */
export class LinkWriteRefused extends Error {
  constructor(readonly reason: 'slug_taken' | 'plan_limit_reached', readonly index = 0) {
    super(reason)
  }
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`)

function writeTags(tx: Tx, linkId: string, tags: string[]) {
  tx.delete(linkTags).where(eq(linkTags.linkId, linkId)).run()
  if (tags.length) tx.insert(linkTags).values(tags.map((tag) => ({ linkId, tag }))).run()
}

/**
 * Plain-SQL row mapping for the two hot paths (the redirect's lookup on a cache miss, bulk inserts):
 * statements prepared once plus this mapping cost a fraction of a query built and prepared per call.
 * Derived from the table definition, so it follows the schema.
 */
const LINK_COLUMNS = Object.entries(getTableColumns(links)).map(([key, column]) => ({ key, column }))

function decodeLink(raw: Record<string, unknown>): LinkRow {
  const row: Record<string, unknown> = {}
  for (const { key, column } of LINK_COLUMNS) {
    const v = raw[column.name]
    row[key] = v === null || v === undefined ? null : column.mapFromDriverValue(v)
  }
  return row as LinkRow
}

function encodeLink(row: NewLink): unknown[] {
  return LINK_COLUMNS.map(({ key, column }) => {
    const v = (row as Record<string, unknown>)[key]
    return v === null || v === undefined ? null : column.mapToDriverValue(v)
  })
}

export function createLinksRepo(db: Db) {
  const sqlite = db.$client
  const byDomainSlugRaw = sqlite.prepare('SELECT * FROM links WHERE domain = ? AND slug = ?')
  const insertLink = sqlite.prepare(
    `INSERT INTO links (${LINK_COLUMNS.map((c) => c.column.name).join(', ')}) VALUES (${LINK_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT DO NOTHING RETURNING *`,
  )
  const slugsTaken = sqlite.prepare(`SELECT slug FROM links WHERE domain = ? AND slug IN (${Array(8).fill('?').join(', ')})`)
  const insertTag = sqlite.prepare('INSERT INTO link_tags (link_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING')
  const publishFast = preparedPublisher(db)
  const byDomainSlug = db
    .select()
    .from(links)
    .where(and(eq(links.domain, sql.placeholder('domain')), eq(links.slug, sql.placeholder('slug'))))
    .limit(1)
    .prepare()

  function where(f: LinkFilter): SQL {
    const parts: (SQL | undefined)[] = [eq(links.workspaceId, f.workspaceId)]
    // search_text is lower-cased by the service (Unicode-aware), so a plain LIKE is case-insensitive everywhere.
    if (f.search) parts.push(sql`${links.searchText} like ${`%${escapeLike(f.search.toLowerCase())}%`} escape '\\'`)
    if (f.tag) parts.push(exists(db.select({ x: sql`1` }).from(linkTags).where(and(eq(linkTags.linkId, links.id), eq(linkTags.tag, f.tag)))))
    if (f.domain) parts.push(eq(links.domain, f.domain))
    if (f.archived !== undefined) parts.push(eq(links.isArchived, f.archived))
    if (f.isTest !== undefined) parts.push(eq(links.isTest, f.isTest))
    if (f.scope?.domains?.length) parts.push(inArray(links.domain, f.scope.domains))
    if (f.scope?.tags?.length) parts.push(exists(db.select({ x: sql`1` }).from(linkTags).where(and(eq(linkTags.linkId, links.id), inArray(linkTags.tag, f.scope.tags)))))
    return and(...parts)!
  }

  return {
    /** Synchronous on purpose: the redirect path reads through it on a cache miss without awaiting. */
    findByDomainSlugSync(domain: string, slug: string): LinkRow | undefined {
      const raw = byDomainSlugRaw.get(domain, slug) as Record<string, unknown> | null
      return raw ? decodeLink(raw) : undefined
    },
    async findByDomainSlug(domain: string, slug: string): Promise<LinkRow | undefined> {
      return byDomainSlug.get({ domain, slug })
    },
    async findById(workspaceId: string, id: string): Promise<LinkRow | undefined> {
      return db.select().from(links).where(and(eq(links.workspaceId, workspaceId), eq(links.id, id))).get()
    },
    async list(f: LinkFilter, page: number, perPage: number): Promise<{ rows: LinkRow[]; total: number }> {
      const w = where(f)
      const total = db.select({ n: count() }).from(links).where(w).get()?.n ?? 0
      const rows = db
        .select()
        .from(links)
        .where(w)
        .orderBy(desc(links.createdAt), desc(links.id))
        .limit(perPage)
        .offset((page - 1) * perPage)
        .all()
      return { rows, total }
    },
    /**
     * Inserts links with their events in one transaction. `allowance` (live links per month, null = no
     * limit) is checked against the month's counter inside the transaction, so it holds under concurrency.
     * Answers per input either the row or the reason it was refused; refused inputs change nothing.
     */
    async insertMany(
      items: { row: NewLink; event: (row: LinkRow) => PublishInput; countsTowardsPlan: boolean }[],
      usage: { workspaceId: string; month: string; allowance: number | null },
      now: number,
    ): Promise<(LinkRow | LinkWriteRefused)[]> {
      return db.transaction((tx) => {
        let used = tx.select({ created: linkUsage.created }).from(linkUsage).where(and(eq(linkUsage.workspaceId, usage.workspaceId), eq(linkUsage.month, usage.month))).get()?.created ?? 0
        const results: (LinkRow | LinkWriteRefused)[] = []
        let counted = 0
        for (const [index, item] of items.entries()) {
          if (item.countsTowardsPlan && usage.allowance !== null && used >= usage.allowance) {
            results.push(new LinkWriteRefused('plan_limit_reached', index))
            continue
          }
          const raw = insertLink.get(...(encodeLink(item.row) as string[])) as Record<string, unknown> | null
          if (!raw) {
            results.push(new LinkWriteRefused('slug_taken', index))
            continue
          }
          const inserted = decodeLink(raw)
          for (const tag of inserted.tags) insertTag.run(inserted.id, tag)
          publishFast(item.event(inserted), now)
          if (item.countsTowardsPlan) {
            used++
            counted++
          }
          results.push(inserted)
        }
        if (counted) {
          tx.insert(linkUsage)
            .values({ workspaceId: usage.workspaceId, month: usage.month, created: counted })
            .onConflictDoUpdate({ target: [linkUsage.workspaceId, linkUsage.month], set: { created: sql`${linkUsage.created} + ${counted}` } })
            .run()
        }
        return results
      }, { behavior: 'immediate' })
    },
    /** Updates a link and publishes its event; slug_taken when the new domain/slug is in use. */
    async update(id: string, patch: Partial<NewLink>, event: (row: LinkRow) => PublishInput, now: number): Promise<LinkRow | LinkWriteRefused | undefined> {
      try {
        return db.transaction((tx) => {
          const row = tx.update(links).set(patch).where(eq(links.id, id)).returning().get()
          if (!row) return row
          if (patch.tags) writeTags(tx, row.id, row.tags)
          publish(tx, event(row), now)
          return row
        })
      } catch (err) {
        if (err instanceof Error && /UNIQUE constraint failed: links\.domain, links\.slug/.test(err.message)) return new LinkWriteRefused('slug_taken')
        throw err
      }
    },
    async delete(id: string, event: PublishInput, now: number): Promise<boolean> {
      return db.transaction((tx) => {
        const gone = tx.delete(links).where(eq(links.id, id)).returning({ id: links.id }).all()
        if (gone.length) publish(tx, event, now)
        return gone.length > 0
      })
    },
    /** Which of the slugs are taken on the domain (one prepared statement per 8 slugs). */
    async slugsInUse(domain: string, slugs: string[]): Promise<Set<string>> {
      const taken = new Set<string>()
      for (let i = 0; i < slugs.length; i += 8) {
        const chunk = slugs.slice(i, i + 8)
        while (chunk.length < 8) chunk.push('')
        for (const r of slugsTaken.all(domain, ...chunk) as { slug: string }[]) taken.add(r.slug)
      }
      return taken
    },
    async linksCreatedInMonth(workspaceId: string, month: string): Promise<number> {
      return db.select({ created: linkUsage.created }).from(linkUsage).where(and(eq(linkUsage.workspaceId, workspaceId), eq(linkUsage.month, month))).get()?.created ?? 0
    },
  }
}

export type LinksRepo = ReturnType<typeof createLinksRepo>
