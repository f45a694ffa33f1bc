// publish(): the only way an event enters the system. It writes to the outbox inside the caller's
// transaction, so an event exists exactly when the change it reports was committed. The dispatch hands each
// committed event to every consumer once, in seq order, the consumers' writes committed with the cursor's
// move, on either engine: several nodes may dispatch at once on PostgreSQL, where each batch locks the cursor
// row first and waits for holes in the seqs to settle (repo-outbox-settle-pg.ts). The statements are in
// repo-outbox.ts.
import type { Db } from '../db/client'
import { rows, notice, type Builder, type Engine, type Steps } from '../db/engine'
import { driveSync } from '../db/engine/sqlite'
import type { Tx } from '../db/tx'
import { iso } from '../platform/clock'
import { sortableId } from '../platform/random'
import { isRegisteredEvent } from './catalogue'
import { anyEventAfterCursor, cursorAt, deleteEvents, eventsAfter, lastSeq, lockCursor, moveCursor, type StoredEvent } from './repo-outbox'
import { preparedEventInsert } from './repo-outbox-sqlite'
import { settledSeqPg } from './repo-outbox-settle-pg'

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

/**
 * The PostgreSQL channel of "events wait for dispatch". Not an empty payload: the change feed reads that as
 * "every cache may be stale" (db/pg/notify.ts), which would clear every node's caches at each event.
 */
export const OUTBOX_CHANNEL = 'lnk_outbox'

function envelopeOf(input: PublishInput, now: number): EventEnvelope {
  if (!isRegisteredEvent(input.type)) throw new Error(`unknown event type "${input.type}": add it to the events of the module that publishes it`)
  return { id: sortableId('evt', now), type: input.type, timestamp: iso(now), mode: input.mode, data: input.data }
}

/**
 * publish() inside a transaction body (db/engine): the outbox row, and on PostgreSQL the notice that wakes
 * the nodes that dispatch at commit.
 */
export function* publishing(engine: Engine, tx: Builder, input: PublishInput, now: number): Steps<EventEnvelope> {
  const envelope = envelopeOf(input, now)
  yield* rows(
    tx
      .insert(engine.t.outbox)
      .values({ id: envelope.id, type: input.type, mode: input.mode, workspaceId: input.workspaceId, data: input.data, createdAt: now }),
  )
  yield* notice(engine, OUTBOX_CHANNEL, 'due')
  return envelope
}

/** Rows per statement of publishingMany: 6 values a row stays far below either engine's bound on parameters. */
const PUBLISH_CHUNK = 500

/**
 * publishing() for many events of one change (a folder's links moved or deleted with it): the same rows, in
 * order, written a few hundred per statement instead of one, and one notice.
 */
export function* publishingMany(engine: Engine, tx: Builder, inputs: readonly PublishInput[], now: number): Steps<void> {
  for (let i = 0; i < inputs.length; i += PUBLISH_CHUNK) {
    const values = inputs.slice(i, i + PUBLISH_CHUNK).map((input) => {
      const envelope = envelopeOf(input, now)
      return { id: envelope.id, type: input.type, mode: input.mode, workspaceId: input.workspaceId, data: input.data, createdAt: now }
    })
    yield* rows(tx.insert(engine.t.outbox).values(values))
  }
  if (inputs.length) yield* notice(engine, OUTBOX_CHANNEL, 'due')
}

/** publish() inside a synchronous SQLite transaction, for tests that build the outbox's state directly. */
export function publish(tx: Tx, input: PublishInput, now: number): EventEnvelope {
  return driveSync(tx, (engine, t) => publishing(engine, t, input, now))
}

/**
 * publish() for SQLite's hot paths that write thousands of events a second (click flushes): the same row
 * through one statement prepared once. Call it inside the caller's transaction on the same connection.
 */
export function preparedPublisher(db: Db) {
  const insert = preparedEventInsert(db)
  return (input: PublishInput, now: number): string => {
    const { id } = envelopeOf(input, now)
    insert({ id, type: input.type, mode: input.mode, workspaceId: input.workspaceId, data: input.data, createdAt: now })
    return id
  }
}

/**
 * Something that reacts to events (webhook fan-out, forwarding sessions, REST hooks): a transaction body run
 * inside the dispatch transaction, so the work it records (deliveries, jobs) commits together with the event
 * being marked dispatched: never lost, never fanned out twice.
 */
export type EventConsumer = (tx: Builder, event: OutboxEvent, now: number) => Steps<void>

const CURSOR = 'dispatch'

/** The seq of the last event handed to consumers (0 before the first). */
export const dispatchedUpTo = (engine: Engine): Promise<number> => engine.run((db) => cursorAt(engine, db, CURSOR))

