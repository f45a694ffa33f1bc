// The uniques thread: measures the unique visitors of links (uniques.ts) on a read-only connection of its
// own, while the request thread measures others of the same question (uniques-helper.ts).
import { openReader, type Connection } from '../../db/client'
import { answer } from '../../platform/thread-calls'
import type { Segment } from './plan'
import type { UniquesReads } from './port'
import { createUniquesReads } from './repo-uniques-sqlite'
import { linkUniques } from './uniques'

declare const self: Worker

type Message = { id: number } & ({ type: 'init'; path: string; cacheMb: number } | { type: 'measure'; ids: string[]; segments: Segment[] } | { type: 'close' })

let sqlite: Connection | null = null
let repo: UniquesReads | null = null

self.onmessage = (e: MessageEvent<Message>) => {
  const msg = e.data
  if (msg.type === 'init') {
    return answer(msg.id, () => {
      sqlite = openReader(msg.path, msg.cacheMb)
      repo = createUniquesReads(sqlite)
    })
  }
  if (msg.type === 'measure') return answer(msg.id, () => linkUniques(repo!, msg.ids, msg.segments))
  return answer(msg.id, () => {
    sqlite?.close(true)
    sqlite = null
  })
}
