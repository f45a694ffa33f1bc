// The server's checkpoints run on a thread of their own (src/db/checkpointer.ts): what its connections
// commit reaches lnk.db without any of them checkpointing, and a tool's or test's runtime still
// checkpoints as it commits.
import { afterAll, expect, test } from 'bun:test'
import { rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { startCheckpointer } from '../../src/db/checkpointer'
import { openDatabase } from '../../src/db/client'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { createRuntime } from '../../src/runtime'
import { ON_PG, tempDir } from '../helpers'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

const autoCheckpoint = (path: string, checkpoints: 'auto' | 'background') => {
  const h = openDatabase(path, { checkpoints })
  try {
    return (h.sqlite.query('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint
  } finally {
    h.sqlite.close(true)
  }
}

/** Writes ~2 MB in one commit on the runtime's connection: far below either connection's own threshold. */
function writeSomePages(rt: ReturnType<typeof createRuntime>) {
  const { sqlite } = rt.db
  sqlite.exec('CREATE TABLE IF NOT EXISTS filler (x BLOB)')
  const insert = sqlite.prepare('INSERT INTO filler (x) VALUES (?)')
  sqlite.transaction(() => {
    for (let i = 0; i < 500; i++) insert.run(new Uint8Array(4096).fill(i & 255))
  })()
}

// SQLite storage itself: PostgreSQL has no WAL of lnk's to fold.
test.skipIf(ON_PG)("a server's commits reach the database file through the checkpoint thread", async () => {
  const dir = tempDir('lnk-checkpointer-')
  dirs.push(dir)
  const rt = createRuntime(loadConfig({ LNK_DATA_DIR: dir }), { log: silentLogger, clickWriter: 'thread' })
  const file = join(dir, 'lnk.db')
  expect(autoCheckpoint(file, 'background')).toBeGreaterThan(autoCheckpoint(file, 'auto'))
  const before = statSync(file).size
  writeSomePages(rt)
  // The pages are in the WAL until someone copies them back; nothing but the thread does at this size.
  const deadline = Date.now() + 5_000
  while (statSync(file).size < before + 2_000_000 && Date.now() < deadline) await Bun.sleep(50)
  expect(statSync(file).size).toBeGreaterThanOrEqual(before + 2_000_000)
  await rt.close()
})

test.skipIf(ON_PG)("a tool's runtime has no checkpoint thread: its pages stay in the WAL until it closes", async () => {
  const dir = tempDir('lnk-checkpointer-')
  dirs.push(dir)
  const rt = createRuntime(loadConfig({ LNK_DATA_DIR: dir }), { log: silentLogger })
  const file = join(dir, 'lnk.db')
  const before = statSync(file).size
  writeSomePages(rt)
  await Bun.sleep(600)
  expect(statSync(file).size).toBe(before)
  await rt.close()
  expect(statSync(file).size).toBeGreaterThanOrEqual(before + 2_000_000)
})

// The thread checkpoints once `pages` wait (read from the WAL index), or once `everyMs` has passed.
test.skipIf(ON_PG)('the thread checkpoints once enough pages wait, and waits for the interval below that', async () => {
  const dir = tempDir('lnk-checkpointer-')
  dirs.push(dir)
  const file = join(dir, 'lnk.db')
  const db = openDatabase(file, { checkpoints: 'background' })
  const fill = (rows: number) => {
    db.sqlite.exec('CREATE TABLE IF NOT EXISTS filler (x BLOB)')
    const insert = db.sqlite.prepare('INSERT INTO filler (x) VALUES (?)')
    db.sqlite.transaction(() => {
      for (let i = 0; i < rows; i++) insert.run(new Uint8Array(4096).fill(i & 255))
    })()
  }
  const grows = async (from: number, withinMs: number) => {
    const deadline = Date.now() + withinMs
    while (statSync(file).size <= from && Date.now() < deadline) await Bun.sleep(25)
    return statSync(file).size > from
  }
  const few = startCheckpointer(file, silentLogger, { pages: 1_000_000, everyMs: 60_000 })
  let size = statSync(file).size
  fill(300)
  expect(await grows(size, 700)).toBe(false)
  await few.close()

  const many = startCheckpointer(file, silentLogger, { pages: 200, everyMs: 60_000 })
  expect(await grows(size, 2_000)).toBe(true)
  size = statSync(file).size
  fill(40)
  // Some 80-90 pages wait now (a row of 4 KiB spills onto a second page): below 200, so nothing is copied.
  expect(await grows(size, 700)).toBe(false)
  await many.close()

  const timed = startCheckpointer(file, silentLogger, { pages: 1_000_000, everyMs: 300 })
  expect(await grows(size, 2_000)).toBe(true)
  await timed.close()
  db.close()
})
