// The SQLite side of export / import (db/transfer.ts): a read transaction on the WAL file is one snapshot
// while the server keeps writing; an import is one BEGIN IMMEDIATE … COMMIT on a file it migrated first.
import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { DB_FILE, openDatabase, prepareDataDir, type DbHandle } from './client'
import { appliedTags, migrate } from './migrate'
import { SCHEMA_TAG } from './transfer'
import { noDatabase, sourceNotMigrated } from './transfer-errors'
import { TRANSFER_TABLES, type Loader, type Row, type Snapshot, type TableSpec, type TransferSource, type TransferTarget } from './transfer-tables'

const quote = (name: string) => `"${name}"`
const columnList = (table: TableSpec) => table.columns.map((c) => quote(c.name)).join(', ')

/** Integers are read as bigint so a value past 2^53 is refused rather than silently rounded. */
function whole(table: TableSpec, column: string, v: unknown): number {
  if (typeof v !== 'bigint') return v as number
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw new Error(`${table.name}.${column} holds ${v}, beyond what an export carries exactly`)
  return Number(v)
}

function fromSqlite(table: TableSpec, raw: Record<string, unknown>): Row {
  const row: Row = {}
  for (const { name, kind } of table.columns) {
    const v = raw[name]
    if (v === null || v === undefined) row[name] = null
    else if (kind === 'boolean') row[name] = whole(table, name, v) !== 0
    else if (kind === 'json') row[name] = JSON.parse(v as string)
    else if (kind === 'blob') row[name] = Buffer.from(v as Uint8Array)
    else if (kind === 'integer' || kind === 'real') row[name] = whole(table, name, v)
    else row[name] = v
  }
  return row
}

function toSqlite(kind: string, v: unknown): SQLQueryBindings {
  if (v === null || v === undefined) return null
  if (kind === 'boolean') return v ? 1 : 0
  if (kind === 'json') return JSON.stringify(v)
  return v as SQLQueryBindings
}

const count = (sqlite: Database, table: TableSpec) => (sqlite.query(`SELECT count(*) AS n FROM ${quote(table.name)}`).get() as { n: number }).n

function snapshotOf(sqlite: Database): Snapshot {
  return {
    count: async (table) => count(sqlite, table),
    async sequence(table) {
      const stored = sqlite.query('SELECT seq FROM sqlite_sequence WHERE name = ?').get(table.name) as { seq: number } | null
      const max = (sqlite.query(`SELECT max(${quote(table.sequence!)}) AS m FROM ${quote(table.name)}`).get() as { m: number | null }).m
      return Math.max(stored?.seq ?? 0, max ?? 0)
    },
    async *rows(table, size) {
      const statement = sqlite.prepare(`SELECT ${columnList(table)} FROM ${quote(table.name)}`).safeIntegers(true)
      try {
        let batch: Row[] = []
        for (const raw of statement.iterate()) {
          batch.push(fromSqlite(table, raw as Record<string, unknown>))
          if (batch.length >= size) {
            yield batch
            batch = []
          }
        }
        if (batch.length) yield batch
      } finally {
        statement.finalize()
      }
    },
  }
}

/** The database at `path` (<data dir>/lnk.db), which must exist. */
export function sqliteSource(path: string): TransferSource {
  if (!existsSync(path)) throw noDatabase(path)
  const db = openDatabase(path)
  const label = `SQLite ${path}`
  return {
    label,
    async checkSchema() {
      const current = appliedTags(db.sqlite).at(-1) ?? '(none)'
      if (current !== SCHEMA_TAG) throw sourceNotMigrated(label, current, SCHEMA_TAG)
    },
    async snapshot(read) {
      // A deferred transaction: its first read fixes the snapshot that every later read of the export sees.
      db.sqlite.exec('BEGIN')
      try {
        const result = await read(snapshotOf(db.sqlite))
        db.sqlite.exec('COMMIT')
        return result
      } catch (err) {
        if (db.sqlite.inTransaction) db.sqlite.exec('ROLLBACK')
        throw err
      }
    },
    async close() {
      // The connection only: db.close() would also checkpoint the live database's WAL.
      db.sqlite.close(true)
    },
  }
}

function loaderOf(sqlite: Database): Loader {
  const inserts = new Map<string, ReturnType<Database['prepare']>>()
  const insertFor = (table: TableSpec, rows: number) => {
    const key = `${table.name}:${rows}`
    let statement = inserts.get(key)
    if (!statement) {
      const one = `(${table.columns.map(() => '?').join(', ')})`
      statement = sqlite.prepare(`INSERT INTO ${quote(table.name)} (${columnList(table)}) VALUES ${Array(rows).fill(one).join(', ')}`)
      inserts.set(key, statement)
    }
    return statement
  }
  return {
    async insert(table, rows) {
      const params: SQLQueryBindings[] = []
      for (const row of rows) for (const { name, kind } of table.columns) params.push(toSqlite(kind, row[name]))
      insertFor(table, rows.length).run(...params)
    },
    count: async (table) => count(sqlite, table),
    async advanceSequence(table, atLeast) {
      if (atLeast <= 0) return
      // sqlite_sequence has a row per AUTOINCREMENT table once it had one insert, and no unique key.
      const moved = sqlite.query('UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?').run(atLeast, table.name)
      if (!moved.changes) sqlite.query('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)').run(table.name, atLeast)
    },
  }
}

/** <data dir>/lnk.db, created and migrated when missing. */
export function sqliteTarget(dataDir: string): TransferTarget {
  let handle: DbHandle | undefined
  const db = () => handle ?? (handle = openDatabase(prepareDataDir(dataDir)))
  return {
    label: `SQLite ${join(dataDir, DB_FILE)}`,
    async migrate() {
      migrate(db().sqlite)
    },
    async occupied() {
      const held: Record<string, number> = {}
      for (const table of TRANSFER_TABLES) {
        const n = count(db().sqlite, table)
        if (n) held[table.name] = n
      }
      return held
    },
    async transaction(load) {
      const sqlite = db().sqlite
      sqlite.exec('BEGIN IMMEDIATE')
      try {
        await load(loaderOf(sqlite))
        sqlite.exec('COMMIT')
      } catch (err) {
        if (sqlite.inTransaction) sqlite.exec('ROLLBACK')
        throw err
      }
    },
    async close() {
      handle?.close()
    },
  }
}
