// Checkpoints off the write paths (the server on SQLite). In WAL mode a commit only appends to the WAL; a
// checkpoint later copies the pages back into the database file and syncs it. Done by the committing
// connection (SQLite's default), that copy and its fsyncs stall whoever committed: the click writer for a
// fifth of its time under load, or a request. Here a thread of its own does it, and the connections of
// the process are opened with checkpoints: 'background' (client.ts), which leaves them only a backstop.
//
// The backstop matters under sustained writes: a passive checkpoint never waits for writers, and the WAL
// starts over from its beginning only when a checkpoint has copied all of it before the next commit. A
// writer committing back to back can keep that from happening, and the WAL would grow; past the backstop
// the committing connection checkpoints itself (little is left to copy by then), and the WAL starts over.
import type { Logger } from '../platform/log'
import { threadEntry } from '../platform/thread-entry'
import { AUTO_CHECKPOINT_PAGES } from './client'

export interface Checkpointer {
  close(): Promise<void>
}

type Reply = { type: 'error'; message: string } | { type: 'closed' }

/** Checkpoint once this many pages (4 KiB) wait, and at least every `everyMs` while any do. */
export function startCheckpointer(path: string, log: Logger, options: { pages?: number; everyMs?: number } = {}): Checkpointer {
  const worker = new Worker(threadEntry('db/checkpointer-thread.ts'))
  let failing = false
  let dead = false
  let closing: Promise<void> | undefined
  let closed: (() => void) | undefined
  worker.addEventListener('message', (e: MessageEvent<Reply>) => {
    if (e.data.type === 'closed') return closed?.()
    // Logged once: a locked or vanished file would fail at every check.
    if (!failing) log.error('checkpoint failed; connections checkpoint as they commit past the backstop', { error: e.data.message })
    failing = true
  })
  worker.addEventListener('error', (e) => {
    dead = true
    log.error('checkpoint thread failed; connections checkpoint as they commit past the backstop', { error: (e as ErrorEvent).message || 'worker error' })
    closed?.()
  })
  worker.postMessage({ type: 'init', path, pages: options.pages ?? AUTO_CHECKPOINT_PAGES, everyMs: options.everyMs ?? 1_000 })
  return {
    close() {
      closing ??= new Promise<void>((resolve) => {
        if (dead) return resolve()
        closed = resolve
        worker.postMessage({ type: 'close' })
      }).then(() => worker.terminate())
      return closing
    },
  }
}
