// Both engines side by side for the repo tests (issue 18): a migrated SQLite file in a temp dir and a migrated
// PostgreSQL database of its own, so one script can run against a repo's SQLite and PostgreSQL
// implementations and compare what each answers.
import type { SQL } from 'bun'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase, type DbHandle } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { pgDrizzle, type PgDb } from '../../src/db/pg/client'
import { openPostgres } from '../../src/db/pg/connect'
import { migratePostgres } from '../../src/db/pg/migrate'
import { tempDir } from '../helpers'
import { createTestDatabase } from './postgres'

export interface Engines {
  sqlite: DbHandle
  /** Bun's client on the test database, for raw reads in assertions. */
  sql: SQL
  pg: PgDb
  close(): Promise<void>
}

export async function openEngines(): Promise<Engines> {
  const dir = tempDir('lnk-engines-')
  const sqlite = openDatabase(join(dir, 'lnk.db'))
  migrate(sqlite.sqlite)
  const database = await createTestDatabase()
  const sql = await openPostgres(database.url, { max: 4 })
  await migratePostgres(sql)
  return {
    sqlite,
    sql,
    pg: pgDrizzle(sql),
    async close() {
      sqlite.close()
      rmSync(dir, { recursive: true, force: true })
      await sql.close()
      await database.drop()
    },
  }
}
