// The domains area on PostgreSQL (repo.ts's DomainsRepo, same meaning). SQLite's single writer made "no
// workspace verified this name, so add a pending claim" and "verify it and fail the other pending claims"
// atomic; here both take a transaction-level advisory lock on the domain name first, so an insert never slips
// a pending claim past a verification it did not see. The unique index on verified domains still settles
// which workspace holds a name.
import { and, asc, count, eq, ne, sql, type SQLWrapper } from 'drizzle-orm'
import { bunClientOf, type PgDb, type PgTx } from '../../db/pg/client'
import { domains, links } from '../../db/pg/schema.generated'
import { isUniqueViolation } from '../../db/errors'
import type { AsyncPort } from '../../db/rows'
import { publishPg } from '../../events/repo-outbox-pg'
import { enqueuePg } from '../../jobs/repo-queue-pg'
import type { DomainRow, DomainsRepo, Effects } from './repo'

/** pg_advisory_xact_lock's first key for domain names ("lnkd"); the second is the name's hash. */
const DOMAIN_NAME_LOCK = 0x6c6e6b64

const lockName = (name: string | SQLWrapper) => sql`pg_advisory_xact_lock(${DOMAIN_NAME_LOCK}::int, hashtext(${name}))`

async function apply(tx: PgTx, effects: Effects, now: number) {
  for (const event of effects.events ?? []) await publishPg(tx, event, now)
  if (effects.job) await enqueuePg(bunClientOf(tx), effects.job, now)
}

const asRow = (row: typeof domains.$inferSelect) => row as DomainRow

export function createDomainsRepoPg(db: PgDb, now: () => number): AsyncPort<DomainsRepo> {
  const first = async <T>(rows: Promise<T[]>) => (await rows)[0]

  return {
    async insert(row, effects) {
      try {
        return await db.transaction(async (tx) => {
          await tx.execute(sql`SELECT ${lockName(row.domain)}`)
          const verified = await first(tx.select({ id: domains.id }).from(domains).where(and(eq(domains.domain, row.domain), eq(domains.verificationStatus, 'verified'))))
          if (verified) return { ok: false as const, reason: 'verified_elsewhere' as const }
          await tx.insert(domains).values(row)
          await apply(tx, effects, now())
          return { ok: true as const }
        })
      } catch (err) {
        if (!isUniqueViolation(err, 'domains_workspace_domain_idx')) throw err
        const existing = await first(db.select({ id: domains.id }).from(domains).where(and(eq(domains.workspaceId, row.workspaceId), eq(domains.domain, row.domain))))
        return { ok: false, reason: 'taken_here', id: existing?.id }
      }
    },

    async findById(workspaceId, id) {
      const row = await first(db.select().from(domains).where(and(eq(domains.id, id), eq(domains.workspaceId, workspaceId))))
      return row && asRow(row)
    },

    async findAnyById(id) {
      const row = await first(db.select().from(domains).where(eq(domains.id, id)))
      return row && asRow(row)
    },

    async findByToken(token) {
      const row = await first(db.select().from(domains).where(eq(domains.token, token)))
      return row && asRow(row)
    },

    async list(workspaceId) {
      const where = workspaceId === undefined ? undefined : eq(domains.workspaceId, workspaceId)
      return (await db.select().from(domains).where(where).orderBy(asc(domains.createdAt), asc(domains.id))).map(asRow)
    },

    async verified() {
      // By name, as SQLite answers through its index on verified domains.
      return (await db.select().from(domains).where(eq(domains.verificationStatus, 'verified')).orderBy(asc(domains.domain))).map(asRow)
    },

    async update(id, patch, effects = {}) {
      return db.transaction(async (tx) => {
        const updated = await first(tx.update(domains).set(patch).where(eq(domains.id, id)).returning())
        if (updated) await apply(tx, effects, now())
        return updated && asRow(updated)
      })
    },

    async recordCheck(id, patch, effects, failElsewhere) {
      try {
        return await db.transaction(async (tx) => {
          // The name never changes, so it can be read before its lock is taken.
          const locked = await first(tx.select({ locked: lockName(domains.domain) }).from(domains).where(eq(domains.id, id)))
          if (!locked) return { ok: false as const, reason: 'gone' as const }
          const written = await first(tx.update(domains).set(patch).where(eq(domains.id, id)).returning())
          if (!written) return { ok: false as const, reason: 'gone' as const }
          const row = asRow(written)
          let failed: string[] = []
          if (failElsewhere) {
            // One conditional UPDATE: a claim that stopped being pending meanwhile is left as it is.
            const others = and(eq(domains.domain, row.domain), ne(domains.id, id), eq(domains.verificationStatus, 'pending'))
            const rows = await tx
              .update(domains)
              .set({ verificationStatus: 'failed', failureReason: failElsewhere.reason, nextCheckAt: null, updatedAt: failElsewhere.now })
              .where(others)
              .returning({ id: domains.id, createdAt: domains.createdAt })
            failed = rows.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)).map((r) => r.id)
          }
          await apply(tx, effects, now())
          return { ok: true as const, row, failedElsewhere: failed }
        })
      } catch (err) {
        if (isUniqueViolation(err, 'domains_verified_idx')) return { ok: false, reason: 'claimed_elsewhere' }
        throw err
      }
    },

    async delete(id, workspaceId, archiveLinks, effects) {
      return db.transaction(async (tx) => {
        // Locked so that of two deletes one publishes the event and the other answers gone.
        const row = await first(tx.select().from(domains).where(and(eq(domains.id, id), eq(domains.workspaceId, workspaceId))).for('update'))
        if (!row) return { ok: false as const, reason: 'gone' as const }
        const onIt = and(eq(links.workspaceId, workspaceId), eq(links.domain, row.domain), eq(links.isArchived, false))
        let archived = 0
        if (archiveLinks) {
          // The count is what the UPDATE archived, not an earlier read another writer may have changed.
          archived = (await tx.update(links).set({ isArchived: true, updatedAt: now() }).where(onIt).returning({ id: links.id })).length
        } else {
          const live = (await first(tx.select({ n: count() }).from(links).where(onIt)))!.n
          if (live > 0) return { ok: false as const, reason: 'has_links' as const, links: live }
        }
        await tx.delete(domains).where(eq(domains.id, id))
        await apply(tx, effects(archived), now())
        return { ok: true as const, archivedLinks: archived }
      })
    },
  }
}
