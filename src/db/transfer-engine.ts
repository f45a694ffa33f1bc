// Export and import (db/transfer.ts) on the engine seam, written once: every table is counted, read and
// written with drizzle over engine.t; what each engine does its own way (its migrations, its sequences) is
// the TransferEngine its small file hands in (transfer-sqlite.ts, pg/transfer.ts).
//
// An export reads every table inside one snapshot transaction and an import writes inside one transaction,
// while the file is written or read in between: the transaction body serves the export's or import's
// requests one at a time and waits for the next (engine `waiting()`), so neither side holds more than a
// batch of rows.
import { count, getTableColumns, sql, type SQL } from 'drizzle-orm'
import { rows, waiting, type Builder, type Engine, type Steps, type TransactionOptions } from './engine'
import type { Column, Table } from './columns'
import { sourceNotMigrated } from './transfer-errors'
import { TRANSFER_TABLES, type Loader, type Row, type Snapshot, type TableSpec, type TransferSource, type TransferTarget } from './transfer-tables'

/** What an engine does its own way when moving data. */
export interface TransferEngine {
  readonly engine: Engine
  /** Where the data is, password hidden. */
  readonly label: string
  /** The migration this build brings the engine to, and the one the database is at (null before any). */
  readonly latestTag: string
  appliedTag(): Promise<string | null>
  migrate(): Promise<void>
  /** The highest value the sequence behind `table.sequence` has handed out (0 before any). */
  sequence(tx: Builder, table: TableSpec): Steps<number>
  /** Moves that sequence so the next value it hands out is above `atLeast`. */
  advanceSequence(tx: Builder, table: TableSpec, atLeast: number): Steps<void>
  close(): Promise<void>
}

type Ask = <R>(body: (tx: Builder) => Steps<R>) => Promise<R>

/**
 * Runs `work` inside one transaction: each `ask(body)` runs that body's statements in it, one request at a
 * time, and `work` may await anything else in between. Commits when `work` resolves, rolls back when it
 * rejects (or a statement's error is left uncaught).
 */
function within<T>(engine: Engine, options: TransactionOptions, work: (ask: Ask) => Promise<T>): Promise<T> {
  return engine.transaction(function* (tx) {
    const queue: { body: (tx: Builder) => Steps<unknown>; resolve(value: unknown): void; reject(err: unknown): void }[] = []
    let wake = () => {}
    let finished = false
    const ask: Ask = (body) =>
      new Promise((resolve, reject) => {
        queue.push({ body, resolve: resolve as (value: unknown) => void, reject })
        wake()
      })
    const done = work(ask)
    // Handled at once, so a failure is not reported as unhandled before the body returns it.
    done
      .then(
        () => {},
        () => {},
      )
      .finally(() => {
        finished = true
        wake()
      })
    for (;;) {
      const next = queue.shift()
      if (next) {
        try {
          next.resolve(yield* next.body(tx))
        } catch (err) {
          next.reject(err)
        }
      } else if (finished) break
      else yield* waiting(new Promise<void>((resolve) => (wake = resolve)))
    }
    return yield* waiting(done)
  }, options)
}

const tableOf = (engine: Engine, spec: TableSpec) => (engine.t as unknown as Record<string, Table>)[spec.key]!

const columnOf = (table: Table, key: string) => getTableColumns(table)[key] as Column

function* countRows(engine: Engine, tx: Builder, spec: TableSpec): Steps<number> {
  const [found] = yield* rows(tx.select({ n: count() }).from(tableOf(engine, spec)))
  return found!.n
}

/** A whole number as it travels: refused rather than rounded past 2^53. */
function whole(spec: TableSpec, column: string, text: string): number {
  const n = Number(text)
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) throw new Error(`${spec.name}.${column} holds ${text}, beyond what an export carries exactly`)
  return n
}

/**
 * One batch of the table's rows in the travelling form (db/transfer.ts): the rows after `after` in the
 * primary key's order, or for a table without one the rows from `offset` in the order of all columns.
 * Integers and JSON are read as text, so no engine rounds a big number or re-types a JSON value on the way;
 * drizzle's columns decode the rest the same on both engines.
 */
