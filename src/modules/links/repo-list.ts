// GET /links on either engine (contract 7.3): filters, six sorts and keyset pagination.
//
// Keyset pages read `WHERE col <= v AND (col < v OR id < i) ORDER BY col DESC, id DESC LIMIT n` (mirrored for
// asc): the first condition is a range the (workspace_id, col, id) index starts at, so a page deep in the
// list costs what the first does; the second drops the ties already seen. A nullable sort (lastClickedAt,
// title) walks its rows with a value first and then those without, by id in the same direction: two index
// ranges, so nulls come last in either order on both engines, whichever end of an index each engine keeps
// them at. Text (title, slug) and ids compare bytewise (the engine's byteOrder), so an order is the same on
// both engines whatever the database's locale. Page numbers read with OFFSET: the rows before are walked.
import { and, asc, count, desc, eq, exists, gt, gte, inArray, isNotNull, isNull, lt, lte, or, sql, type SQL } from 'drizzle-orm'
import type { Engine } from '../../db/engine'
import { escapeLike } from '../../db/like'
import { type KeysetPosition, type LinkListRepo, type ListFilter, type ListRequest, NULLABLE_SORTS, type SortField } from './list-port'
import type { LinkRow } from './port'

const TEXT_SORTS: ReadonlySet<SortField> = new Set(['title', 'slug'])

export function createLinkListRepo(engine: Engine): LinkListRepo {
  const { db } = engine
  const { links, linkTags } = engine.t

  const hasTag = (tags: string[]) =>
    exists(
      db
        .select({ linkId: linkTags.linkId })
        .from(linkTags)
        .where(and(eq(linkTags.linkId, links.id), tags.length === 1 ? eq(linkTags.tag, tags[0]!) : inArray(linkTags.tag, tags))),
    )

  function where(f: ListFilter): SQL[] {
    const parts: SQL[] = [eq(links.workspaceId, f.workspaceId)]
    // search_text is lower-cased by the service (Unicode-aware); LIKE then folds ASCII letters only, as SQLite's does.
    if (f.search) parts.push(sql`${engine.asciiLower(links.searchText)} like ${`%${escapeLike(f.search.toLowerCase())}%`} escape '\\'`)
    if (f.tag !== undefined) parts.push(hasTag([f.tag]))
    if (f.folderId !== undefined) parts.push(eq(links.folderId, f.folderId))
    if (f.campaignId !== undefined) parts.push(eq(links.campaignId, f.campaignId))
    if (f.domain !== undefined) parts.push(eq(links.domain, f.domain))
    if (f.isArchived !== undefined) parts.push(eq(links.isArchived, f.isArchived))
    if (f.isActive !== undefined) parts.push(eq(links.isActive, f.isActive))
    if (f.isTest !== undefined) parts.push(eq(links.isTest, f.isTest))
    if (f.scope?.domains?.length) parts.push(inArray(links.domain, f.scope.domains))
    if (f.scope?.tags?.length) parts.push(hasTag(f.scope.tags))
    if (f.scope?.folders?.length) parts.push(inArray(links.folderId, f.scope.folders))
    return parts
  }

  const column = (sort: SortField) => links[sort]
  /** The column as it compares and sorts: bytewise for text. */
  const keyOf = (sort: SortField): SQL => (TEXT_SORTS.has(sort) ? engine.byteOrder(column(sort)) : sql`${column(sort)}`)
  const id = engine.byteOrder(links.id)

  /** Rows after `at` among those whose sort value is not null (all rows for a sort without nulls). */
  function valued(req: ListRequest, at: KeysetPosition | undefined, limit: number) {
    const key = keyOf(req.sort)
    const dir = req.order === 'desc' ? desc : asc
    const conds = where(req.filter)
    if (NULLABLE_SORTS.has(req.sort)) conds.push(isNotNull(column(req.sort)))
    if (at) {
      const v = at.value as number | string
      const [beyondOrAt, beyond] = req.order === 'desc' ? [lte, lt] : [gte, gt]
      conds.push(beyondOrAt(key, v), or(beyond(key, v), beyond(id, at.id))!)
    }
    return db
      .select()
      .from(links)
      .where(and(...conds))
      .orderBy(dir(key), dir(id))
      .limit(limit)
  }

  /** Rows after `afterId` among those whose (nullable) sort value is null, by id. */
  function unvalued(req: ListRequest, afterId: string | undefined, limit: number) {
    const conds = [...where(req.filter), isNull(column(req.sort))]
    if (afterId !== undefined) conds.push(req.order === 'desc' ? lt(id, afterId) : gt(id, afterId))
    return db
      .select()
      .from(links)
      .where(and(...conds))
      .orderBy(req.order === 'desc' ? desc(id) : asc(id))
      .limit(limit)
  }

  return {
    async page(req) {
      if (req.after === undefined && req.offset !== undefined) {
        const key = keyOf(req.sort)
        const dir = req.order === 'desc' ? sql`desc` : sql`asc`
        // NULLS LAST: both engines take it, and the keyset walk puts nulls last too.
        const first = NULLABLE_SORTS.has(req.sort) ? sql`${key} ${dir} nulls last` : sql`${key} ${dir}`
        return db
          .select()
          .from(links)
          .where(and(...where(req.filter)))
          .orderBy(first, sql`${id} ${dir}`)
          .limit(req.limit)
          .offset(req.offset)
      }
      const at = req.after
      const nullable = NULLABLE_SORTS.has(req.sort)
      if (at && at.value === null) return nullable ? unvalued(req, at.id, req.limit) : []
      const found: LinkRow[] = await valued(req, at, req.limit)
      if (!nullable || found.length >= req.limit) return found
      return [...found, ...(await unvalued(req, undefined, req.limit - found.length))]
    },
    async count(filter) {
      const [row] = await db
        .select({ n: count() })
        .from(links)
        .where(and(...where(filter)))
      return row?.n ?? 0
    },
  }
}
