// Periodic sweeps on several nodes sharing one PostgreSQL: every node runs the same croner triggers
// (periodic.ts), and only the node holding the sweep lock, a session-level advisory lock, enqueues their
// jobs. Whichever worker claims a job then runs it, once (repo-claim.ts).
//
// Why a session lock on a connection of its own. A transaction-level lock (pg_try_advisory_xact_lock) is
// released at commit, so it only keeps two nodes from triggering at the same instant: a node whose clock
// ticks 50 ms later finds it free and triggers again. A session lock taken on an ordinary pooled query
// would stay with whichever connection ran it, leak to unrelated queries, and vanish when the pool closes
// that connection as idle. So the holder reserves one connection and keeps it; other nodes only borrow one
// for each check. Leadership is re-checked at every trigger, on that connection: "held" means this session
// holds the lock right now (pg_locks), so a connection that died and was replaced is noticed.
//
// When the holder dies, its session ends and PostgreSQL releases the lock: at once when the process is
// killed (the kernel closes the socket), within ~25 s when the machine or the network vanishes (the TCP
// keepalives set below; the server's default is hours), or at idle_session_timeout, disabled here since
// the connection idles between ticks. The next check on another node takes it. Two nodes may each believe
// they hold it for the moment between the holder's last check and its loss: harmless, since a trigger only
// enqueues a job under the task's unique key, and one job waits at most.
import type { ReservedSQL, SQL } from 'bun'
import { holdSessionLockPg, keepLockSessionPg, releaseSessionLockPg } from './repo-sweep-lock-pg'
import type { TriggerGate } from './periodic'

/** The sweep lock's key: any fixed 64-bit number no other lock of lnk uses ("lnk_swp"). */
export const SWEEP_LOCK = 0x6c6e6b5f737770n

export interface SweepLock extends TriggerGate {
  /** Whether this node holds the lock now, taking it when it is free. */
  hold(): Promise<boolean>
  /** Gives the lock up (its session ends), so another node takes it at its next check. Close it before the pool: the pool's close() waits for the connection the lock holds. */
  close(): Promise<void>
}

export function createSweepLock(sql: SQL, key: bigint = SWEEP_LOCK): SweepLock {
  let conn: ReservedSQL | null = null
  let closed = false
  // One check at a time: two at once would each reserve a connection.
  let chain: Promise<unknown> = Promise.resolve()

  const drop = async () => {
    const c = conn
    conn = null
    // Closed, not released: a session that may hold the lock must end, not go back to the pool.
    await c?.close().catch(() => {})
  }

  const check = async (): Promise<boolean> => {
    if (!conn) {
      conn = await sql.reserve()
      await keepLockSessionPg(conn)
    }
    // "Held" by this session right now: a connection that died and was replaced is noticed.
    if (await holdSessionLockPg(conn, key)) return true
    // Not ours: the connection goes back to the pool, so nodes that do not lead pin none.
    const c = conn
    conn = null
    await c.release()
    return false
  }

  return {
    hold() {
      const run = chain.then(async () => {
        if (closed) return false
        try {
          return await check()
        } catch {
          // The connection failed (the server ended the session, the network dropped): whatever lock it held
          // went with it. One try on a fresh connection answers whether this node can take it now.
          await drop()
          try {
            return await check()
          } catch (err) {
            await drop()
            throw err
          }
        }
      })
      chain = run.catch(() => {})
      return run
    },
    async close() {
      closed = true
      await chain
      // Unlocked first: the session ends some moments after its connection closes, and the next node to
      // check should not find the lock still taken.
      if (conn) await releaseSessionLockPg(conn, key).catch(() => {})
      await drop()
    },
  }
}
