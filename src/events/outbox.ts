// publish(): the only way an event enters the system. It writes to the outbox inside the caller's
// transaction, so an event exists exactly when the change it reports was committed.
import { asc, inArray, isNull } from 'drizzle-orm'
import { iso } from '../clock'
import { outbox } from '../db/schema'
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
 * Something that reacts to events (webhook fan-out, forwarding sessions, REST hooks). It runs inside the
 * dispatch transaction, so the work it records (deliveries, jobs) commits together with the event being
 * marked dispatched: never lost, never fanned out twice.
 */
export type OutboxConsumer = (tx: Tx, event: OutboxEvent, now: number) => void

/** Whether any event waits for dispatch: a plain read, so an idle worker need not take the write lock. */
export function hasPendingEvents(db: Tx): boolean {
  return db.select({ seq: outbox.seq }).from(outbox).where(isNull(outbox.dispatchedAt)).limit(1).get() !== undefined
}

/** Hands pending events, oldest first, to every consumer; answers how many were dispatched. */
export function dispatchOutbox(db: Tx, consumers: readonly OutboxConsumer[], now: number, limit = 200): number {
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
