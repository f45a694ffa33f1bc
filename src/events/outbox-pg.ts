// The outbox's dispatch on PostgreSQL: outbox.ts's dispatchOutbox with the same meaning (events handed to
// every consumer once, in seq order, the consumers' writes committed with the cursor's move), made safe for
// several nodes dispatching at once and for concurrent publishers. The statements are in repo-outbox-pg.ts.
//
// Two hazards SQLite's single writer never had:
// - Two dispatchers. Each batch locks the cursor row (FOR UPDATE) first, so dispatchers queue and each reads
//   the events after where the previous one left the cursor.
// - Seq order is not commit order. The identity sequence hands out seqs as INSERTs run, and transactions
//   commit in any order: seq 7 may still be in flight when seq 8 is visible, or never come (rolled back). A
//   cursor moved past 8 then would lose 7 for good. So a batch takes only events with no unsettled hole below
//   them: the run that follows the cursor without a hole, and past a hole only once it is final. A hole is
//   final when every transaction that could still fill it has ended: read the highest seq handed out (H),
//   then the transactions holding a write lock on the outbox (each one that drew a seq <= H is among them, as
//   an INSERT locks the table before it draws); once those have ended, seqs <= H are final, visible if
//   committed and gone otherwise. An in-flight hole usually fills within milliseconds (its publisher's
//   commit notice wakes the dispatcher again); a rolled-back one settles as soon as the transactions seen
//   writing have ended, however busy the outbox stays.
//
// Guarantee: every committed event is handed to the consumers exactly once, in seq order, by whichever node
// dispatches, provided the outbox is written only through publishPg (INSERTs drawing from the identity
// sequence, CACHE 1 as migrated). An event whose transaction outlives the settle wait delays the events after
// it (never skipped) until a later pass.
import type { PgDb, PgTx } from '../db/pg/client'
import { toOutboxEvent, type OutboxDrain, type OutboxEvent } from './outbox'
import { anyEventAfterCursorPg, cursorAtPg, deleteEventsPg, eventsAfterPg, lastSeqPg, lockCursorPg, moveCursorPg, outboxWritersPg, seqHandedOutPg } from './repo-outbox-pg'

/** outbox.ts's OutboxConsumer on PostgreSQL: it runs inside the dispatch transaction, so its writes commit with the cursor's move. */
export type OutboxConsumerPg = (tx: PgTx, event: OutboxEvent, now: number) => Promise<void>

const CURSOR = 'dispatch'

export interface DispatchOptionsPg {
  /** Events per transaction. */
  limit?: number
  /** How long a pass waits for the transactions that may still fill a hole before leaving it to a later pass. */
  settleMs?: number
}

/** The seq of the last event handed to consumers (0 before the first). */
export function dispatchedUpToPg(db: PgTx): Promise<number> {
  return cursorAtPg(db, CURSOR)
}

/** Whether any committed event waits for dispatch: a plain read, no lock. */
export function hasPendingEventsPg(db: PgTx): Promise<boolean> {
  return anyEventAfterCursorPg(db, CURSOR)
}

/** Deletes dispatched events created before `before`; answers how many. The cursor only passes final seqs, so nothing at or below it can still arrive. */
export async function pruneDispatchedPg(db: PgTx, before: number): Promise<number> {
  return deleteEventsPg(db, await dispatchedUpToPg(db), before)
}

/**
 * Hands pending events, oldest first, to every consumer and moves the cursor past them, one transaction per
 * batch; answers how many were dispatched (fewer than `limit` when a hole still in flight stops the batch).
 * With no consumer at all the cursor jumps to the newest committed event, as on SQLite: nobody was listening
 * when they happened.
 */
export async function dispatchPg(db: PgDb, consumers: readonly OutboxConsumerPg[], now: number, options: DispatchOptionsPg = {}): Promise<number> {
  const limit = options.limit ?? 200
  const first = await db.transaction((tx) => dispatchBatch(tx, consumers, now, limit, 0))
  if (!first.stoppedAtHole || first.count >= limit) return first.count
  // Settled outside any transaction: no connection or cursor lock is held while waiting.
  const settled = await settledSeq(db, options.settleMs ?? 1000)
  if (settled === null) return first.count
  const second = await db.transaction((tx) => dispatchBatch(tx, consumers, now, limit - first.count, settled))
  return first.count + second.count
}

/** One batch under the cursor's lock; seqs at or below `settled` are known final, so holes there are skipped. */
async function dispatchBatch(tx: PgTx, consumers: readonly OutboxConsumerPg[], now: number, limit: number, settled: number) {
  const from = await lockCursorPg(tx, CURSOR, now)
  if (!consumers.length) {
    const last = await lastSeqPg(tx)
    if (last <= from) return { count: 0, stoppedAtHole: false }
    await moveCursorPg(tx, CURSOR, last, now)
    return { count: last - from, stoppedAtHole: false }
  }
  const rows = await eventsAfterPg(tx, from, limit)
  let next = from + 1
  let count = 0
  for (const row of rows) {
    // A hole of seqs next..row.seq-1 lies below this event: stop unless all of them are final.
    if (row.seq !== next && row.seq - 1 > settled) break
    const event = toOutboxEvent(row)
    for (const consume of consumers) await consume(tx, event, now)
    next = row.seq + 1
    count++
  }
  if (count) await moveCursorPg(tx, CURSOR, next - 1, now)
  return { count, stoppedAtHole: count < rows.length }
}

/**
 * The highest seq below which every hole is final, once the transactions writing the outbox now have ended;
 * null when some are still running after `waitMs`. Read in this order: a seq drawn before H was read belongs
 * to a transaction that had already locked the table, so it is still listed or has ended.
 */
async function settledSeq(db: PgDb, waitMs: number): Promise<number | null> {
  const handedOut = await seqHandedOutPg(db)
  let waiting = new Set(await outboxWritersPg(db))
  const deadline = performance.now() + waitMs
  for (let pause = 1; waiting.size; pause = Math.min(pause * 2, 50)) {
    if (performance.now() >= deadline) return null
    await Bun.sleep(pause)
    // Only those seen at first count: writers that started since drew seqs above H.
    const still = new Set(await outboxWritersPg(db))
    waiting = new Set([...waiting].filter((vxid) => still.has(vxid)))
  }
  return handedOut
}

/** The worker's drain on PostgreSQL: full batches continue, up to 25 a pass, as on SQLite. */
export function pgOutbox(db: PgDb, consumers: readonly OutboxConsumerPg[], now: () => number): OutboxDrain {
  return {
    async drain() {
      for (let pass = 0; pass < 25 && (await hasPendingEventsPg(db)); pass++) {
        const dispatched = await dispatchPg(db, consumers, now())
        if (!consumers.length || dispatched < DRAIN_BATCH) break
      }
    },
  }
}

const DRAIN_BATCH = 200
