// The click-writer thread: its own SQLite connection and enricher, writing the batches the main thread posts.
import type { LogLevel } from '../../platform/config'
import { openDatabase, type CheckpointMode, type DbHandle } from '../../db/client'
import { registerEvents } from '../../events/catalogue'
import { createLogger } from '../../platform/log'
import { answer } from '../../platform/thread-calls'
import { createEnricher } from '../analytics'
import { LINK_EVENTS } from '../links/model'
import type { ClicksRepo } from './port'
import { createClickFlush } from './repo-sqlite'

declare const self: Worker

// A thread loads its own copy of every module, so the runtime's registrations are not seen here: the event
// this thread writes (link.clicked) is registered again.
registerEvents(LINK_EVENTS)

type Message =
  | { type: 'init'; dbPath: string; visitorKey: string; baseUrl: string; geoipPath: string | null; logLevel: LogLevel; checkpoints: CheckpointMode }
  | { type: 'batch'; id: number; json: string; now: number }
  | { type: 'close'; id: number }

let handle: DbHandle | null = null
let repo: Pick<ClicksRepo, 'writeBatch'> | null = null

self.onmessage = async (e: MessageEvent<Message>) => {
  const msg = e.data
  if (msg.type === 'init') {
    handle = openDatabase(msg.dbPath, { checkpoints: msg.checkpoints })
    const log = createLogger(msg.logLevel)
    const enricher = createEnricher({ geoipPath: msg.geoipPath, onError: (message) => log.error(message) })
    repo = createClickFlush(handle.db, Buffer.from(msg.visitorKey, 'base64'), enricher, msg.baseUrl)
    return
  }
  if (msg.type === 'close') {
    // Close without a checkpoint: the main connection checkpoints when it closes.
    return answer(msg.id, () => {
      handle?.sqlite.close(true)
      handle = null
    })
  }
  return answer(msg.id, async () => {
    if (!repo) throw new Error('click writer thread used before init')
    await repo.writeBatch(JSON.parse(msg.json), msg.now)
  })
}
