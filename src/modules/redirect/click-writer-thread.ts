// The click-writer thread: its own SQLite connection, writing the batches the main thread posts.
import { openDatabase, type DbHandle } from '../../db/client'
import { createClicksRepo, type ClickRecord, type ClicksRepo } from './clicks-repo'

declare const self: Worker

type Message =
  | { type: 'init'; dbPath: string; visitorKey: string }
  | { type: 'batch'; id: number; batch: ClickRecord[]; now: number }
  | { type: 'close'; id: number }

let handle: DbHandle | null = null
let repo: ClicksRepo | null = null

self.onmessage = async (e: MessageEvent<Message>) => {
  const msg = e.data
  if (msg.type === 'init') {
    handle = openDatabase(msg.dbPath)
    repo = createClicksRepo(handle.db, Buffer.from(msg.visitorKey, 'base64'))
    return
  }
  if (msg.type === 'close') {
    // Close without a checkpoint: the main connection checkpoints when it closes.
    handle?.sqlite.close()
    handle = null
    postMessage({ id: msg.id, ok: true })
    return
  }
  try {
    if (!repo) throw new Error('click writer thread used before init')
    await repo.writeBatch(msg.batch, msg.now)
    postMessage({ id: msg.id, ok: true })
  } catch (err) {
    postMessage({ id: msg.id, ok: false, error: err instanceof Error ? err.message : String(err) })
  }
}