function* batchOf(engine: Engine, tx: Builder, spec: TableSpec, size: number, after: Row | null, offset: number): Steps<Row[]> {
  const table = tableOf(engine, spec)
  const selection: Record<string, Column | SQL> = {}
  for (const { name, key, kind } of spec.columns) {
    const column = columnOf(table, key)
    selection[name] = kind === 'integer' || kind === 'json' ? sql<string | null>`cast(${column} as text)` : column
  }
  const byName = (name: string) => columnOf(table, spec.columns.find((c) => c.name === name)!.key)
  const order = spec.primaryKey.length ? spec.primaryKey.map(byName) : spec.columns.map((c) => columnOf(table, c.key))
  let query = tx.select(selection).from(table).$dynamic()
  if (spec.primaryKey.length && after) {
    const values = spec.primaryKey.map((name) => sql.param(after[name], byName(name)))
    query = query.where(sql`(${sql.join(order, sql`, `)}) > (${sql.join(values, sql`, `)})`)
  }
  query = query.orderBy(...order).limit(size)
  if (!spec.primaryKey.length) query = query.offset(offset)
  const raw = (yield* rows(query)) as Row[]
  return raw.map((r) => {
    const row: Row = {}
    for (const { name, kind } of spec.columns) {
      const v = r[name]
      if (v === null || v === undefined) row[name] = null
      else if (kind === 'integer') row[name] = whole(spec, name, v as string)
      else if (kind === 'json') row[name] = JSON.parse(v as string)
      else if (kind === 'blob') row[name] = Buffer.from(v as Uint8Array)
      else row[name] = v
    }
    return row
  })
}

function* highest(engine: Engine, side: TransferEngine, tx: Builder, spec: TableSpec): Steps<number> {
  const table = tableOf(engine, spec)
  const column = columnOf(table, spec.columns.find((c) => c.name === spec.sequence)!.key)
  const [max] = yield* rows(tx.select({ m: sql<string | null>`cast(max(${column}) as text)` }).from(table))
  // Sequences are outside a snapshot on PostgreSQL: the value now, never lower than the snapshot's rows.
  return Math.max(yield* side.sequence(tx, spec), Number(max?.m ?? 0))
}

async function checkSchema(side: TransferEngine): Promise<void> {
  const current = (await side.appliedTag()) ?? '(none)'
  if (current !== side.latestTag) throw sourceNotMigrated(side.label, current, side.latestTag)
}

/** The database behind `side`, read from one snapshot. */
export function engineSource(side: TransferEngine): TransferSource {
  const { engine } = side
  return {
    label: side.label,
    checkSchema: () => checkSchema(side),
    snapshot: (read) =>
      within(engine, { snapshot: true }, (ask) => {
        const snapshot: Snapshot = {
          count: (spec) => ask((tx) => countRows(engine, tx, spec)),
          sequence: (spec) => ask((tx) => highest(engine, side, tx, spec)),
          async *rows(spec, size) {
            let after: Row | null = null
            for (let offset = 0; ; offset += size) {
              const batch = await ask((tx) => batchOf(engine, tx, spec, size, after, offset))
              if (batch.length) yield batch
              if (batch.length < size) return
              after = batch.at(-1)!
            }
          },
        }
        return read(snapshot)
      }),
    close: () => side.close(),
  }
}

/** The database behind `side`, written in one transaction. */
export function engineTarget(side: TransferEngine): TransferTarget {
  const { engine } = side
  return {
    label: side.label,
    migrate: () => side.migrate(),
    async occupied() {
      const held: Record<string, number> = {}
      for (const spec of TRANSFER_TABLES) {
        const [found] = await engine.db.select({ n: count() }).from(tableOf(engine, spec))
        if (found!.n) held[spec.name] = found!.n
      }
      return held
    },
    // Immediate: on SQLite the import takes the write lock up front and holds it to its end.
    transaction: (load) =>
      within(engine, { immediate: true }, (ask) => {
        const loader: Loader = {
          insert: (spec, batch) =>
            ask(function* (tx) {
              const values = batch.map((row) => Object.fromEntries(spec.columns.map((c) => [c.key, row[c.name]])))
              yield* rows(tx.insert(tableOf(engine, spec)).values(values))
            }),
          count: (spec) => ask((tx) => countRows(engine, tx, spec)),
          advanceSequence: (spec, atLeast) => (atLeast > 0 ? ask((tx) => side.advanceSequence(tx, spec, atLeast)) : Promise.resolve()),
        }
        return load(loader)
      }),
    close: () => side.close(),
  }
}
