// `lnk admin export`: every table to one NDJSON file from one snapshot, on the engine the settings select
// (PostgreSQL when a URL is given, else SQLite under the data dir).
import { statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { DB_FILE } from '../../db/client'
import { openPostgres } from '../../db/pg/connect'
import { pgSource } from '../../db/pg/transfer'
import { exportDatabase, type TransferSummary } from '../../db/transfer'
import { sqliteSource } from '../../db/transfer-sqlite'
import type { AdminCommand } from './shared'
import { reportTransfer } from './transfer'

export const exportData: AdminCommand = {
  name: 'export',
  usage: 'FILE [--database-url URL] [--json]',
  summary: 'Write every table to FILE (NDJSON, gzip if FILE ends in .gz) from one snapshot, SQLite or PostgreSQL.',
  details: `Writes every table of the database to FILE, a new file: the SQLite database under --data-dir, or the
PostgreSQL database of --database-url (LNK_DATABASE_URL). It reads one snapshot (a read transaction on
SQLite, REPEATABLE READ on PostgreSQL), so the server may keep running. The database must be at this lnk's
latest migration.
FILE is NDJSON, gzip-compressed when its name ends in .gz: a header line with the schema and each table's
row count, then one line per row. 'lnk admin import FILE' loads it into either engine.
With --json prints {"file","schema","tables":{name:rows},"rows"}.`,
  options: { json: { type: 'boolean' } },
  positionals: 1,
  async run(c) {
    const file = resolve(c.positionals[0]!)
    const url = c.config.databaseUrl
    const source = url ? pgSource(await openPostgres(url, { max: 1 }), url) : sqliteSource(join(c.config.dataDir, DB_FILE))
    let summary: TransferSummary
    try {
      summary = await exportDatabase(source, file)
    } finally {
      await source.close()
    }
    return reportTransfer(
      summary,
      () => `Exported ${summary.rows} row(s) of ${source.label} to ${file} (${statSync(file).size} bytes, schema ${summary.schema}):`,
      c,
    )
  },
}
