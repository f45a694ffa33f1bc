// The tables `lnk admin export` / `import` move, derived from the one table list (db/schema) so they cannot go
// stale: each column's kind, the identity column, the primary key, and an order in which every table comes
// after the tables its foreign keys point at. Also the ports export and import read and write through, which
// db/transfer-engine.ts implements once for both engines.
import { getTableColumns } from 'drizzle-orm'
import { columnKind, isTable, tableConfig, type Column, type ColumnKind, type Table } from './columns'
import * as schema from './schema'

export type { ColumnKind }

export interface ColumnSpec {
  name: string
  kind: ColumnKind
  /** The column's property in db/schema (and in engine.t). */
  key: string
}

export interface TableSpec {
  name: string
  /** The table's export in db/schema (and in engine.t). */
  key: string
  columns: ColumnSpec[]
  /** The autoincrement / identity column whose counter must move past the imported rows, if any. */
  sequence: string | null
  /** The primary key's columns, by which an export reads the table a batch at a time; none for a table without. */
  primaryKey: string[]
}

/** A row as it travels: text, integer and real as string/number, booleans, parsed JSON, blobs as bytes. */
export type Row = Record<string, unknown>

function specOf(key: string, table: Table): TableSpec {
  const config = tableConfig(table)
  const columns = Object.entries(getTableColumns(table)).map(([property, c]) => {
    const column = c as Column
    const kind = columnKind(column)
    if (!kind) throw new Error(`${config.name}.${column.name}: no transfer kind for ${column.columnType}`)
    return { name: column.name, kind, key: property }
  })
  const sequence = config.columns.find((c) => (c as { autoIncrement?: boolean }).autoIncrement)?.name ?? null
  const primaryKey = config.primaryKeys[0]?.columns.map((c) => c.name) ?? config.columns.filter((c) => c.primary).map((c) => c.name)
  return { name: config.name, key, columns, sequence, primaryKey }
}

/** Every table, parents before children (depth-first over the foreign keys, in the schema's order otherwise). */
function inForeignKeyOrder(): TableSpec[] {
  const tables = (Object.entries(schema) as [string, unknown][]).filter((e): e is [string, Table] => isTable(e[1]))
  const keyOf = new Map<Table, string>(tables.map(([key, table]) => [table, key]))
  const ordered: TableSpec[] = []
  const state = new Map<Table, 'visiting' | 'done'>()
  const visit = (table: Table) => {
    if (state.get(table) === 'done') return
    if (state.get(table) === 'visiting') throw new Error(`foreign keys form a cycle through ${tableConfig(table).name}`)
    state.set(table, 'visiting')
    for (const fk of tableConfig(table).foreignKeys) {
      const parent = fk.reference().foreignTable as Table
      if (parent !== table) visit(parent)
    }
    state.set(table, 'done')
    ordered.push(specOf(keyOf.get(table)!, table))
  }
  for (const [, table] of tables) visit(table)
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
