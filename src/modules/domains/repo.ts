// Queries of the domains area. A check's outcome, its events and the job of the next check are written in
// one transaction; the claim race between workspaces is settled by the unique index on verified domains.
import { and, asc, count, eq, inArray, ne } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { isUniqueViolation } from '../../db/errors'
import type { Tx } from '../../db/tx'
import { domains, links, type SeenRecords } from '../../db/schema'
import { publish, type PublishInput } from '../../events/outbox'
import { enqueue, type EnqueueInput } from '../../jobs/queue'

export type { SeenRecords }

export interface DomainRow {
  id: string
  workspaceId: string
  domain: string
  verificationStatus: 'pending' | 'verified' | 'failed'
  dnsStatus: 'unknown' | 'ok' | 'misconfigured' | 'conflicting'
  sslStatus: 'unmanaged' | 'pending' | 'active' | 'failed'
  token: string
  failureReason: string | null
  seen: SeenRecords | null
  rootRedirectUrl: string | null
  notFoundUrl: string | null
  expiredUrl: string | null
  lastCheckedAt: number | null
  nextCheckAt: number | null
  verifiedAt: number | null
  misconfiguredAt: number | null
  createdAt: number
  updatedAt: number
}

export type DomainPatch = Partial<Omit<DomainRow, 'id' | 'workspaceId' | 'domain' | 'token' | 'createdAt'>>

/** What else a write carries: events to publish and a job to enqueue, in the same transaction. */
export interface Effects {
  events?: PublishInput[]
  job?: EnqueueInput
}

export type InsertOutcome = { ok: true } | { ok: false; reason: 'taken_here' | 'verified_elsewhere'; id?: string }

export type CheckOutcome =
  | { ok: true; row: DomainRow; failedElsewhere: string[] }
  /** Another workspace verified the domain first. */
  | { ok: false; reason: 'claimed_elsewhere' }
  | { ok: false; reason: 'gone' }

export type DeleteOutcome = { ok: true; archivedLinks: number } | { ok: false; reason: 'has_links'; links: number } | { ok: false; reason: 'gone' }

export interface DomainsRepo {
  insert(row: DomainRow, effects: Effects): Promise<InsertOutcome>
  findById(workspaceId: string, id: string): Promise<DomainRow | undefined>
  /** For jobs: the row whatever its workspace. */
  findAnyById(id: string): Promise<DomainRow | undefined>
  findByToken(token: string): Promise<DomainRow | undefined>
  /** Oldest first: of one workspace when given, else of every workspace (the admin CLI). */
  list(workspaceId?: string): Promise<DomainRow[]>
  /** Every verified domain, for the served set at start. Synchronous: start-up runs before requests. */
  verifiedSync(): DomainRow[]
  update(id: string, patch: DomainPatch, effects?: Effects): Promise<DomainRow | undefined>
  /**
   * Writes a check's outcome. When it verifies the domain, pending claims of other workspaces on the same
   * domain fail in the same transaction; a workspace that verified it first wins (claimed_elsewhere).
   */
  recordCheck(id: string, patch: DomainPatch, effects: Effects, failElsewhere: { reason: string; now: number } | null): Promise<CheckOutcome>
  /** Deletes the domain; links on it (not yet archived) refuse it unless `archiveLinks`, which archives them. */
  delete(id: string, workspaceId: string, archiveLinks: boolean, effects: (archivedLinks: number) => Effects): Promise<DeleteOutcome>
}

// --- SQLite ------------------------------------------------------------------------------------------

function apply(tx: Tx, effects: Effects, now: number) {
  for (const event of effects.events ?? []) publish(tx, event, now)
  if (effects.job) enqueue(tx, effects.job, now)
}

