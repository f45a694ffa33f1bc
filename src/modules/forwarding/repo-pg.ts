// Forwarding sessions on PostgreSQL (repo.ts has the meaning). Nodes write at once here, so:
// - A session's queue is written only under a lock on its session row (enqueue), so the cap holds exactly
//   and, since `seq` is drawn after that lock is taken and the lock is held to commit, a session's events
//   commit in `seq` order: no poll of a session can see its seq n+1 before a later commit adds its n.
//   (Numbers are unique across sessions but not gapless: a rolled-back dispatch leaves holes.)
// - take deletes exactly the rows it answers, in one statement (never "up to the last seq", which on this
//   engine could remove a row committed in between that was never read): two polls never hand over the
//   same event, and an event is deleted only by the poll that hands it over.
import { and, asc, count, eq, gt, inArray, lte, sql } from 'drizzle-orm'
import type { PgDb, PgTx } from '../../db/pg/client'
import type { AsyncPort } from '../../db/rows'
import { cliSecrets, cliSessionEvents, cliSessions } from '../../db/pg/schema.generated'
import type { ForwardingRepo, OpenSession, QueuedEvent, SessionRow } from './repo'

/** createQueueStatements of repo.ts on PostgreSQL, inside the dispatch transaction. */
export function createQueueStatementsPg(db: PgTx) {
  return {
    async openSessions(workspaceId: string, mode: string, now: number): Promise<OpenSession[]> {
      const rows = await db
        .select({ id: cliSessions.id, events: cliSessions.events })
        .from(cliSessions)
        .where(and(eq(cliSessions.workspaceId, workspaceId), eq(cliSessions.mode, mode as 'live' | 'test'), gt(cliSessions.expiresAt, now)))
        // enqueue locks sessions in the order they are listed: one order on every node makes two dispatch
        // transactions waiting on each other's sessions rare (PostgreSQL ends such a deadlock by failing one
        // dispatch, whose events stay undispatched for the next round).
        .orderBy(asc(cliSessions.id))
      return rows as OpenSession[]
    },
    /**
     * Queues the event unless the session holds `cap` already; then only its dropped count grows. False too
     * when the session has gone since it was listed (another node ended it): the dispatch carries on.
     */
    async enqueue(tx: PgTx, sessionId: string, event: { eventId: string; type: string; body: string }, cap: number, now: number): Promise<boolean> {
      // The count below decides; without this lock two dispatchers could both see cap - 1 and both insert.
      const [session] = await tx.select({ id: cliSessions.id }).from(cliSessions).where(eq(cliSessions.id, sessionId)).for('no key update')
      if (!session) return false
      const [held] = await tx.select({ n: count() }).from(cliSessionEvents).where(eq(cliSessionEvents.sessionId, sessionId))
      if (held!.n >= cap) {
        await tx.update(cliSessions).set({ dropped: sql`${cliSessions.dropped} + 1` }).where(eq(cliSessions.id, sessionId))
        return false
      }
      await tx.insert(cliSessionEvents).values({ sessionId, ...event, createdAt: now })
      return true
    },
  }
}

export function createForwardingRepoPg(db: PgDb): AsyncPort<ForwardingRepo> {
  return {
    async secretFor(keyId, keyHash, make, now) {
      const [row] = await db.select().from(cliSecrets).where(eq(cliSecrets.keyId, keyId))
      if (row && row.keyHash === keyHash) return row.secret
      const secret = make()
      // Another node may be making the key's secret too: only a row of another hash is replaced, so the
      // loser of that race keeps the winner's secret (read again below) instead of overwriting it.
      const [stored] = await db
        .insert(cliSecrets)
        .values({ keyId, keyHash, secret, createdAt: now })
        .onConflictDoUpdate({ target: cliSecrets.keyId, set: { keyHash, secret, createdAt: now }, setWhere: sql`${cliSecrets.keyHash} <> ${keyHash}` })
        .returning({ secret: cliSecrets.secret })
      if (stored) return stored.secret
      const [winner] = await db.select({ secret: cliSecrets.secret }).from(cliSecrets).where(eq(cliSecrets.keyId, keyId))
      return winner!.secret
    },

    async insert(row) {
      await db.insert(cliSessions).values(row)
    },

    async find(id) {
      const [row] = await db.select().from(cliSessions).where(eq(cliSessions.id, id))
      return row as SessionRow | undefined
    },

    async listOpen(keyId, now) {
      const rows = (await db
        .select()
        .from(cliSessions)
        .where(and(eq(cliSessions.keyId, keyId), gt(cliSessions.expiresAt, now)))
        .orderBy(asc(cliSessions.createdAt), asc(cliSessions.id))) as SessionRow[]
      if (!rows.length) return []
      const queued = await db
        .select({ sessionId: cliSessionEvents.sessionId, n: count() })
        .from(cliSessionEvents)
        .where(inArray(cliSessionEvents.sessionId, rows.map((r) => r.id)))
        .groupBy(cliSessionEvents.sessionId)
      const by = new Map(queued.map((q) => [q.sessionId, q.n]))
      return rows.map((r) => ({ ...r, queued: by.get(r.id) ?? 0 }))
    },

    async delete(id, keyId) {
      return (await db.delete(cliSessions).where(and(eq(cliSessions.id, id), eq(cliSessions.keyId, keyId))).returning({ id: cliSessions.id })).length > 0
    },

    async touch(id, now, expiresAt) {
      return (await db.update(cliSessions).set({ lastPollAt: now, expiresAt }).where(eq(cliSessions.id, id)).returning({ id: cliSessions.id })).length > 0
    },

    async take(sessionId, limit) {
      // A concurrent poll of the same session waits for these rows, passes over them once they are gone and
      // locks the next ones (PostgreSQL locks before it applies the LIMIT), so polls hand events over in order.
      const oldest = db
        .select({ seq: cliSessionEvents.seq })
        .from(cliSessionEvents)
        .where(eq(cliSessionEvents.sessionId, sessionId))
        .orderBy(asc(cliSessionEvents.seq))
        .limit(limit)
        .for('update')
      const rows: QueuedEvent[] = await db
        .delete(cliSessionEvents)
        .where(inArray(cliSessionEvents.seq, oldest))
        .returning({ seq: cliSessionEvents.seq, eventId: cliSessionEvents.eventId, type: cliSessionEvents.type, body: cliSessionEvents.body })
      // RETURNING follows no order.
      return rows.sort((a, b) => a.seq - b.seq)
    },

    async pruneExpired(before) {
      return (await db.delete(cliSessions).where(lte(cliSessions.expiresAt, before)).returning({ id: cliSessions.id })).length
    },
  }
}
