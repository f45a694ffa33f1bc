// Measuring unique visitors on two threads (SQLite). A question ranking many links by unique visitors
// spends most of its time reading sketch rows and raw visitors, and a SQLite connection reads synchronously
// on the thread that holds it. The uniques thread (uniques-thread.ts) measures half of each round's links
// on a read-only connection of its own while the request thread measures the other half, so on two cores a
// round takes about half as long. PostgreSQL has no such thread: its reads are awaited.
import type { Logger } from '../../platform/log'
import { threadCalls, type ThreadCalls } from '../../platform/thread-calls'
import { threadEntry } from '../../platform/thread-entry'
import type { Segment } from './plan'

export interface UniquesHelper {
  /** The estimated unique visitors of each link, in the order of `ids`; rejects when the thread cannot answer. */
  measure(ids: readonly string[], segments: readonly Segment[]): Promise<number[]>
  close(): Promise<void>
}

/**
 * The thread starts on first use, so a server never asked such a question never runs it. Once it has failed
 * or been closed, every call is refused and the caller measures on its own thread.
 */
export function uniquesThread(dbPath: string, log: Logger, cacheMb: number): UniquesHelper {
  let thread: { worker: Worker; calls: ThreadCalls } | null = null
  let closed: Error | null = null

  const start = () => {
    const worker = new Worker(threadEntry('modules/analytics/uniques-thread.ts'))
    const calls = threadCalls(worker, (err) => log.error('uniques thread failed; unique visitors are measured on the request thread', { error: err.message }))
    // A thread that cannot open its connection serves nothing.
    calls.call({ type: 'init', path: dbPath, cacheMb }).catch((err: Error) => calls.fail(err))
    log.info('uniques thread started')
    return { worker, calls }
  }

  return {
    measure(ids, segments) {
      if (closed) return Promise.reject(closed)
      thread ??= start()
      return thread.calls.call<number[]>({ type: 'measure', ids, segments })
    },
    async close() {
      closed ??= new Error('the uniques thread is closed')
      const t = thread
      thread = null
      if (!t) return
      // The thread answers what it was asked before it closes its connection.
      if (!t.calls.failed) await t.calls.call({ type: 'close' }).catch(() => undefined)
      t.worker.terminate()
    },
  }
}