export function createDomainsRepo(db: Db, now: () => number): DomainsRepo {
  const byId = (id: string) => db.select().from(domains).where(eq(domains.id, id)).get() as DomainRow | undefined
  const liveLinks = (tx: Tx, workspaceId: string, domain: string) =>
    tx.select({ n: count() }).from(links).where(and(eq(links.workspaceId, workspaceId), eq(links.domain, domain), eq(links.isArchived, false))).get()!.n

  return {
    async insert(row, effects) {
      try {
        return db.transaction((tx) => {
          const verified = tx.select({ id: domains.id }).from(domains).where(and(eq(domains.domain, row.domain), eq(domains.verificationStatus, 'verified'))).get()
          if (verified) return { ok: false as const, reason: 'verified_elsewhere' as const }
          tx.insert(domains).values(row).run()
          apply(tx, effects, now())
          return { ok: true as const }
        })
      } catch (err) {
        if (!isUniqueViolation(err, 'domains_workspace_domain_idx')) throw err
        const existing = db.select({ id: domains.id }).from(domains).where(and(eq(domains.workspaceId, row.workspaceId), eq(domains.domain, row.domain))).get()
        return { ok: false, reason: 'taken_here', id: existing?.id }
      }
    },

    async findById(workspaceId, id) {
      return db.select().from(domains).where(and(eq(domains.id, id), eq(domains.workspaceId, workspaceId))).get() as DomainRow | undefined
    },

    async findAnyById(id) {
      return byId(id)
    },

    async findByToken(token) {
      return db.select().from(domains).where(eq(domains.token, token)).get() as DomainRow | undefined
    },

    async list(workspaceId) {
      const where = workspaceId === undefined ? undefined : eq(domains.workspaceId, workspaceId)
      return db.select().from(domains).where(where).orderBy(asc(domains.createdAt), asc(domains.id)).all() as DomainRow[]
    },

    verifiedSync() {
      return db.select().from(domains).where(eq(domains.verificationStatus, 'verified')).all() as DomainRow[]
    },

    async update(id, patch, effects = {}) {
      return db.transaction((tx) => {
        const updated = tx.update(domains).set(patch).where(eq(domains.id, id)).returning().get() as DomainRow | undefined
        if (updated) apply(tx, effects, now())
        return updated
      })
    },

    async recordCheck(id, patch, effects, failElsewhere) {
      try {
        return db.transaction((tx) => {
          const row = tx.update(domains).set(patch).where(eq(domains.id, id)).returning().get() as DomainRow | undefined
          if (!row) return { ok: false as const, reason: 'gone' as const }
          let failed: string[] = []
          if (failElsewhere) {
            const others = and(eq(domains.domain, row.domain), ne(domains.id, id), eq(domains.verificationStatus, 'pending'))
            failed = tx.select({ id: domains.id }).from(domains).where(others).all().map((r) => r.id)
            if (failed.length) {
              tx.update(domains)
                .set({ verificationStatus: 'failed', failureReason: failElsewhere.reason, nextCheckAt: null, updatedAt: failElsewhere.now })
                .where(inArray(domains.id, failed))
                .run()
            }
          }
          apply(tx, effects, now())
          return { ok: true as const, row, failedElsewhere: failed }
        })
      } catch (err) {
        if (isUniqueViolation(err, 'domains_verified_idx')) return { ok: false, reason: 'claimed_elsewhere' }
        throw err
      }
    },

    async delete(id, workspaceId, archiveLinks, effects) {
      return db.transaction((tx) => {
        const row = tx.select().from(domains).where(and(eq(domains.id, id), eq(domains.workspaceId, workspaceId))).get()
        if (!row) return { ok: false as const, reason: 'gone' as const }
        const onIt = liveLinks(tx, workspaceId, row.domain)
        if (onIt > 0 && !archiveLinks) return { ok: false as const, reason: 'has_links' as const, links: onIt }
        if (onIt > 0) {
          tx.update(links).set({ isArchived: true, updatedAt: now() }).where(and(eq(links.workspaceId, workspaceId), eq(links.domain, row.domain), eq(links.isArchived, false))).run()
        }
        tx.delete(domains).where(eq(domains.id, id)).run()
        apply(tx, effects(onIt), now())
        return { ok: true as const, archivedLinks: onIt }
      })
    },
  }
}
