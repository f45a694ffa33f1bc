// Where flushed clicks are written: inline on the calling thread (tests, tools), or on a thread of their
// own with its own SQLite connection (the server), so click writes never hold up redirects.
import type { CheckpointMode } from '../../db/client'
import type { LogLevel } from '../../platform/config'
import type { Logger } from '../../platform/log'
import { threadEntry } from '../../platform/thread-entry'
import type { ClickBatch, ClicksRepo } from './repo'

export interface ClickWriter {
  write(batch: ClickBatch, now: number): Promise<void>
  close(): Promise<void>
}

export const inlineClickWriter = (repo: Pick<ClicksRepo, 'writeBatch'>): ClickWriter => ({
  write: (batch, now) => repo.writeBatch(batch, now),
  close: async () => {},
})

type Reply = { id: number; ok: true } | { id: number; ok: false; error: string }

/**
 * A worker thread running click-writer-thread.ts on the same database file. Should the thread fail, writes
 * fall back to `fallback` on the calling thread: clicks are never dropped.
 */
export function threadClickWriter(
  dbPath: string,
  visitorKey: Buffer,
  fallback: ClickWriter,
  log: Logger,
  options: { baseUrl: string; geoipPath?: string | null; logLevel?: LogLevel; checkpoints?: CheckpointMode },
): ClickWriter {
  const worker = new Worker(threadEntry('modules/clicks/click-writer-thread.ts'))
  const pending = new Map<number, { resolve: () => void; reject: (e: Error) => void }>()
  let next = 0
  let broken: Error | null = null
  let closing: Promise<void> | undefined

  const failAll = (err: Error) => {
    broken = err
    log.error('click writer thread failed; writing clicks on the main thread', { error: err.message })
    for (const p of pending.values()) p.reject(err)
    pending.clear()
  }
  worker.addEventListener('message', (e: MessageEvent<Reply>) => {
    const p = pending.get(e.data.id)
    if (!p) return
    pending.delete(e.data.id)
    if (e.data.ok) p.resolve()
    else p.reject(new Error(e.data.error))
  })
  worker.addEventListener('error', (e) => failAll(new Error((e as ErrorEvent).message || 'worker error')))
  // The thread builds its own enricher (IP database, caches) from the same settings as the main thread's.
  worker.postMessage({ type: 'init', dbPath, visitorKey: visitorKey.toString('base64'), baseUrl: options.baseUrl, geoipPath: options.geoipPath ?? null, logLevel: options.logLevel ?? 'info', checkpoints: options.checkpoints ?? 'auto' })

  return {
    write(batch, now) {
      if (broken) return fallback.write(batch, now)
      const id = ++next
      return new Promise<void>((resolve, reject) => {
        pending.set(id, { resolve, reject })
        // As one JSON string: structured cloning thousands of small objects costs the sending thread more.
        worker.postMessage({ type: 'batch', id, json: JSON.stringify(batch), now })
      })
    },
    close() {
      // Once: a second close would wait for an answer from a thread already gone.
      closing ??= (async () => {
        if (!broken) {
          const id = ++next
          await new Promise<void>((resolve, reject) => {
            pending.set(id, { resolve, reject })
            worker.postMessage({ type: 'close', id })
          }).catch(() => undefined)
        }
        worker.terminate()
      })()
      return closing
    },
  }
}
