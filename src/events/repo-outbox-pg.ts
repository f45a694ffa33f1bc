// The outbox on PostgreSQL: publish() of outbox.ts inside the caller's drizzle transaction, so an event
// exists exactly when the change it reports commits. A notice on OUTBOX_CHANNEL at commit wakes the nodes
// that dispatch without waiting for their poll. Below it, the statements of
// outbox-pg.ts's dispatch, the twins of repo-outbox.ts's, and the two that tell when a hole in the sequence
// is final (outbox-pg.ts says why that matters).
import { and, asc, eq, gt, lt, lte, max, sql } from 'drizzle-orm'
import { notifyIn, type PgTx } from '../db/pg/client'
import { outbox, outboxCursor } from '../db/pg/schema.generated'
import { iso } from '../platform/clock'
import { sortableId } from '../platform/random'
import { EVENT_TYPES } from './catalogue'
import { OUTBOX_CHANNEL, type EventEnvelope, type PublishInput } from './outbox'
import type { StoredEvent } from './repo-outbox'


/**
 * Tells the nodes at commit that events wait. Not the empty payload: the change feed reads that as "every
 * cache may be stale" (db/pg/notify.ts), which would clear every node's caches at each event.
 */
export const notifyOutboxIn = (tx: PgTx) => notifyIn(tx, OUTBOX_CHANNEL, 'due')

export async function publishPg(tx: PgTx, input: PublishInput, now: number): Promise<EventEnvelope> {
  if (!EVENT_TYPES.has(input.type)) throw new Error(`unknown event type "${input.type}": add it to the catalogue`)
  const id = sortableId('evt', now)
  await tx.insert(outbox).values({ id, type: input.type, mode: input.mode, workspaceId: input.workspaceId, data: input.data, createdAt: now })
  // PostgreSQL folds identical notices of one transaction into one.
  await notifyOutboxIn(tx)
  return { id, type: input.type, timestamp: iso(now), mode: input.mode, data: input.data }
}

/** Where the named cursor stands (0 before it first moves), without locking it. */
export async function cursorAtPg(db: PgTx, name: string): Promise<number> {
  const [row] = await db.select({ seq: outboxCursor.seq }).from(outboxCursor).where(eq(outboxCursor.name, name))
  return row?.seq ?? 0
}

/**
 * Where the named cursor stands, its row locked until `tx` ends: dispatchers on every node queue here, so one
 * at a time reads the events after it and moves it. The row is created at 0 when missing, since FOR UPDATE
 * on no row would lock nothing and let two first dispatches through; ON CONFLICT DO NOTHING waits for a
 * dispatcher creating it at the same moment.
 */
export async function lockCursorPg(tx: PgTx, name: string, now: number): Promise<number> {
  const locked = async () => (await tx.select({ seq: outboxCursor.seq }).from(outboxCursor).where(eq(outboxCursor.name, name)).for('update'))[0]?.seq
  const seq = await locked()
  if (seq !== undefined) return seq
  await tx.insert(outboxCursor).values({ name, seq: 0, updatedAt: now }).onConflictDoNothing()
  return (await locked())!
}

export async function moveCursorPg(tx: PgTx, name: string, seq: number, now: number): Promise<void> {
  await tx.insert(outboxCursor).values({ name, seq, updatedAt: now }).onConflictDoUpdate({ target: outboxCursor.name, set: { seq, updatedAt: now } })
}

/** The seq of the newest committed event (0 when there is none). */
export async function lastSeqPg(db: PgTx): Promise<number> {
  const [row] = await db.select({ seq: max(outbox.seq) }).from(outbox)
  return Number(row?.seq ?? 0)
}

/** Whether any committed event comes after the named cursor: one plain read, no lock. */
export async function anyEventAfterCursorPg(db: PgTx, name: string): Promise<boolean> {
  const rows = await db.execute(sql`SELECT 1 AS x FROM outbox WHERE seq > coalesce((SELECT seq FROM outbox_cursor WHERE name = ${name}), 0) LIMIT 1`)
  return (rows as unknown as unknown[]).length > 0
}

/** Up to `limit` committed events after `seq`, oldest first. */
export async function eventsAfterPg(db: PgTx, seq: number, limit: number): Promise<StoredEvent[]> {
  const rows = await db.select().from(outbox).where(gt(outbox.seq, seq)).orderBy(asc(outbox.seq)).limit(limit)
  return rows as StoredEvent[]
}

/** Deletes the events up to `seq` created before `before`; answers how many. */
export async function deleteEventsPg(db: PgTx, seq: number, before: number): Promise<number> {
  return (await db.delete(outbox).where(and(lte(outbox.seq, seq), lt(outbox.createdAt, before))).returning({ seq: outbox.seq })).length
}

/**
 * The highest seq the outbox's sequence has handed out, committed or not (sequences are not transactional:
 * every session sees a nextval at once). 0 before the first.
 */
export async function seqHandedOutPg(db: PgTx): Promise<number> {
  const [row] = (await db.execute(sql`SELECT pg_sequence_last_value(pg_get_serial_sequence('outbox', 'seq')::regclass) AS seq`)) as unknown as { seq: string | number | null }[]
  return Number(row?.seq ?? 0)
}

/**
 * The transactions (virtual ids) of other sessions that hold a write lock on the outbox table right now.
 * An INSERT takes it before it draws its seq and keeps it until its transaction ends, so every transaction
 * still able to commit an event is among them.
 */
export async function outboxWritersPg(db: PgTx): Promise<string[]> {
  const rows = (await db.execute(sql`SELECT DISTINCT virtualtransaction AS vxid FROM pg_locks
    WHERE locktype = 'relation' AND relation = 'outbox'::regclass AND mode = 'RowExclusiveLock' AND granted
      AND pid IS DISTINCT FROM pg_backend_pid()`)) as unknown as { vxid: string }[]
  return rows.map((r) => r.vxid)
}
