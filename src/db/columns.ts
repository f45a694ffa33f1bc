// lnk's table vocabulary: the one file of the schema that knows its builders are drizzle's SQLite ones. The
// tables of src/db/schema are written in these words only; PostgreSQL's twins are generated from them
// (scripts/generate-pg-schema.ts) and the migrations of both engines from those, so a word here maps onto
// one column type of each engine: text, int (counters, numbers), real, bytes, time (integer epoch
// milliseconds), bool and json (text holding JSON on SQLite, jsonb on PostgreSQL).
import { is } from 'drizzle-orm'
import {
  blob,
  customType,
  foreignKey,
  getTableConfig,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  SQLiteTable,
  text,
  uniqueIndex,
  type AnySQLiteColumn,
} from 'drizzle-orm/sqlite-core'

export { sql } from 'drizzle-orm'
export { foreignKey, index, primaryKey, real, text, uniqueIndex }

export const table = sqliteTable

export const int = (name: string) => integer(name)

export const bytes = (name: string) => blob(name, { mode: 'buffer' })

export const json = <T>(name: string) =>
  customType<{ data: T; driverData: string }>({
    dataType: () => 'text',
    toDriver: (value) => JSON.stringify(value),
    fromDriver: (value) => JSON.parse(value) as T,
  })(name)

/** Epoch milliseconds. */
export const time = (name: string) => integer(name)

export const bool = (name: string) => integer(name, { mode: 'boolean' })

/** A table of the schema, and what db/ reads off one: its name, columns, keys and indexes. */
export type Table = SQLiteTable
export type Column = AnySQLiteColumn
export const isTable = (value: unknown): value is Table => is(value, SQLiteTable)
export const tableConfig = (t: Table) => getTableConfig(t)

/** How a column's values travel between engines (db/transfer-tables.ts): the word it was declared with. */
export type ColumnKind = 'text' | 'integer' | 'real' | 'boolean' | 'json' | 'blob'

const KINDS: Record<string, ColumnKind> = {
  SQLiteText: 'text',
  SQLiteInteger: 'integer',
  SQLiteTimestamp: 'integer',
  SQLiteReal: 'real',
  SQLiteBoolean: 'boolean',
  // The only custom type of the schema is json above.
  SQLiteCustomColumn: 'json',
  SQLiteBlobBuffer: 'blob',
}

/** The column's kind, or undefined for a builder this vocabulary does not offer. */
export const columnKind = (column: Column): ColumnKind | undefined => KINDS[column.columnType]
