// `lnk admin backup`: an online copy of the SQLite file (VACUUM INTO); on PostgreSQL the pg_dump to run.
import { existsSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { backupDatabase } from '../../db/backup'
import { DB_FILE } from '../../db/client'
import { usePgDump } from '../../db/transfer-errors'
import { iso } from '../../platform/clock'
import { AppError } from '../../platform/errors'
import type { AdminCommand } from './shared'

export const backup: AdminCommand = {
  name: 'backup',
  usage: 'FILE [--json]',
  summary: 'Write a consistent copy of the SQLite database to FILE (safe while the server runs).',
  details: `Writes a consistent copy of the database to FILE with VACUUM INTO. Safe while the server runs: readers
and writers carry on. FILE must not exist yet. Restore by stopping lnk and putting FILE in place of
<data dir>/lnk.db (remove lnk.db-wal and lnk.db-shm beside it). With a PostgreSQL database
(--database-url / LNK_DATABASE_URL) it refuses and prints the pg_dump command to run instead.`,
  options: { json: { type: 'boolean' } },
  positionals: 1,
  async run({ values, positionals, config, out }) {
    const target = resolve(positionals[0]!)
    if (config.databaseUrl) throw usePgDump(config.databaseUrl, target)
    const source = resolve(config.dataDir, DB_FILE)
    if (!existsSync(source)) throw new AppError('not_found', `no database at ${source}; check --data-dir / LNK_DATA_DIR`)
    if (existsSync(target)) throw new AppError('conflict', `${target} already exists; choose a new file name`)
    if (!existsSync(dirname(target))) throw new AppError('not_found', `directory ${dirname(target)} does not exist`)
    backupDatabase(source, target)
    const bytes = statSync(target).size
    out(values.json === true ? JSON.stringify({ file: target, bytes, createdAt: iso(Date.now()) }) : `Backup written to ${target} (${bytes} bytes)`)
    return 0
  },
}
