// The links area on PostgreSQL (issue 18): repo.ts's port with the SQLite implementation's meaning, method by
// method. Two things SQLite gave for free are spelled out here: one writer at a time (so the plan allowance
// is guarded by a row lock, below) and byte order of text with ASCII-only case folding in LIKE (so ids sort
// with COLLATE "C" and search folds ASCII letters only, whatever the database's locale).
import { and, count, desc, eq, exists, gt, inArray, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import { isUniqueViolation } from '../../db/errors'
import { escapeLike } from '../../db/like'
import type { PgDb, PgTx } from '../../db/pg/client'
import { linkTags, linkUsage, links } from '../../db/pg/schema.generated'
import type { AsyncPort } from '../../db/rows'
import { publishPg } from '../../events/repo-outbox-pg'
import { LinkWriteRefused, type LinkFilter, type LinkRow, type LinksRepo, type PlanUsage, type RedirectLink } from './repo'

const REDIRECT_KEYS = [
  'id', 'workspaceId', 'domain', 'slug', 'destinationUrl', 'title', 'description', 'redirectStatus', 'fallbackUrl', 'passwordHash',
  'expiresAt', 'clickLimit', 'uniqueIpLimit', 'publicStatsEnabled', 'utmSource', 'utmMedium', 'utmCampaign', 'utmTerm', 'utmContent',
  'ogTitle', 'ogDescription', 'ogImageUrl', 'twitterCard', 'deepLinkEnabled', 'captchaEnabled', 'consentRequired', 'conversionTracking',
  'bridgePageId', 'isActive', 'isTest', 'totalClicks',
] as const satisfies readonly (keyof RedirectLink)[]
// Fails to compile when RedirectLink gains a field this list lacks.
const everyRedirectKey: Exclude<keyof RedirectLink, (typeof REDIRECT_KEYS)[number]> extends never ? true : never = true
void everyRedirectKey

const REDIRECT_COLUMNS = Object.fromEntries(REDIRECT_KEYS.map((key) => [key, links[key]])) as { [K in (typeof REDIRECT_KEYS)[number]]: (typeof links)[K] }

/** SQLite compares text byte by byte; "C" does the same here, so lists come in the same order on both. */
const byteOrder = (column: AnyColumn) => sql`${column} collate "C"`

/** SQLite's LIKE folds ASCII letters only (é and É stay apart): translate() folds exactly those. */
const ASCII_UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'

// jsonb columns are typed unknown by the generated schema; tags always hold a string array.
const asLink = (row: typeof links.$inferSelect) => row as LinkRow

async function writeTags(tx: PgTx, linkId: string, tags: string[]) {
  await tx.delete(linkTags).where(eq(linkTags.linkId, linkId))
  if (tags.length) await tx.insert(linkTags).values(tags.map((tag) => ({ linkId, tag })))
}

/**
 * Locks the month's usage row for the rest of the transaction and answers its count. SQLite's single writer
 * made "read the count, then insert" safe; here two nodes would both read the same count and pass the
 * allowance together. The upsert creates the row when missing (a plain SELECT … FOR UPDATE would lock
 * nothing then) and, at READ COMMITTED, waits for and returns the latest committed count.
 */
async function lockUsage(tx: PgTx, usage: PlanUsage): Promise<{ created: number; inserted: boolean }> {
  const [row] = await tx
    .insert(linkUsage)
    .values({ workspaceId: usage.workspaceId, month: usage.month, created: 0 })
    .onConflictDoUpdate({ target: [linkUsage.workspaceId, linkUsage.month], set: { created: sql`${linkUsage.created}` } })
    .returning({ created: linkUsage.created, inserted: sql<boolean>`xmax = 0` })
  return row!
}

export function createLinksRepoPg(db: PgDb): AsyncPort<LinksRepo> {
  function where(f: LinkFilter): SQL {
    const parts: (SQL | undefined)[] = [eq(links.workspaceId, f.workspaceId)]
    if (f.search) {
      const folded = sql`translate(${links.searchText}, ${ASCII_UPPER}, ${ASCII_UPPER.toLowerCase()})`
      parts.push(sql`${folded} like ${`%${escapeLike(f.search.toLowerCase())}%`} escape '\\'`)
    }
    if (f.tag) parts.push(exists(db.select({ linkId: linkTags.linkId }).from(linkTags).where(and(eq(linkTags.linkId, links.id), eq(linkTags.tag, f.tag)))))
    if (f.domain) parts.push(eq(links.domain, f.domain))
    if (f.archived !== undefined) parts.push(eq(links.isArchived, f.archived))
    if (f.isTest !== undefined) parts.push(eq(links.isTest, f.isTest))
    if (f.scope?.domains?.length) parts.push(inArray(links.domain, f.scope.domains))
    if (f.scope?.tags?.length) parts.push(exists(db.select({ linkId: linkTags.linkId }).from(linkTags).where(and(eq(linkTags.linkId, links.id), inArray(linkTags.tag, f.scope.tags)))))
    return and(...parts)!
  }

  return {
    async findRedirect(domain, slug) {
      const [row] = await db.select(REDIRECT_COLUMNS).from(links).where(and(eq(links.domain, domain), eq(links.slug, slug))).limit(1)
      return row
    },
    async redirectLinks(afterId, limit) {
      return db.select(REDIRECT_COLUMNS).from(links).where(gt(byteOrder(links.id), afterId)).orderBy(byteOrder(links.id)).limit(limit)
    },
    async findById(workspaceId, id) {
      const [row] = await db.select().from(links).where(and(eq(links.workspaceId, workspaceId), eq(links.id, id))).limit(1)
      return row && asLink(row)
    },
    async list(f, page, perPage) {
      const w = where(f)
      const [counted, rows] = await Promise.all([
        db.select({ n: count() }).from(links).where(w),
        db
          .select()
          .from(links)
          .where(w)
          .orderBy(desc(links.createdAt), desc(byteOrder(links.id)))
          .limit(perPage)
          .offset((page - 1) * perPage),
      ])
      return { rows: rows.map(asLink), total: counted[0]?.n ?? 0 }
    },
    async insertMany(items, usage, now) {
      return db.transaction(async (tx) => {
        const limited = usage.allowance !== null && items.some((item) => item.countsTowardsPlan)
        const guard = limited ? await lockUsage(tx, usage) : undefined
        let used = guard?.created ?? 0
        const results: (LinkRow | LinkWriteRefused)[] = []
        let counted = 0
        for (const [index, item] of items.entries()) {
          if (item.countsTowardsPlan && usage.allowance !== null && used >= usage.allowance) {
            results.push(new LinkWriteRefused('plan_limit_reached', index))
            continue
          }
          // A (domain, slug) another transaction holds uncommitted makes this wait for its outcome, so of two
          // nodes creating the same slug exactly one gets it.
          const [raw] = await tx.insert(links).values(item.row).onConflictDoNothing().returning()
          if (!raw) {
            results.push(new LinkWriteRefused('slug_taken', index))
            continue
          }
          const inserted = asLink(raw)
          if (inserted.tags.length) await tx.insert(linkTags).values(inserted.tags.map((tag) => ({ linkId: inserted.id, tag }))).onConflictDoNothing()
          await publishPg(tx, item.event(inserted), now)
          if (item.countsTowardsPlan) {
            used++
            counted++
          }
          results.push(inserted)
        }
        if (counted) {
          // Incremented in SQL: the row is locked when limited, and an unlimited insert must not lose a
          // concurrent one's count either.
          await tx
            .insert(linkUsage)
            .values({ workspaceId: usage.workspaceId, month: usage.month, created: counted })
            .onConflictDoUpdate({ target: [linkUsage.workspaceId, linkUsage.month], set: { created: sql`${linkUsage.created} + ${counted}` } })
        } else if (guard?.inserted) {
          // The lock's row, created for nothing: SQLite would have written none.
          await tx.delete(linkUsage).where(and(eq(linkUsage.workspaceId, usage.workspaceId), eq(linkUsage.month, usage.month)))
        }
        return results
      })
    },
    async update(id, patch, event, now) {
      try {
        return await db.transaction(async (tx) => {
          const [raw] = await tx.update(links).set(patch).where(eq(links.id, id)).returning()
          if (!raw) return undefined
          const row = asLink(raw)
          if (patch.tags) await writeTags(tx, row.id, row.tags)
          await publishPg(tx, event(row), now)
          return row
        })
      } catch (err) {
        if (isUniqueViolation(err, 'links_domain_slug_unique')) return new LinkWriteRefused('slug_taken')
        throw err
      }
    },
    async delete(id, event, now) {
      return db.transaction(async (tx) => {
        const gone = await tx.delete(links).where(eq(links.id, id)).returning({ id: links.id })
        if (gone.length) await publishPg(tx, event, now)
        return gone.length > 0
      })
    },
    async slugsInUse(domain, slugs) {
      if (!slugs.length) return new Set()
      const rows = await db.select({ slug: links.slug }).from(links).where(and(eq(links.domain, domain), inArray(links.slug, slugs)))
      return new Set(rows.map((r) => r.slug))
    },
  }
}
