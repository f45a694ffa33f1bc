// Queries of forwarding sessions (port.ts), on either engine: the per-key signing secret, the sessions, and
// their queues. SQLite has one writer; on PostgreSQL nodes write at once, so:
// - A session's queue is written only under a lock on its session row (enqueuing), so the cap holds exactly
//   and, since `seq` is drawn after that lock is taken and the lock is held to commit, a session's events
//   commit in `seq` order: no poll of a session can see its seq n+1 before a later commit adds its n.
//   (Numbers are unique across sessions but not gapless: a rolled-back dispatch leaves holes.)
// - take deletes exactly the rows it answers, in one statement (never "up to the last seq", which on
//   PostgreSQL could remove a row committed in between that was never read): two polls never hand over the
//   same event, and an event is deleted only by the poll that hands it over.
import { and, asc, count, eq, gt, inArray, lte, sql } from 'drizzle-orm'
import { rows, type Builder, type Engine, type Steps } from '../../db/engine'
import type { ForwardingRepo, OpenSession, QueuedEvent, SessionRow } from './port'

/**
 * The open sessions of a workspace and mode: the fan-out's read, inside the dispatch transaction (or alone,
 * for the interest source).
 */
export function* openSessionsOf(engine: Engine, tx: Builder, workspaceId: string, mode: string, now: number): Steps<OpenSession[]> {
  const { cliSessions } = engine.t
  return yield* rows(
    tx
      .select({ id: cliSessions.id, events: cliSessions.events })
      .from(cliSessions)
      .where(and(eq(cliSessions.workspaceId, workspaceId), eq(cliSessions.mode, mode as 'live' | 'test'), gt(cliSessions.expiresAt, now)))
      // enqueuing locks sessions in the order they are listed: one order on every node makes two dispatch
      // transactions waiting on each other's sessions rare (PostgreSQL ends such a deadlock by failing one
      // dispatch, whose events stay undispatched for the next round).
      .orderBy(asc(cliSessions.id)),
  )
}

/**
 * Queues the event unless the session holds `cap` already; then only its dropped count grows. False too when
 * the session has gone since it was listed (the lists are cached; on PostgreSQL another node may have ended
 * it): the dispatch carries on. Inside the dispatch transaction.
 */
export function* enqueuing(
  engine: Engine,
  tx: Builder,
  sessionId: string,
  event: { eventId: string; type: string; body: string },
  cap: number,
  now: number,
): Steps<boolean> {
  const { cliSessions, cliSessionEvents } = engine.t
  // The count below decides; without this lock two dispatchers on PostgreSQL could both see cap - 1 and both
  // insert.
  const [session] = yield* rows(engine.forUpdate(tx.select({ id: cliSessions.id }).from(cliSessions).where(eq(cliSessions.id, sessionId)), { weak: true }))
  if (!session) return false
  const [held] = yield* rows(tx.select({ n: count() }).from(cliSessionEvents).where(eq(cliSessionEvents.sessionId, sessionId)))
  if (held!.n >= cap) {
    yield* rows(
      tx
        .update(cliSessions)
        .set({ dropped: sql`${cliSessions.dropped} + 1` })
        .where(eq(cliSessions.id, sessionId)),
    )
    return false
  }
  yield* rows(tx.insert(cliSessionEvents).values({ sessionId, ...event, createdAt: now }))
  return true
}

export function createForwardingRepo(engine: Engine): ForwardingRepo {
  const { db } = engine
  const { cliSecrets, cliSessionEvents, cliSessions } = engine.t
  return {
    async secretFor(keyId, keyHash, make, now) {
      const [row] = await db.select().from(cliSecrets).where(eq(cliSecrets.keyId, keyId))
      if (row && row.keyHash === keyHash) return row.secret
      const secret = make()
      // Another request (or node) may be making the key's secret too: only a row of another hash is replaced,
      // so the loser of that race keeps the winner's secret (read again below) instead of overwriting it.
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
      const open = (await db
        .select()
        .from(cliSessions)
        .where(and(eq(cliSessions.keyId, keyId), gt(cliSessions.expiresAt, now)))
        .orderBy(asc(cliSessions.createdAt), asc(cliSessions.id))) as SessionRow[]
      if (!open.length) return []
      const queued = await db
        .select({ sessionId: cliSessionEvents.sessionId, n: count() })
        .from(cliSessionEvents)
        .where(
          inArray(
            cliSessionEvents.sessionId,
            open.map((r) => r.id),
          ),
        )
        .groupBy(cliSessionEvents.sessionId)
      const by = new Map(queued.map((q) => [q.sessionId, q.n]))
      return open.map((r) => ({ ...r, queued: by.get(r.id) ?? 0 }))
    },

    async delete(id, keyId) {
      return (
        (
          await db
            .delete(cliSessions)
            .where(and(eq(cliSessions.id, id), eq(cliSessions.keyId, keyId)))
            .returning({ id: cliSessions.id })
        ).length > 0
      )
    },

    async touch(id, now, expiresAt) {
      return (await db.update(cliSessions).set({ lastPollAt: now, expiresAt }).where(eq(cliSessions.id, id)).returning({ id: cliSessions.id })).length > 0
    },

    async take(sessionId, limit) {
      // On PostgreSQL a concurrent poll of the same session waits for these rows, passes over them once they
      // are gone and locks the next ones (PostgreSQL locks before it applies the LIMIT), so polls hand events
      // over in order.
      const oldest = engine.forUpdate(
        db
          .select({ seq: cliSessionEvents.seq })
          .from(cliSessionEvents)
          .where(eq(cliSessionEvents.sessionId, sessionId))
          .orderBy(asc(cliSessionEvents.seq))
          .limit(limit),
      )
      const taken: QueuedEvent[] = await db
        .delete(cliSessionEvents)
        .where(inArray(cliSessionEvents.seq, oldest))
        .returning({ seq: cliSessionEvents.seq, eventId: cliSessionEvents.eventId, type: cliSessionEvents.type, body: cliSessionEvents.body })
      // RETURNING follows no order.
      return taken.sort((a, b) => a.seq - b.seq)
    },

    async pruneExpired(before) {
      return (await db.delete(cliSessions).where(lte(cliSessions.expiresAt, before)).returning({ id: cliSessions.id })).length
    },
  }
}
