// Queries of forwarding sessions: the per-key signing secret, the sessions, and their queues. Taking events
// deletes them in the same statement, so two polls never hand over the same event.
import { and, asc, count, eq, gt, inArray, lte, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import type { Tx } from '../../db/tx'
import { cliSecrets, cliSessionEvents, cliSessions } from '../../db/schema'

export interface SessionRow {
  id: string
  workspaceId: string
  keyId: string
  mode: 'live' | 'test'
  events: string[]
  deviceName: string | null
  dropped: number
  createdAt: number
  lastPollAt: number | null
  expiresAt: number
}

export interface QueuedEvent {
  seq: number
  eventId: string
  type: string
  body: string
}

/** What the fan-out needs of an open session. */
export type OpenSession = Pick<SessionRow, 'id' | 'events'>

export interface ForwardingRepo {
  /** The key's secret, made (by `make`) when the key has none or its hash changed since. */
  secretFor(keyId: string, keyHash: string, make: () => string, now: number): Promise<string>
  insert(row: SessionRow): Promise<void>
  find(id: string): Promise<SessionRow | undefined>
  /** Open sessions of the key, with how many events wait in each. */
  listOpen(keyId: string, now: number): Promise<(SessionRow & { queued: number })[]>
  delete(id: string, keyId: string): Promise<boolean>
  /** Moves the session's expiry (a poll is its heartbeat); false when it has gone. */
  touch(id: string, now: number, expiresAt: number): Promise<boolean>
  /** Takes up to `limit` waiting events, oldest first, removing them. */
  take(sessionId: string, limit: number): Promise<QueuedEvent[]>
  /** Sessions that expired before `before`, with their queues. */
  pruneExpired(before: number): Promise<number>
}

/** The fan-out's statements: on the worker's connection, inside the dispatch transaction. */
export function createQueueStatements(db: Tx) {
  return {
    openSessions(workspaceId: string, mode: string, now: number): OpenSession[] {
      return db
        .select({ id: cliSessions.id, events: cliSessions.events })
        .from(cliSessions)
        .where(and(eq(cliSessions.workspaceId, workspaceId), eq(cliSessions.mode, mode as 'live' | 'test'), gt(cliSessions.expiresAt, now)))
        .all()
    },
    /** Queues the event unless the session holds `cap` already; then only its dropped count grows. */
    enqueue(tx: Tx, sessionId: string, event: { eventId: string; type: string; body: string }, cap: number, now: number): boolean {
      const held = tx.select({ n: count() }).from(cliSessionEvents).where(eq(cliSessionEvents.sessionId, sessionId)).get()!.n
      if (held >= cap) {
        tx.update(cliSessions).set({ dropped: sql`${cliSessions.dropped} + 1` }).where(eq(cliSessions.id, sessionId)).run()
        return false
      }
      tx.insert(cliSessionEvents).values({ sessionId, ...event, createdAt: now }).run()
      return true
    },
  }
}

export function createForwardingRepo(db: Db): ForwardingRepo {
  return {
    async secretFor(keyId, keyHash, make, now) {
      return db.transaction((tx) => {
        const row = tx.select().from(cliSecrets).where(eq(cliSecrets.keyId, keyId)).get()
        if (row && row.keyHash === keyHash) return row.secret
        const secret = make()
        tx.insert(cliSecrets).values({ keyId, keyHash, secret, createdAt: now }).onConflictDoUpdate({ target: cliSecrets.keyId, set: { keyHash, secret, createdAt: now } }).run()
        return secret
      })
    },

    async insert(row) {
      db.insert(cliSessions).values(row).run()
    },

    async find(id) {
      return db.select().from(cliSessions).where(eq(cliSessions.id, id)).get() as SessionRow | undefined
    },

    async listOpen(keyId, now) {
      const rows = db.select().from(cliSessions).where(and(eq(cliSessions.keyId, keyId), gt(cliSessions.expiresAt, now))).orderBy(asc(cliSessions.createdAt)).all() as SessionRow[]
      if (!rows.length) return []
      const queued = db
        .select({ sessionId: cliSessionEvents.sessionId, n: count() })
        .from(cliSessionEvents)
        .where(inArray(cliSessionEvents.sessionId, rows.map((r) => r.id)))
        .groupBy(cliSessionEvents.sessionId)
        .all()
      const by = new Map(queued.map((q) => [q.sessionId, q.n]))
      return rows.map((r) => ({ ...r, queued: by.get(r.id) ?? 0 }))
    },

    async delete(id, keyId) {
      return db.delete(cliSessions).where(and(eq(cliSessions.id, id), eq(cliSessions.keyId, keyId))).returning({ id: cliSessions.id }).all().length > 0
    },

    async touch(id, now, expiresAt) {
      return db.update(cliSessions).set({ lastPollAt: now, expiresAt }).where(eq(cliSessions.id, id)).returning({ id: cliSessions.id }).all().length > 0
    },

    async take(sessionId, limit) {
      return db.transaction((tx) => {
        const rows = tx
          .select({ seq: cliSessionEvents.seq, eventId: cliSessionEvents.eventId, type: cliSessionEvents.type, body: cliSessionEvents.body })
          .from(cliSessionEvents)
          .where(eq(cliSessionEvents.sessionId, sessionId))
          .orderBy(asc(cliSessionEvents.seq))
          .limit(limit)
          .all()
        if (rows.length) tx.delete(cliSessionEvents).where(and(eq(cliSessionEvents.sessionId, sessionId), lte(cliSessionEvents.seq, rows.at(-1)!.seq))).run()
        return rows
      })
    },

    async pruneExpired(before) {
      return db.delete(cliSessions).where(lte(cliSessions.expiresAt, before)).returning({ id: cliSessions.id }).all().length
    },
  }
}
