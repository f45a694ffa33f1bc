// `lnk admin import`: an export loaded into an empty database in one transaction, on the engine the
// settings select (PostgreSQL when a URL is given, else SQLite under the data dir).
import { resolve } from 'node:path'
import { openPostgres } from '../../db/pg/connect'
import { pgTarget } from '../../db/pg/transfer'
import { importDatabase } from '../../db/transfer'
import { sqliteTarget } from '../../db/transfer-sqlite'
import type { AdminCommand } from './shared'
import { reportTransfer } from './transfer'

export const importData: AdminCommand = {
  name: 'import',
  usage: 'FILE [--database-url URL] [--json]',
  summary: 'Load an export into an empty database (SQLite under --data-dir, or PostgreSQL), in one transaction.',
  details: `Loads an export of 'lnk admin export' into the SQLite database under --data-dir (created if missing), or
the PostgreSQL database of --database-url (LNK_DATABASE_URL). The target is migrated first and must hold
no data; FILE must come from the same lnk version (its schema is checked). Every row goes in within one
transaction: if anything fails, nothing is imported. Row counts are checked against the file's header.
A refusal (a target with data, another schema) is one line and exit 1. Stop the servers using the target meanwhile.
With --json prints {"file","schema","tables":{name:rows},"rows"}.`,
  options: { json: { type: 'boolean' } },
  positionals: 1,
  async run(c) {
    const file = resolve(c.positionals[0]!)
    const url = c.config.databaseUrl
    let where = ''
    const summary = await importDatabase(file, async () => {
      // The target is opened only once the file's header has been read and accepted.
      const target = url ? pgTarget(await openPostgres(url, { max: 1 }), url) : sqliteTarget(c.config.dataDir)
      where = target.label
      return target
    })
    return reportTransfer(summary, () => `Imported ${summary.rows} row(s) from ${file} into ${where} (schema ${summary.schema}):`, c)
  },
}
