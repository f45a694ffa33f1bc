// The SQLite side of export / import (db/transfer-engine.ts): a connection of the command's own, so its
// transactions may wait on the file. An export's read transaction on the WAL file is one snapshot while the
// server keeps writing; an import is one BEGIN IMMEDIATE … COMMIT on a file it migrated first.
import { sql } from 'drizzle-orm'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { DB_FILE, openDatabase, prepareDataDir, type DbHandle } from './client'
import { rawRows, rawRun, type Builder } from './engine'
import { sqliteEngine } from './engine/sqlite'
import { appliedTags, migrate } from './migrate'
import { SCHEMA_TAG } from './transfer'
import { engineSource, engineTarget, type TransferEngine } from './transfer-engine'
import { noDatabase } from './transfer-errors'
import type { TableSpec, TransferSource, TransferTarget } from './transfer-tables'

function sqliteSide(handle: DbHandle, label: string, close: () => void): TransferEngine {
  return {
    engine: sqliteEngine(handle.db, { ownConnection: true }),
    label,
    latestTag: SCHEMA_TAG,
    appliedTag: async () => appliedTags(handle.sqlite).at(-1) ?? null,
    migrate: async () => void migrate(handle.sqlite),
    *sequence(_tx: Builder, table: TableSpec) {
      const [stored] = yield* rawRows<{ seq: number }>(sql`SELECT seq FROM sqlite_sequence WHERE name = ${table.name}`)
      return stored?.seq ?? 0
    },
    *advanceSequence(_tx: Builder, table: TableSpec, atLeast: number) {
      // sqlite_sequence has a row per AUTOINCREMENT table once it had one insert, and no unique key.
      yield* rawRun(
        sql`INSERT INTO sqlite_sequence (name, seq) SELECT ${table.name}, 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ${table.name})`,
      )
      yield* rawRun(sql`UPDATE sqlite_sequence SET seq = max(seq, ${atLeast}) WHERE name = ${table.name}`)
    },
    close: async () => close(),
  }
}

/** The database at `path` (<data dir>/lnk.db), which must exist. */
export function sqliteSource(path: string): TransferSource {
  if (!existsSync(path)) throw noDatabase(path)
  const handle = openDatabase(path)
  // The connection only: handle.close() would also checkpoint the live database's WAL.
  return engineSource(sqliteSide(handle, `SQLite ${path}`, () => handle.sqlite.close(true)))
}

/** <data dir>/lnk.db, created and migrated when missing. */
export function sqliteTarget(dataDir: string): TransferTarget {
  const handle = openDatabase(prepareDataDir(dataDir))
  return engineTarget(sqliteSide(handle, `SQLite ${join(dataDir, DB_FILE)}`, () => handle.close()))
}
