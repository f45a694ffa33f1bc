// The tables `lnk admin export` / `import` move, derived from the one table list (db/schema) so they cannot go
// stale: each column's kind, the identity column, and an order in which every table comes after the tables
// its foreign keys point at. Also the ports an engine implements to be read from or written to.
import { getTableColumns, is } from 'drizzle-orm'
import { getTableConfig, SQLiteTable, type AnySQLiteColumn } from 'drizzle-orm/sqlite-core'
import * as schema from './schema'

/** How a column's values travel: the engines store each kind their own way (docs/scale-out.md, types). */
export type ColumnKind = 'text' | 'integer' | 'real' | 'boolean' | 'json' | 'blob'

export interface ColumnSpec {
  name: string
  kind: ColumnKind
}

export interface TableSpec {
  name: string
  columns: ColumnSpec[]
  /** The autoincrement / identity column whose counter must move past the imported rows, if any. */
  sequence: string | null
}

/** A row as it travels: text, integer and real as string/number, booleans, parsed JSON, blobs as bytes. */
export type Row = Record<string, unknown>

const KINDS: Record<string, ColumnKind> = {
  SQLiteText: 'text',
  SQLiteInteger: 'integer',
  SQLiteTimestamp: 'integer',
  SQLiteReal: 'real',
  SQLiteBoolean: 'boolean',
  // The only custom type of the schema is columns.ts's json.
  SQLiteCustomColumn: 'json',
  SQLiteBlobBuffer: 'blob',
}

function specOf(table: SQLiteTable): TableSpec {
  const config = getTableConfig(table)
  const columns = Object.values(getTableColumns(table)).map((c) => {
    const column = c as AnySQLiteColumn
    const kind = KINDS[column.columnType]
    if (!kind) throw new Error(`${config.name}.${column.name}: no transfer kind for ${column.columnType}`)
    return { name: column.name, kind }
  })
  const sequence = Object.values(getTableColumns(table)).find((c) => (c as { autoIncrement?: boolean }).autoIncrement)?.name ?? null
  return { name: config.name, columns, sequence }
}

/** Every table, parents before children (depth-first over the foreign keys, in the schema's order otherwise). */
function inForeignKeyOrder(): TableSpec[] {
  const tables = (Object.values(schema) as unknown[]).filter((t): t is SQLiteTable => is(t, SQLiteTable))
  const ordered: TableSpec[] = []
  const state = new Map<SQLiteTable, 'visiting' | 'done'>()
  const visit = (table: SQLiteTable) => {
    if (state.get(table) === 'done') return
    if (state.get(table) === 'visiting') throw new Error(`foreign keys form a cycle through ${getTableConfig(table).name}`)
    state.set(table, 'visiting')
    for (const fk of getTableConfig(table).foreignKeys) {
      const parent = fk.reference().foreignTable as SQLiteTable
      if (parent !== table) visit(parent)
    }
    state.set(table, 'done')
    ordered.push(specOf(table))
  }
  for (const table of tables) visit(table)
  return ordered
}

export const TRANSFER_TABLES: readonly TableSpec[] = inForeignKeyOrder()

/** A database being exported, seen through one read snapshot. */
export interface Snapshot {
  count(table: TableSpec): Promise<number>
  /** The highest value the table's sequence has handed out (it may exceed the rows' maximum after deletes). */
  sequence(table: TableSpec): Promise<number>
  /** The table's rows, a batch at a time. */
  rows(table: TableSpec, batchSize: number): AsyncIterable<Row[]>
}

export interface TransferSource {
  /** Where the data comes from, password hidden. */
  readonly label: string
  /** Throws a refusal when the database is not at this build's latest migration. */
  checkSchema(): Promise<void>
  /** Runs `read` inside one read-only snapshot. */
  snapshot<T>(read: (snapshot: Snapshot) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** A database being imported into, inside the one transaction of the import. */
export interface Loader {
  insert(table: TableSpec, rows: Row[]): Promise<void>
  count(table: TableSpec): Promise<number>
  /** Moves the table's sequence so the next value handed out is above `atLeast`. */
  advanceSequence(table: TableSpec, atLeast: number): Promise<void>
}

export interface TransferTarget {
  readonly label: string
  /** Applies this build's migrations. */
  migrate(): Promise<void>
  /** The tables that already hold rows, with their counts. */
  occupied(): Promise<Record<string, number>>
  /** Runs `load` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction(load: (loader: Loader) => Promise<void>): Promise<void>
  close(): Promise<void>
}
