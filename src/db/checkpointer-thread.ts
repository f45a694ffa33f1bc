// The checkpoint thread: copies the WAL back into the database file on a connection of its own, every
// interval, so that neither the click writer nor a request ever waits for a checkpoint's writes and fsyncs.
import { Database } from 'bun:sqlite'

declare const self: Worker

type Message = { type: 'init'; path: string; intervalMs: number } | { type: 'close'; id: number }

let sqlite: Database | null = null
let timer: ReturnType<typeof setInterval> | undefined

function checkpoint() {
  try {
    // PASSIVE: copies what no reader still needs and never waits for (or blocks) a writer. With nothing
    // new in the WAL it returns at once, without syncing.
    sqlite?.query('PRAGMA wal_checkpoint(PASSIVE)').get()
  } catch (err) {
    postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) })
  }
}

self.onmessage = (e: MessageEvent<Message>) => {
  const msg = e.data
  if (msg.type === 'init') {
    sqlite = new Database(msg.path, { strict: true })
    // NORMAL, as every connection of lnk: a checkpoint syncs the WAL before copying and the database after.
    sqlite.exec('PRAGMA synchronous = NORMAL')
    sqlite.exec('PRAGMA wal_autocheckpoint = 0')
    timer = setInterval(checkpoint, msg.intervalMs)
    return
  }
  clearInterval(timer)
  sqlite?.close(true)
  sqlite = null
  postMessage({ type: 'closed', id: msg.id })
}
