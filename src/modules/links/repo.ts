// Queries of the links area, on either engine. Writes run in one transaction together with their outbox events
// and the plan-allowance counter, so a refused or failed write leaves nothing behind. Two things SQLite gives
// for free are asked of the engine: one writer at a time (on PostgreSQL the plan allowance is guarded by a row
// lock, heldUsage below) and byte order of text with ASCII-only case folding in LIKE (ids sort and search folds
// through the engine, so lists come out the same whatever the database's locale). On SQLite a bulk create's
// per-link statements and the slug checks run prepared once (repo-sqlite.ts), as do the redirect's reads.
import { and, eq, gt, inArray, sql } from 'drizzle-orm'
import { rows, type Builder, type Engine, type Steps, type Tables } from '../../db/engine'
import { isUniqueViolation } from '../../db/errors'
import { publishing } from '../../events/outbox'
import { ensuringTags } from '../tags'
import { externalIdQueries, insertRefusal } from './repo-external-id'
import { LinkWriteRefused, type LinkRow, type LinksRepo, type LinkStatements, type PlanUsage, type RedirectLink } from './port'

const REDIRECT_KEYS = [
  'id',
  'workspaceId',
  'domain',
  'slug',
  'destinationUrl',
  'title',
  'description',
  'redirectStatus',
  'fallbackUrl',
  'passwordHash',
  'expiresAt',
  'clickLimit',
  'uniqueIpLimit',
  'publicStatsEnabled',
  'utmSource',
  'utmMedium',
  'utmCampaign',
  'utmTerm',
  'utmContent',
  'ogTitle',
  'ogDescription',
  'ogImageUrl',
  'twitterCard',
  'deepLinkEnabled',
  'captchaEnabled',
  'consentRequired',
  'conversionTracking',
  'bridgePageId',
  'routingRules',
  'variants',
  'isActive',
  'isTest',
  'totalClicks',
] as const satisfies readonly (keyof RedirectLink)[]
// Fails to compile when RedirectLink gains a field this list lacks.
const everyRedirectKey: Exclude<keyof RedirectLink, (typeof REDIRECT_KEYS)[number]> extends never ? true : never = true
void everyRedirectKey

type Links = Tables['links']

/** What a RedirectLink is read from: its columns of `links`, in one order for every statement. */
export function redirectColumns(links: Links) {
  return Object.fromEntries(REDIRECT_KEYS.map((key) => [key, links[key]])) as { [K in (typeof REDIRECT_KEYS)[number]]: Links[K] }
}

/**
 * The month's count the allowance is checked against, held for the rest of the transaction. SQLite's IMMEDIATE
 * transaction is its one writer, so the count read stays true until commit. On PostgreSQL two nodes would both
 * read the same count and pass the allowance together, so the row is locked: the upsert creates the row when
 * missing (a plain SELECT … FOR UPDATE would lock nothing then) and, at READ COMMITTED, waits for and returns
 * the latest committed count. `inserted` (`xmax = 0`) tells a row this lock created. The statements differ in
 * kind (a read against a locking write), not in dialect, hence the engine's name.
 */
function* heldUsage(engine: Engine, tx: Builder, usage: PlanUsage): Steps<{ created: number; inserted: boolean }> {
  const { linkUsage } = engine.t
  if (engine.name === 'sqlite') {
    const [row] = yield* rows(
      tx
        .select({ created: linkUsage.created })
        .from(linkUsage)
        .where(and(eq(linkUsage.workspaceId, usage.workspaceId), eq(linkUsage.month, usage.month))),
    )
    return { created: row?.created ?? 0, inserted: false }
  }
  const [row] = yield* rows(
    tx
      .insert(linkUsage)
      .values({ workspaceId: usage.workspaceId, month: usage.month, created: 0 })
      .onConflictDoUpdate({ target: [linkUsage.workspaceId, linkUsage.month], set: { created: sql`${linkUsage.created}` } })
      .returning({ created: linkUsage.created, inserted: sql<boolean>`xmax = 0` }),
  )
  return row!
}

/**
 * `prepared`: SQLite's prepared statements for the per-link writes of a bulk create and for slug checks
 * (repo-sqlite.ts), on the engine's connection; without them the builder's statements do the same.
 */
