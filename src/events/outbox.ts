// publish(): the only way an event enters the system. It writes to the outbox inside the caller's
// transaction, so an event exists exactly when the change it reports was committed.
import { and, asc, inArray, isNotNull, isNull, lt } from 'drizzle-orm'
import { iso } from '../clock'
import { outbox } from '../db/schema'
import type { Db } from '../db/client'
import type { Tx } from '../db/tx'
import { newId } from '../random'
import { EVENT_TYPES } from './catalogue'

export interface EventEnvelope {
  id: string
  type: string
  timestamp: string
  mode: 'live' | 'test'
  data: Record<string, unknown>
}

export interface PublishInput {
  type: string
  workspaceId: string
  mode: 'live' | 'test'
  data: Record<string, unknown>
}

export interface OutboxEvent {
  seq: number
  workspaceId: string
  envelope: EventEnvelope
}

/** Synchronous on purpose: it runs inside a `db.transaction()` callback. */
export function publish(tx: Tx, input: PublishInput, now: number): EventEnvelope {
  if (!EVENT_TYPES.has(input.type)) throw new Error(`unknown event type "${input.type}": add it to the catalogue`)
  const id = newId('evt')
  tx.insert(outbox).values({ id, type: input.type, mode: input.mode, workspaceId: input.workspaceId, data: input.data, createdAt: now }).run()
  return { id, type: input.type, timestamp: iso(now), mode: input.mode, data: input.data }
}

/**
 * publish() for hot paths that write thousands of events a second (click flushes): the same row through
 * one statement prepared once. Call it inside the caller's transaction on the same connection.
 */
export function preparedPublisher(db: Db) {
  const insert = db.$client.prepare('INSERT INTO outbox (id, type, mode, workspace_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?)')
  return (input: PublishInput, now: number): string => {
    if (!EVENT_TYPES.has(input.type)) throw new Error(`unknown event type "${input.type}": add it to the catalogue`)
    const id = newId('evt')
    insert.run(id, input.type, input.mode, input.workspaceId, JSON.stringify(input.data), now)
    return id
  }
}

/**
 * Something that reacts to events (webhook fan-out, forwarding sessions, REST hooks). It runs inside the
 * dispatch transaction, so the work it records (deliveries, jobs) commits together with the event being
 * marked dispatched: never lost, never fanned out twice.
 */
export type OutboxConsumer = (tx: Tx, event: OutboxEvent, now: number) => void

/** Whether any event waits for dispatch: a plain read, so an idle worker need not take the write lock. */
/** Deletes events dispatched before `before`; answers how many. */
export function pruneDispatched(db: Tx, before: number): number {
  return db.delete(outbox).where(and(isNotNull(outbox.dispatchedAt), lt(outbox.dispatchedAt, before))).returning({ seq: outbox.seq }).all().length
}

export function hasPendingEvents(db: Tx): boolean {
  return db.select({ seq: outbox.seq }).from(outbox).where(isNull(outbox.dispatchedAt)).limit(1).get() !== undefined
}

/**
 * Hands pending events, oldest first, to every consumer; answers how many were dispatched. With no
 * consumer at all, events are simply marked: nobody was listening when they happened.
 */
export function dispatchOutbox(db: Tx, consumers: readonly OutboxConsumer[], now: number, limit = 200): number {
  if (!consumers.length) {
    const marked = db
      .update(outbox)
      .set({ dispatchedAt: now })
      .where(inArray(outbox.seq, db.select({ seq: outbox.seq }).from(outbox).where(isNull(outbox.dispatchedAt)).orderBy(asc(outbox.seq)).limit(limit * 50)))
      .returning({ seq: outbox.seq })
      .all()
    return marked.length
  }
  const rows = db.select().from(outbox).where(isNull(outbox.dispatchedAt)).orderBy(asc(outbox.seq)).limit(limit).all()
  if (!rows.length) return 0
  for (const row of rows) {
    const event: OutboxEvent = {
      seq: row.seq,
      workspaceId: row.workspaceId,
      envelope: { id: row.id, type: row.type, timestamp: iso(row.createdAt), mode: row.mode, data: row.data },
    }
    for (const consume of consumers) consume(db, event, now)
  }
  db.update(outbox).set({ dispatchedAt: now }).where(inArray(outbox.seq, rows.map((r) => r.seq))).run()
  return rows.length
}
