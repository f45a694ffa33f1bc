// publish(): the only way an event enters the system. It writes to the outbox inside the caller's
// transaction, so an event exists exactly when the change it reports was committed. The statements are in
// repo-outbox.ts.
import { iso } from '../platform/clock'
import type { Db } from '../db/client'
import type { Tx } from '../db/tx'
import { notice, rows, type Builder, type Engine, type Steps } from '../db/engine'
import { sortableId } from '../platform/random'
import { EVENT_TYPES } from './catalogue'
import { anyEventAfterCursor, cursorAt, deleteEvents, eventsAfter, insertEvent, lastSeq, moveCursor, preparedEventInsert, type StoredEvent } from './repo-outbox'

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
  const id = sortableId('evt', now)
  insertEvent(tx, { id, type: input.type, mode: input.mode, workspaceId: input.workspaceId, data: input.data, createdAt: now })
  return { id, type: input.type, timestamp: iso(now), mode: input.mode, data: input.data }
}

/** The PostgreSQL channel of "events wait for dispatch". Not an empty payload: the change feed reads that as
 * "every cache may be stale" (db/pg/notify.ts). */
export const OUTBOX_CHANNEL = 'lnk_outbox'

/**
 * publish() inside a transaction body written once for both engines (db/engine): the outbox row, and on
 * PostgreSQL the notice that wakes the nodes that dispatch at commit.
 */
export function* publishing(engine: Engine, tx: Builder, input: PublishInput, now: number): Steps<EventEnvelope> {
  if (!EVENT_TYPES.has(input.type)) throw new Error(`unknown event type "${input.type}": add it to the catalogue`)
  const id = sortableId('evt', now)
  yield* rows(tx.insert(engine.t.outbox).values({ id, type: input.type, mode: input.mode, workspaceId: input.workspaceId, data: input.data, createdAt: now }))
  yield* notice(engine, OUTBOX_CHANNEL, 'due')
  return { id, type: input.type, timestamp: iso(now), mode: input.mode, data: input.data }
}

/**
 * publish() for hot paths that write thousands of events a second (click flushes): the same row through
 * one statement prepared once. Call it inside the caller's transaction on the same connection.
 */
export function preparedPublisher(db: Db) {
  const insert = preparedEventInsert(db)
  return (input: PublishInput, now: number): string => {
    if (!EVENT_TYPES.has(input.type)) throw new Error(`unknown event type "${input.type}": add it to the catalogue`)
    const id = sortableId('evt', now)
    insert({ id, type: input.type, mode: input.mode, workspaceId: input.workspaceId, data: input.data, createdAt: now })
    return id
  }
}

/**
 * Something that reacts to events (webhook fan-out, forwarding sessions, REST hooks). It runs inside the
 * dispatch transaction, so the work it records (deliveries, jobs) commits together with the event being
 * marked dispatched: never lost, never fanned out twice.
 */
export type OutboxConsumer = (tx: Tx, event: OutboxEvent, now: number) => void

const CURSOR = 'dispatch'

/** The seq of the last event handed to consumers (0 before the first). */
export function dispatchedUpTo(db: Tx): number {
  return cursorAt(db, CURSOR)
}

/** Whether any event waits for dispatch: plain reads, so an idle worker need not take the write lock. */
export function hasPendingEvents(db: Db): boolean {
  return anyEventAfterCursor(db, CURSOR)
}

/** Deletes dispatched events created before `before`; answers how many. */
export function pruneDispatched(db: Tx, before: number): number {
  return deleteEvents(db, dispatchedUpTo(db), before)
}

/**
 * Hands pending events, oldest first, to every consumer and moves the cursor past them; answers how many
 * were dispatched. With no consumer at all the cursor simply jumps to the newest event: nobody was
 * listening when they happened.
 */
export function dispatchOutbox(db: Tx, consumers: readonly OutboxConsumer[], now: number, limit = 200): number {
  const from = dispatchedUpTo(db)
  if (!consumers.length) {
    const last = lastSeq(db)
    if (last <= from) return 0
    moveCursor(db, CURSOR, last, now)
    return last - from
  }
  const rows = eventsAfter(db, from, limit)
  if (!rows.length) return 0
  for (const row of rows) {
    const event = toOutboxEvent(row)
    for (const consume of consumers) consume(db, event, now)
  }
  moveCursor(db, CURSOR, rows.at(-1)!.seq, now)
  return rows.length
}

/** What the job worker drains on each pass: the outbox of the engine the runtime serves from. */
export interface OutboxDrain {
  drain(): void | Promise<void>
}

const DISPATCH_BATCH = 200

export interface SqliteOutbox extends OutboxDrain {
  /** Adds a consumer; each event reaches the consumers in the order they were added. */
  consume(consumer: OutboxConsumer): void
}

/**
 * Drains the outbox, one IMMEDIATE transaction per batch. IMMEDIATE because the transaction reads and
 * then writes: a deferred one would start on a read snapshot and fail with SQLITE_BUSY when another
 * process (the CLI) committed meanwhile, instead of waiting for the lock. One transaction per batch keeps
 * the write lock short and keeps the batches already dispatched when a later one fails. Bounded per pass:
 * under a steady stream of events (clicks) an unbounded loop would chase the writer for the lock forever.
 * Full batches continue; a partial one, or the cursor jump made when nobody consumes, ends the pass.
 */
export function sqliteOutbox(db: Db, consumers: OutboxConsumer[], now: () => number): SqliteOutbox {
  return {
    consume(consumer) {
      consumers.push(consumer)
    },
    drain() {
      for (let pass = 0; pass < 25 && hasPendingEvents(db); pass++) {
        const dispatched = db.transaction((tx) => dispatchOutbox(tx, consumers, now(), DISPATCH_BATCH), { behavior: 'immediate' })
        if (!consumers.length || dispatched < DISPATCH_BATCH) break
      }
    },
  }
}

/** A stored outbox row as consumers see it. */
export function toOutboxEvent(row: StoredEvent): OutboxEvent {
  return {
    seq: row.seq,
    workspaceId: row.workspaceId,
    envelope: { id: row.id, type: row.type, timestamp: iso(row.createdAt), mode: row.mode, data: row.data },
  }
}