export function createLinksRepo(engine: Engine, prepared?: LinkStatements): LinksRepo {
  const { db } = engine
  const { links, linkTags, linkUsage } = engine.t
  const redirect = redirectColumns(links)

  return {
    ...externalIdQueries(engine),
    async findRedirect(domain, slug) {
      const [row] = await db
        .select(redirect)
        .from(links)
        .where(and(eq(links.domain, domain), eq(links.slug, slug)))
        .limit(1)
      return row
    },
    async redirectLinks(afterId, limit) {
      return db
        .select(redirect)
        .from(links)
        .where(gt(engine.byteOrder(links.id), afterId))
        .orderBy(engine.byteOrder(links.id))
        .limit(limit)
    },
    async findById(workspaceId, id) {
      const [row] = await db
        .select()
        .from(links)
        .where(and(eq(links.workspaceId, workspaceId), eq(links.id, id)))
        .limit(1)
      return row
    },
    insertMany: (items, usage, now) =>
      engine.transaction(
        function* (tx) {
          const limited = usage.allowance !== null && items.some((item) => item.countsTowardsPlan)
          const held = limited ? yield* heldUsage(engine, tx, usage) : undefined
          let used = held?.created ?? 0
          const results: (LinkRow | LinkWriteRefused)[] = []
          let counted = 0
          for (const [index, item] of items.entries()) {
            if (item.countsTowardsPlan && usage.allowance !== null && used >= usage.allowance) {
              results.push(new LinkWriteRefused('plan_limit_reached', index))
              continue
            }
            // On PostgreSQL a (domain, slug) another transaction holds uncommitted makes this wait for its
            // outcome, so of two nodes creating the same slug exactly one gets it.
            const inserted = prepared ? prepared.insertLink(item.row) : (yield* rows(tx.insert(links).values(item.row).onConflictDoNothing().returning()))[0]
            if (!inserted) {
              results.push(new LinkWriteRefused(yield* insertRefusal(engine, tx, item.row), index))
              continue
            }
            if (prepared) {
              for (const tag of inserted.tags) prepared.insertTag(inserted.id, tag)
              prepared.publish(item.event(inserted), now)
            } else {
              if (inserted.tags.length)
                yield* rows(
                  tx
                    .insert(linkTags)
                    .values(inserted.tags.map((tag) => ({ linkId: inserted.id, tag })))
                    .onConflictDoNothing(),
                )
              yield* publishing(engine, tx, item.event(inserted), now)
            }
            if (item.countsTowardsPlan) {
              used++
              counted++
            }
            results.push(inserted)
          }
          // A name not yet a tag of the workspace becomes one, with the links that brought it; its event has their mode.
          for (const isTest of [false, true]) {
            const names = results.flatMap((r) => (r instanceof LinkWriteRefused || r.isTest !== isTest ? [] : r.tags))
            if (names.length) yield* ensuringTags(engine, tx, usage.workspaceId, names, isTest ? 'test' : 'live', now)
          }
          if (counted) {
            // Incremented in SQL: the row is locked when limited, and an unlimited insert must not lose a
            // concurrent one's count either.
            yield* rows(
              tx
                .insert(linkUsage)
                .values({ workspaceId: usage.workspaceId, month: usage.month, created: counted })
                .onConflictDoUpdate({ target: [linkUsage.workspaceId, linkUsage.month], set: { created: sql`${linkUsage.created} + ${counted}` } }),
            )
          } else if (held?.inserted) {
            // The lock's row, created for nothing: SQLite would have written none.
            yield* rows(tx.delete(linkUsage).where(and(eq(linkUsage.workspaceId, usage.workspaceId), eq(linkUsage.month, usage.month))))
          }
          return results
        },
        { immediate: true },
      ),
    async update(id, patch, event, now) {
      try {
        return await engine.transaction(function* (tx) {
          const [row] = yield* rows(tx.update(links).set(patch).where(eq(links.id, id)).returning())
          if (!row) return undefined
          if (patch.tags) {
            yield* rows(tx.delete(linkTags).where(eq(linkTags.linkId, row.id)))
            if (row.tags.length) yield* rows(tx.insert(linkTags).values(row.tags.map((tag) => ({ linkId: row.id, tag }))))
            if (row.tags.length) yield* ensuringTags(engine, tx, row.workspaceId, row.tags, row.isTest ? 'test' : 'live', now)
          }
          yield* publishing(engine, tx, event(row), now)
          return row
        })
      } catch (err) {
        if (isUniqueViolation(err, 'links_domain_slug_unique')) return new LinkWriteRefused('slug_taken')
        if (isUniqueViolation(err, 'links_workspace_external_id_unique')) return new LinkWriteRefused('external_id_taken')
        throw err
      }
    },
    delete: (id, event, now) =>
      engine.transaction(function* (tx) {
        const gone = yield* rows(tx.delete(links).where(eq(links.id, id)).returning({ id: links.id }))
        if (gone.length) yield* publishing(engine, tx, event, now)
        return gone.length > 0
      }),
    async slugsInUse(domain, slugs) {
      if (prepared) return prepared.slugsInUse(domain, slugs)
      if (!slugs.length) return new Set()
      const taken = await db
        .select({ slug: links.slug })
        .from(links)
        .where(and(eq(links.domain, domain), inArray(links.slug, slugs)))
      return new Set(taken.map((r) => r.slug))
    },
  }
}
