// Stopping releases every SQLite connection (the click writer's thread, the job worker's) before the main
// one takes the last checkpoint: a connection left lingering would keep the WAL from being folded into
// lnk.db, so a stopped server would leave its data in lnk.db-wal.
import { afterAll, expect, test } from 'bun:test'
import { existsSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { createRuntime, startBackground } from '../../src/runtime'
import { tempDir } from '../helpers'

const dir = tempDir('lnk-connections-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('after the background stops, the last checkpoint completes and no WAL is left', async () => {
  const rt = createRuntime(loadConfig({ LNK_DATA_DIR: dir }), { log: silentLogger, clickWriter: 'thread' })
  const background = startBackground(rt)
  await Bun.sleep(200)
  await background.stop()
  expect(rt.db.sqlite.query('PRAGMA wal_checkpoint(TRUNCATE)').get()).toEqual({ busy: 0, log: 0, checkpointed: 0 })
  rt.db.close()
  const wal = join(dir, 'lnk.db-wal')
  expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true)
})
