// The checkpoint thread: copies the WAL back into the database file on a connection of its own, so that
// neither the click writer nor a request ever waits for a checkpoint's copying and fsyncs.
//
// When: once ~40 MB of WAL wait to be copied, as SQLite's own automatic checkpoint did (each checkpoint
// copies the hot pages, this hour's rollups and the ends of the indexes, once more: checkpointing more
// often costs the writer CPU it needs under load), and at least every second while anything waits (in WAL
// mode with synchronous NORMAL a commit is durable against a power cut only once a checkpoint synced it).
// How much waits is read from the WAL index's header in the -shm file (sqlite.org/walformat.html: mxFrame,
// the last valid frame, at byte 16; nBackfill, the frames already copied, at byte 96; native byte order),
// a read of 100 bytes that never takes a lock. A torn read only makes one check early or late.
import { Database } from 'bun:sqlite'
import { closeSync, openSync, readSync } from 'node:fs'
import { endianness } from 'node:os'

declare const self: Worker

type Message = { type: 'init'; path: string; pages: number; everyMs: number } | { type: 'close' }

const PROBE_MS = 100
const LE = endianness() === 'LE'

let sqlite: Database | null = null
let shm: number | null = null
let timer: ReturnType<typeof setInterval> | undefined
let last = Date.now()
const header = Buffer.alloc(100)

/** Frames in the WAL not yet copied back; Infinity when the header cannot be read (then check anyway). */
function waiting(): number {
  try {
    if (readSync(shm!, header, 0, 100, 0) < 100) return Number.POSITIVE_INFINITY
    const mxFrame = LE ? header.readUInt32LE(16) : header.readUInt32BE(16)
    const nBackfill = LE ? header.readUInt32LE(96) : header.readUInt32BE(96)
    return Math.max(0, mxFrame - nBackfill)
  } catch {
    return Number.POSITIVE_INFINITY
  }
}

function tick(pages: number, everyMs: number) {
  const n = waiting()
  const now = Date.now()
  if (n === 0 || (n < pages && now - last < everyMs)) return
  last = now
  try {
    // PASSIVE: copies what no reader still needs and never waits for (or blocks) a writer.
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
    // The WAL index exists once a connection has opened the database in WAL mode, as the runtime has.
    shm = openSync(`${msg.path}-shm`, 'r')
    timer = setInterval(() => tick(msg.pages, msg.everyMs), PROBE_MS)
    return
  }
  clearInterval(timer)
  if (shm !== null) closeSync(shm)
  sqlite?.close(true)
  sqlite = null
  postMessage({ type: 'closed' })
}
