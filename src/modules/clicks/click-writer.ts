// Where flushed clicks are written: inline on the calling thread (tests, tools), or on a thread of their
// own with its own SQLite connection (the server), so click writes never hold up redirects.
import type { CheckpointMode } from '../../db/client'
import type { LogLevel } from '../../platform/config'
import type { Logger } from '../../platform/log'
import { threadCalls } from '../../platform/thread-calls'
import { threadEntry } from '../../platform/thread-entry'
import type { ClickBatch, ClicksRepo } from './port'

export interface ClickWriter {
  write(batch: ClickBatch, now: number): Promise<void>
  close(): Promise<void>
}

export const inlineClickWriter = (repo: Pick<ClicksRepo, 'writeBatch'>): ClickWriter => ({
  write: (batch, now) => repo.writeBatch(batch, now),
  close: async () => {},
})

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
  const calls = threadCalls(worker, (err) => log.error('click writer thread failed; writing clicks on the main thread', { error: err.message }))
  let closing: Promise<void> | undefined
  // The thread builds its own enricher (IP database, caches) from the same settings as the main thread's.
  worker.postMessage({
    type: 'init',
    dbPath,
    visitorKey: visitorKey.toString('base64'),
    baseUrl: options.baseUrl,
    geoipPath: options.geoipPath ?? null,
    logLevel: options.logLevel ?? 'info',
    checkpoints: options.checkpoints ?? 'auto',
  })

  return {
    write(batch, now) {
      if (calls.failed) return fallback.write(batch, now)
      // As one JSON string: structured cloning thousands of small objects costs the sending thread more.
      return calls.call({ type: 'batch', json: JSON.stringify(batch), now })
    },
    close() {
      // Once: a second close would wait for an answer from a thread already gone.
      closing ??= (async () => {
        if (!calls.failed) await calls.call({ type: 'close' }).catch(() => undefined)
        worker.terminate()
      })()
      return closing
    },
  }
}
