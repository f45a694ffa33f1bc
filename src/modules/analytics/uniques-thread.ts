// The uniques thread: measures the unique visitors of links (uniques.ts) on a read-only connection of its
// own, while the request thread measures others of the same question (uniques-helper.ts).
import { openReader, type Connection } from '../../db/client'
import type { Segment } from './plan'
import { createAnalyticsRepo, type AnalyticsRepo } from './repo'
import { linkUniques } from './uniques'

declare const self: Worker

type Message = { type: 'init'; path: string; cacheMb: number } | { type: 'measure'; id: number; ids: string[]; segments: Segment[] } | { type: 'close' }

let sqlite: Connection | null = null
let repo: AnalyticsRepo | null = null

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err))

self.onmessage = async (e: MessageEvent<Message>) => {
  const msg = e.data
  if (msg.type === 'init') {
    try {
      sqlite = openReader(msg.path, msg.cacheMb)
      repo = createAnalyticsRepo(sqlite)
    } catch (err) {
      postMessage({ type: 'error', message: messageOf(err) })
    }
    return
  }
  if (msg.type === 'measure') {
    try {
      postMessage({ type: 'uniques', id: msg.id, uniques: await linkUniques(repo!, msg.ids, msg.segments) })
    } catch (err) {
      postMessage({ type: 'error', id: msg.id, message: messageOf(err) })
    }
    return
  }
  sqlite?.close(true)
  sqlite = null
  postMessage({ type: 'closed' })
}
