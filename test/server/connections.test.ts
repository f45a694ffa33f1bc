// Stopping releases every SQLite connection (the click writer's thread, the job worker's) before the main
// one takes the last checkpoint: a connection left lingering would keep the WAL from being folded into
// lnk.db, so a stopped server would leave its data in lnk.db-wal.
import { afterAll, expect, test } from 'bun:test'
import { existsSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { Database } from 'bun:sqlite'
import { createRuntime } from '../../src/runtime'
import { ON_PG, tempDir } from '../helpers'

const dir = tempDir('lnk-connections-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// SQLite storage itself (its WAL and connections); PostgreSQL's shutdown: test/server/lifecycle.test.ts.
test.skipIf(ON_PG)('after the background stops, the last checkpoint completes and no WAL is left', async () => {
  const rt = createRuntime(loadConfig({ LNK_DATA_DIR: dir }), { log: silentLogger, clickWriter: 'thread' })
  rt.start()
  await Bun.sleep(200)
  await rt.close()
  // Storage itself is what this checks: a fresh connection finds nothing left to checkpoint.
  const after = new Database(join(dir, 'lnk.db'))
  expect(after.query('PRAGMA wal_checkpoint(TRUNCATE)').get()).toEqual({ busy: 0, log: 0, checkpointed: 0 })
  after.close()
  const wal = join(dir, 'lnk.db-wal')
  expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true)
})
