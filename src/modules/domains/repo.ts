// Queries of the domains area, on either engine. A check's outcome, its events and the job of the next check
// are written in one transaction; the claim race between workspaces is settled by the unique index on
// verified domains. SQLite's single writer made "no workspace verified this name, so add a pending claim" and
// "verify it and fail the other pending claims" atomic; on PostgreSQL both take a transaction-level lock on
// the domain name first (engine.lockKey), so an insert never slips a pending claim past a verification it did
// not see.
import { and, asc, count, eq, ne } from 'drizzle-orm'
import { lockKey, rows, type Builder, type Engine, type Steps } from '../../db/engine'
import { isUniqueViolation } from '../../db/errors'
import { publishing } from '../../events/outbox'
import { enqueuing } from '../../jobs/queue'
import type { DomainRow, DomainsRepo, Effects } from './port'

/** The lock space of domain names ("lnkd"). */
const DOMAIN_NAME_LOCK = 0x6c6e6b64

export function createDomainsRepo(engine: Engine, now: () => number): DomainsRepo {
  const { db } = engine
  const { domains, links } = engine.t

  function* apply(tx: Builder, effects: Effects, at: number): Steps<void> {
    for (const event of effects.events ?? []) yield* publishing(engine, tx, event, at)
    if (effects.job) yield* enqueuing(engine, tx, effects.job, at)
  }

  return {
    async insert(row, effects) {
      try {
        return await engine.transaction(
          function* (tx) {
            yield* lockKey(engine, DOMAIN_NAME_LOCK, row.domain)
            const [verified] = yield* rows(
              tx
                .select({ id: domains.id })
                .from(domains)
                .where(and(eq(domains.domain, row.domain), eq(domains.verificationStatus, 'verified'))),
            )
            if (verified) return { ok: false as const, reason: 'verified_elsewhere' as const }
            yield* rows(tx.insert(domains).values(row))
            yield* apply(tx, effects, now())
            return { ok: true as const }
          },
          { immediate: true },
        )
      } catch (err) {
        if (!isUniqueViolation(err, 'domains_workspace_domain_idx')) throw err
        const [existing] = await db
          .select({ id: domains.id })
          .from(domains)
          .where(and(eq(domains.workspaceId, row.workspaceId), eq(domains.domain, row.domain)))
        return { ok: false, reason: 'taken_here', id: existing?.id }
      }
    },

    async findById(workspaceId, id) {
      const [row] = await db
        .select()
        .from(domains)
        .where(and(eq(domains.id, id), eq(domains.workspaceId, workspaceId)))
      return row as DomainRow | undefined
    },

    async findAnyById(id) {
      const [row] = await db.select().from(domains).where(eq(domains.id, id))
      return row as DomainRow | undefined
    },

    async findByToken(token) {
      const [row] = await db.select().from(domains).where(eq(domains.token, token))
      return row as DomainRow | undefined
    },

    async list(workspaceId) {
      const where = workspaceId === undefined ? undefined : eq(domains.workspaceId, workspaceId)
      return (await db.select().from(domains).where(where).orderBy(asc(domains.createdAt), asc(domains.id))) as DomainRow[]
    },

    async verified() {
      return (await db.select().from(domains).where(eq(domains.verificationStatus, 'verified')).orderBy(engine.byteOrder(domains.domain))) as DomainRow[]
    },

    update: (id, patch, effects = {}) =>
      engine.transaction(function* (tx) {
        const [updated] = yield* rows(tx.update(domains).set(patch).where(eq(domains.id, id)).returning())
        if (updated) yield* apply(tx, effects, now())
        return updated as DomainRow | undefined
      }),

    async recordCheck(id, patch, effects, failElsewhere) {
      try {
        return await engine.transaction(
          function* (tx) {
            // The name never changes, so it can be read before its lock is taken.
            const [named] = yield* rows(tx.select({ domain: domains.domain }).from(domains).where(eq(domains.id, id)))
            if (!named) return { ok: false as const, reason: 'gone' as const }
            yield* lockKey(engine, DOMAIN_NAME_LOCK, named.domain)
            const [written] = yield* rows(tx.update(domains).set(patch).where(eq(domains.id, id)).returning())
            if (!written) return { ok: false as const, reason: 'gone' as const }
            const row = written as DomainRow
            let failed: string[] = []
            if (failElsewhere) {
              // One conditional UPDATE: a claim that stopped being pending meanwhile is left as it is.
              const others = and(eq(domains.domain, row.domain), ne(domains.id, id), eq(domains.verificationStatus, 'pending'))
              const changed = yield* rows(
                tx
                  .update(domains)
                  .set({ verificationStatus: 'failed', failureReason: failElsewhere.reason, nextCheckAt: null, updatedAt: failElsewhere.now })
                  .where(others)
                  .returning({ id: domains.id, createdAt: domains.createdAt }),
              )
              failed = changed.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)).map((r) => r.id)
            }
            yield* apply(tx, effects, now())
            return { ok: true as const, row, failedElsewhere: failed }
          },
          { immediate: true },
        )
      } catch (err) {
        if (isUniqueViolation(err, 'domains_verified_idx')) return { ok: false, reason: 'claimed_elsewhere' }
        throw err
      }
    },

    delete: (id, workspaceId, archiveLinks, effects) =>
      engine.transaction(
        function* (tx) {
          // Locked so that of two deletes one publishes the event and the other answers gone.
          const [row] = yield* rows(
            engine.forUpdate(
              tx
                .select()
                .from(domains)
                .where(and(eq(domains.id, id), eq(domains.workspaceId, workspaceId))),
            ),
          )
          if (!row) return { ok: false as const, reason: 'gone' as const }
          const onIt = and(eq(links.workspaceId, workspaceId), eq(links.domain, row.domain), eq(links.isArchived, false))
          let archived = 0
          if (archiveLinks) {
            // The count is what the UPDATE archived, not an earlier read another writer may have changed.
            archived = (yield* rows(tx.update(links).set({ isArchived: true, updatedAt: now() }).where(onIt).returning({ id: links.id }))).length
          } else {
            const [live] = yield* rows(tx.select({ n: count() }).from(links).where(onIt))
            if (live!.n > 0) return { ok: false as const, reason: 'has_links' as const, links: live!.n }
          }
          yield* rows(tx.delete(domains).where(eq(domains.id, id)))
          yield* apply(tx, effects(archived), now())
          return { ok: true as const, archivedLinks: archived }
        },
        { immediate: true },
      ),
  }
}
