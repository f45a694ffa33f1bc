// The outbox and its dispatch cursor (db/schema/platform.ts): every statement of events/outbox.ts.
// Synchronous: each runs inside the caller's transaction (the change being reported, or the dispatch).
import { and, asc, eq, gt, lt, lte, max } from 'drizzle-orm'
import type { Db } from '../db/client'
import { outbox, outboxCursor } from '../db/schema'
import type { Tx } from '../db/tx'

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

export function insertEvent(tx: Tx, event: NewEvent) {
  tx.insert(outbox).values(event).run()
}

/** insertEvent() through one statement prepared once, for hot paths; on the caller's connection. */
export function preparedEventInsert(db: Db) {
  const insert = db.$client.prepare('INSERT INTO outbox (id, type, mode, workspace_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?)')
  return (e: NewEvent) => {
    insert.run(e.id, e.type, e.mode, e.workspaceId, JSON.stringify(e.data), e.createdAt)
  }
}

/** Where the named cursor stands (0 before it first moves). */
export function cursorAt(db: Tx, name: string): number {
  return db.select({ seq: outboxCursor.seq }).from(outboxCursor).where(eq(outboxCursor.name, name)).get()?.seq ?? 0
}

export function moveCursor(db: Tx, name: string, seq: number, now: number) {
  db.insert(outboxCursor).values({ name, seq, updatedAt: now }).onConflictDoUpdate({ target: outboxCursor.name, set: { seq, updatedAt: now } }).run()
}

/** The seq of the newest event (0 when there is none). */
export function lastSeq(db: Tx): number {
  return db.select({ seq: max(outbox.seq) }).from(outbox).get()?.seq ?? 0
}

const pendingChecks = new WeakMap<Db, (cursor: string) => boolean>()

/**
 * Whether any event comes after the named cursor: one plain read, prepared once per connection, since the
 * worker asks before every pass.
 */
export function anyEventAfterCursor(db: Db, name: string): boolean {
  let check = pendingChecks.get(db)
  if (!check) {
    const stmt = db.$client.prepare<{ x: number }, [string]>('SELECT 1 AS x FROM outbox WHERE seq > coalesce((SELECT seq FROM outbox_cursor WHERE name = ?), 0) LIMIT 1')
    pendingChecks.set(db, (check = (cursor) => stmt.get(cursor) !== null))
  }
  return check(name)
}

/** Up to `limit` events after `seq`, oldest first. */
export function eventsAfter(db: Tx, seq: number, limit: number): StoredEvent[] {
  return db.select().from(outbox).where(gt(outbox.seq, seq)).orderBy(asc(outbox.seq)).limit(limit).all()
}

/** Deletes the events up to `seq` created before `before`; answers how many. */
export function deleteEvents(db: Tx, seq: number, before: number): number {
  // seq order is time order, so the rows to go are a prefix of the table: walk it by seq (the primary key).
  return db.delete(outbox).where(and(lte(outbox.seq, seq), lt(outbox.createdAt, before))).returning({ seq: outbox.seq }).all().length
}