/** Whether any committed event waits for dispatch: a plain read, so an idle worker takes no lock. */
export const hasPendingEvents = (engine: Engine): Promise<boolean> => engine.run((db) => anyEventAfterCursor(engine, db, CURSOR))

/** Deletes dispatched events created before `before`; answers how many. The cursor only passes final seqs. */
export const pruneDispatched = (engine: Engine, before: number): Promise<number> =>
  engine.run(function* (db) {
    return yield* deleteEvents(engine, db, yield* cursorAt(engine, db, CURSOR), before)
  })

/** When holes in the seqs below a seq are final (repo-outbox-settle-pg.ts); absent where seqs commit in order (SQLite). */
export type Settle = (waitMs: number) => Promise<number | null>

/** SQLite's one writer commits seqs in order; PostgreSQL's writers draw them at once and commit in any order. */
export const settleOn = (engine: Engine): Settle | undefined => (engine.name === 'pg' ? settledSeqPg(engine) : undefined)

export interface DispatchOptions {
  /** Events per transaction. */
  limit?: number
  /** How long a pass waits for the transactions that may still fill a hole before leaving it to a later pass. */
  settleMs?: number
}

/**
 * Hands pending events, oldest first, to every consumer and moves the cursor past them, one transaction per
 * batch (IMMEDIATE on SQLite: it reads, then writes, and must wait for the lock rather than fail when another
 * process committed meanwhile); answers how many were dispatched (fewer than `limit` when a hole still in
 * flight stops the batch). With no consumer at all the cursor jumps to the newest event: nobody was
 * listening when they happened.
 */
export async function dispatchOutbox(
  engine: Engine,
  consumers: readonly EventConsumer[],
  now: number,
  settle?: Settle,
  options: DispatchOptions = {},
): Promise<number> {
  const limit = options.limit ?? 200
  // Where seqs commit in order, every hole below the newest event is final (it was pruned or never was).
  const first = await engine.transaction((tx) => dispatchBatch(engine, tx, consumers, now, limit, settle ? 0 : Number.MAX_SAFE_INTEGER), { immediate: true })
  if (!settle || !first.stoppedAtHole || first.count >= limit) return first.count
  const settled = await settle(options.settleMs ?? 1000)
  if (settled === null) return first.count
  const second = await engine.transaction((tx) => dispatchBatch(engine, tx, consumers, now, limit - first.count, settled), { immediate: true })
  return first.count + second.count
}

/** One batch under the cursor's lock; seqs at or below `settled` are known final, so holes there are skipped. */
function* dispatchBatch(engine: Engine, tx: Builder, consumers: readonly EventConsumer[], now: number, limit: number, settled: number) {
  const from = yield* lockCursor(engine, tx, CURSOR, now)
  if (!consumers.length) {
    const last = yield* lastSeq(engine, tx)
    if (last <= from) return { count: 0, stoppedAtHole: false }
    yield* moveCursor(engine, tx, CURSOR, last, now)
    return { count: last - from, stoppedAtHole: false }
  }
  const stored = yield* eventsAfter(engine, tx, from, limit)
  let next = from + 1
  let count = 0
  for (const row of stored) {
    // A hole of seqs next..row.seq-1 lies below this event: stop unless all of them are final.
    if (row.seq !== next && row.seq - 1 > settled) break
    const event = toOutboxEvent(row)
    for (const consume of consumers) yield* consume(tx, event, now)
    next = row.seq + 1
    count++
  }
  if (count) yield* moveCursor(engine, tx, CURSOR, next - 1, now)
  return { count, stoppedAtHole: count < stored.length }
}

/** What the job worker drains on each pass. */
export interface OutboxDrain {
  drain(): void | Promise<void>
}

export interface Outbox extends OutboxDrain {
  /** Adds a consumer; each event reaches the consumers in the order they were added. */
  consume(consumer: EventConsumer): void
}

const DRAIN_BATCH = 200

/**
 * The worker's drain: batches of 200 while any event waits, bounded per pass (under a steady stream of events,
 * clicks, an unbounded loop would chase the writers forever). Full batches continue; a partial one, or the
 * cursor jump made when nobody consumes, ends the pass. One transaction per batch keeps the lock short and
 * keeps the batches already dispatched when a later one fails.
 */
export function createOutbox(engine: Engine, consumers: EventConsumer[], now: () => number): Outbox {
  const settle = settleOn(engine)
  return {
    consume(consumer) {
      consumers.push(consumer)
    },
    async drain() {
      for (let pass = 0; pass < 25 && (await hasPendingEvents(engine)); pass++) {
        const dispatched = await dispatchOutbox(engine, consumers, now(), settle)
        if (!consumers.length || dispatched < DRAIN_BATCH) break
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
