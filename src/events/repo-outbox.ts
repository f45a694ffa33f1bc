// The outbox and its dispatch cursor (db/schema/platform.ts): every statement of events/outbox.ts, on either
// engine. Each is a step of a transaction body (db/engine), so it joins the caller's transaction: the change
// being reported, or the dispatch.
import { and, asc, eq, gt, lt, lte, max, sql } from 'drizzle-orm'
import { rows, type Builder, type Engine, type Steps } from '../db/engine'

export interface StoredEvent {
  seq: number
  id: string
  type: string
  mode: 'live' | 'test'
  workspaceId: string
  data: Record<string, unknown>
  createdAt: number
}

export type NewEvent = Omit<StoredEvent, 'seq'>

/** Where the named cursor stands (0 before it first moves), without locking it. */
export function* cursorAt(engine: Engine, tx: Builder, name: string): Steps<number> {
  const { outboxCursor } = engine.t
  const [row] = yield* rows(tx.select({ seq: outboxCursor.seq }).from(outboxCursor).where(eq(outboxCursor.name, name)))
  return Number(row?.seq ?? 0)
}

/**
 * Where the named cursor stands, its row locked until `tx` ends: dispatchers on every node queue here, so one
 * at a time reads the events after it and moves it (on SQLite the dispatch transaction already holds the one
 * write lock). The row is created at 0 when missing, since FOR UPDATE on no row would lock nothing and let
 * two first dispatches through; ON CONFLICT DO NOTHING waits for a dispatcher creating it at the same moment.
 */
export function* lockCursor(engine: Engine, tx: Builder, name: string, now: number): Steps<number> {
  const { outboxCursor } = engine.t
  const locked = () => rows(engine.forUpdate(tx.select({ seq: outboxCursor.seq }).from(outboxCursor).where(eq(outboxCursor.name, name))))
  const [row] = yield* locked()
  if (row) return Number(row.seq)
  yield* rows(tx.insert(outboxCursor).values({ name, seq: 0, updatedAt: now }).onConflictDoNothing())
  const [created] = yield* locked()
  return Number(created!.seq)
}

export function* moveCursor(engine: Engine, tx: Builder, name: string, seq: number, now: number): Steps<void> {
  const { outboxCursor } = engine.t
  yield* rows(
    tx
      .insert(outboxCursor)
      .values({ name, seq, updatedAt: now })
      .onConflictDoUpdate({ target: outboxCursor.name, set: { seq, updatedAt: now } }),
  )
}

/** The seq of the newest committed event (0 when there is none). */
export function* lastSeq(engine: Engine, tx: Builder): Steps<number> {
  const { outbox } = engine.t
  const [row] = yield* rows(tx.select({ seq: max(outbox.seq) }).from(outbox))
  return Number(row?.seq ?? 0)
}

/** Up to `limit` committed events after `seq`, oldest first. */
export function* eventsAfter(engine: Engine, tx: Builder, seq: number, limit: number): Steps<StoredEvent[]> {
  const { outbox } = engine.t
  return (yield* rows(tx.select().from(outbox).where(gt(outbox.seq, seq)).orderBy(asc(outbox.seq)).limit(limit))) as StoredEvent[]
}

/** Deletes the events up to `seq` created before `before`; answers how many. */
export function* deleteEvents(engine: Engine, tx: Builder, seq: number, before: number): Steps<number> {
  const { outbox } = engine.t
  // seq order is time order, so the rows to go are a prefix of the table: walk it by seq (the primary key).
  return (yield* rows(
    tx
      .delete(outbox)
      .where(and(lte(outbox.seq, seq), lt(outbox.createdAt, before)))
      .returning({ seq: outbox.seq }),
  )).length
}

/** Whether any committed event comes after the named cursor: one plain read, no lock (the worker asks before every pass). */
export function* anyEventAfterCursor(engine: Engine, tx: Builder, name: string): Steps<boolean> {
  const { outbox, outboxCursor } = engine.t
  const cursor = tx.select({ seq: outboxCursor.seq }).from(outboxCursor).where(eq(outboxCursor.name, name))
  const found = yield* rows(
    tx
      .select({ x: sql<number>`1` })
      .from(outbox)
      .where(gt(outbox.seq, sql`coalesce((${cursor}), 0)`))
      .limit(1),
  )
  return found.length > 0
}
