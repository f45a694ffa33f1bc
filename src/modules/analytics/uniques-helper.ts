// Measuring unique visitors on two threads (SQLite). A question ranking many links by unique visitors
// spends most of its time reading sketch rows and raw visitors, and a SQLite connection reads synchronously
// on the thread that holds it. The uniques thread (uniques-thread.ts) measures half of each round's links
// on a read-only connection of its own while the request thread measures the other half, so on two cores a
// round takes about half as long. PostgreSQL has no such thread: its reads are awaited.
import type { Logger } from '../../platform/log'
import { threadEntry } from '../../platform/thread-entry'
import type { Segment } from './plan'

export interface UniquesHelper {
  /** The estimated unique visitors of each link, in the order of `ids`; rejects when the thread cannot answer. */
  measure(ids: readonly string[], segments: readonly Segment[]): Promise<number[]>
  close(): Promise<void>
}

type Reply = { type: 'uniques'; id: number; uniques: number[] } | { type: 'error'; id?: number; message: string } | { type: 'closed' }

/**
 * The thread starts on first use, so a server never asked such a question never runs it. Once it has failed
 * or been closed, every call rejects and the caller measures on its own thread.
 */
export function uniquesThread(dbPath: string, log: Logger, cacheMb: number): UniquesHelper {
  let worker: Worker | null = null
  let ended: Error | null = null
  let next = 0
  const pending = new Map<number, { resolve: (v: number[]) => void; reject: (e: Error) => void }>()
  let closed: (() => void) | undefined

  const end = (err: Error) => {
    ended ??= err
    for (const p of pending.values()) p.reject(err)
    pending.clear()
    closed?.()
  }
  const fail = (message: string) => {
    if (!ended) log.error('uniques thread failed; unique visitors are measured on the request thread', { error: message })
    end(new Error(message))
  }
  const start = () => {
    const w = new Worker(threadEntry('modules/analytics/uniques-thread.ts'))
    w.addEventListener('message', (e: MessageEvent<Reply>) => {
      const r = e.data
      if (r.type === 'closed') return closed?.()
      // An error without an id is the thread's own (its connection could not be opened): it answers no more.
      if (r.type === 'error' && r.id === undefined) return fail(r.message)
      const p = pending.get(r.id!)
      if (!p) return
      pending.delete(r.id!)
      if (r.type === 'uniques') p.resolve(r.uniques)
      else p.reject(new Error(r.message))
    })
    w.addEventListener('error', (e) => fail((e as ErrorEvent).message || 'worker error'))
    w.postMessage({ type: 'init', path: dbPath, cacheMb })
    log.info('uniques thread started')
    return w
  }

  return {
    measure(ids, segments) {
      if (ended) return Promise.reject(ended)
      const w = (worker ??= start())
      const id = ++next
      return new Promise<number[]>((resolve, reject) => {
        pending.set(id, { resolve, reject })
        w.postMessage({ type: 'measure', id, ids, segments })
      })
    },
    async close() {
      const w = worker
      const running = w !== null && !ended
      end(new Error('the uniques thread is closed'))
      if (!w) return
      if (running) {
        // The thread answers what it was asked before it closes its connection.
        await new Promise<void>((resolve) => {
          closed = resolve
          w.postMessage({ type: 'close' })
        })
      }
      w.terminate()
    },
  }
}
