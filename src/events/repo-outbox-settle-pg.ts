// When a hole in the outbox's seqs is final, on PostgreSQL: what the one dispatch (outbox.ts) asks only here,
// since SQLite's single writer commits seqs in order and leaves no hole behind the newest event.
//
// Seq order is not commit order on PostgreSQL. The identity sequence hands out seqs as INSERTs run, and
// transactions commit in any order: seq 7 may still be in flight when seq 8 is visible, or never come (rolled
// back). A cursor moved past 8 then would lose 7 for good. So a batch takes only events with no unsettled hole
// below them: the run that follows the cursor without a hole, and past a hole only once it is final. A hole is
// final when every transaction that could still fill it has ended: read the highest seq handed out (H), then
// the transactions holding a write lock on the outbox (each one that drew a seq <= H is among them, as an
// INSERT locks the table before it draws); once those have ended, seqs <= H are final, visible if committed
// and gone otherwise. An in-flight hole usually fills within milliseconds (its publisher's commit notice wakes
// the dispatcher again); a rolled-back one settles as soon as the transactions seen writing have ended,
// however busy the outbox stays.
import { sql } from 'drizzle-orm'
import { rawRows, type Engine } from '../db/engine'

/**
 * The highest seq the outbox's sequence has handed out, committed or not (sequences are not transactional:
 * every session sees a nextval at once). 0 before the first.
 */
async function seqHandedOut(engine: Engine): Promise<number> {
  const [row] = await engine.run(() =>
    rawRows<{ seq: string | number | null }>(sql`SELECT pg_sequence_last_value(pg_get_serial_sequence('outbox', 'seq')::regclass) AS seq`),
  )
  return Number(row?.seq ?? 0)
}

/**
 * The transactions (virtual ids) of other sessions that hold a write lock on the outbox table right now.
 * An INSERT takes it before it draws its seq and keeps it until its transaction ends, so every transaction
 * still able to commit an event is among them.
 */
async function outboxWriters(engine: Engine): Promise<string[]> {
  const rows = await engine.run(() =>
    rawRows<{ vxid: string }>(sql`SELECT DISTINCT virtualtransaction AS vxid FROM pg_locks
      WHERE locktype = 'relation' AND relation = 'outbox'::regclass AND mode = 'RowExclusiveLock' AND granted
        AND pid IS DISTINCT FROM pg_backend_pid()`),
  )
  return rows.map((r) => r.vxid)
}

/**
 * The highest seq below which every hole is final, once the transactions writing the outbox now have ended;
 * null when some are still running after `waitMs`. Read in this order: a seq drawn before H was read belongs
 * to a transaction that had already locked the table, so it is still listed or has ended. Called outside any
 * transaction, so no connection or cursor lock is held while waiting.
 */
export function settledSeqPg(engine: Engine) {
  return async (waitMs: number): Promise<number | null> => {
    const handedOut = await seqHandedOut(engine)
    let waiting = new Set(await outboxWriters(engine))
    const deadline = performance.now() + waitMs
    for (let pause = 1; waiting.size; pause = Math.min(pause * 2, 50)) {
      if (performance.now() >= deadline) return null
      await Bun.sleep(pause)
      // Only those seen at first count: writers that started since drew seqs above H.
      const still = new Set(await outboxWriters(engine))
      waiting = new Set([...waiting].filter((vxid) => still.has(vxid)))
    }
    return handedOut
  }
}
