// The seam on SQLite: transaction bodies run synchronously inside one bun:sqlite transaction; prepared
// statements run on the driver, at once.
import { is, sql, type AnyColumn, type SQL, type SQLWrapper } from 'drizzle-orm'
import { SQLiteSelectBase, SQLiteSyncDialect } from 'drizzle-orm/sqlite-core'
import type { Connection, Db } from '../client'
import * as schema from '../schema'
import type { Tx } from '../tx'
import { drive, isPreparedRun, isRaw, isWait, type Builder, type Engine, type Prepared, type PreparedRun, type Statement, type Steps } from './index'
import { bind, compile, decode } from './prepared'

const dialect = new SQLiteSyncDialect()

type Row = Record<string, unknown>

/** A statement prepared on a connection's driver (Engine.prepare): rows decoded as drizzle answers them. */
class SqlitePrepared implements Prepared {
  private readonly stmt: ReturnType<Connection['prepare']>
  readonly text: string
  private readonly compiled: ReturnType<typeof compile>

  constructor(
    readonly client: Connection,
    query: SQLWrapper,
  ) {
    this.compiled = compile(dialect, query)
    this.text = this.compiled.text
    this.stmt = client.prepare(this.text)
  }

  // A body runs synchronously on the connection, inside whatever transaction is open there: the statement runs
  // where the body stands, as a statement written on the driver would (exec(), all(), first()).
  readonly runNow = (values: PreparedRun['values'], mode: PreparedRun['mode']) => this.run(values, mode)

  run(values: PreparedRun['values'], mode: PreparedRun['mode']): unknown {
    const { slots, fields } = this.compiled
    const params = bind(slots, values) as never[]
    if (mode === 'run') return this.stmt.run(...params).changes
    if (!fields) return mode === 'get' ? (this.stmt.get(...params) ?? undefined) : this.stmt.all(...params)
    const rows = this.stmt.values(...params) as unknown[][]
    if (mode === 'get') return rows.length ? decode(fields, rows[0]!) : undefined
    return rows.map((r) => decode(fields, r))
  }
}

const clientOf = (tx: Builder) => (tx as unknown as { session: { client: Connection } }).session.client

/** One statement now: what drizzle's own `execute()` would answer, without its Promise. */
function execSync(tx: Builder, s: Statement): unknown {
  if (isPreparedRun(s)) {
    // Only a statement yielded by hand gets here (exec() runs it at once): it runs on its own connection,
    // joining whatever transaction is open there, so it must be this one's.
    const p = s.prepared as SqlitePrepared
    if (p.client !== clientOf(tx)) throw new Error(`a statement prepared on another connection: ${p.text}`)
    return p.run(s.values, s.mode)
  }
  if (isWait(s))
    throw new Error('a SQLite transaction body may wait only on an engine over a connection of its own (sqliteEngine(db, { ownConnection: true }))')
  if (isRaw(s)) return s.mode === 'all' ? tx.all(s.raw) : tx.run(s.raw)
  const q = s as unknown as { all(): unknown; run(): unknown; config?: { returning?: unknown } }
  return is(s, SQLiteSelectBase) || q.config?.returning ? q.all() : q.run()
}

/**
 * drive() that runs statements at once and awaits only the body's waits: a body that never waits runs to
 * its end within the call, as in a synchronous transaction.
 */
function driveWaits<T>(steps: Steps<T>, exec: (s: Statement) => unknown): { value: T } | Promise<T> {
  const from = (first: IteratorResult<Statement, T>): { value: T } | Promise<T> => {
    let step = first
    while (!step.done) {
      const s = step.value
      if (isWait(s)) {
        return Promise.resolve(s.wait).then(
          (result) => settle(from(steps.next(result))),
          (err) => settle(from(steps.throw(err))),
        )
      }
      let result: unknown
      try {
        result = exec(s)
      } catch (err) {
        step = steps.throw(err)
        continue
      }
      step = steps.next(result)
    }
    return { value: step.value }
  }
  const settle = (r: { value: T } | Promise<T>) => (r instanceof Promise ? r : r.value)
  return from(steps.next())
}

/**
 * A transaction on a connection nobody else uses, which may therefore wait between its statements: on a
 * shared one, other callers' statements would run inside it while it waits.
 */
function transactionAlone<T>(db: Db, body: (tx: Builder) => Steps<T>, immediate: boolean): Promise<T> {
  const client = db.$client
  const end = (statement: 'COMMIT' | 'ROLLBACK') => {
    if (client.inTransaction) client.exec(statement)
  }
  const commit = (value: T) => {
    try {
      end('COMMIT')
    } catch (err) {
      end('ROLLBACK')
      throw err
    }
    return value
  }
  try {
    // A deferred one's first read fixes the snapshot that every later statement of the body sees.
    client.exec(immediate ? 'BEGIN IMMEDIATE' : 'BEGIN')
    const outcome = driveWaits(body(db), (s) => execSync(db, s))
    if (!(outcome instanceof Promise)) return Promise.resolve(commit(outcome.value))
    return outcome.then(commit, (err) => {
      end('ROLLBACK')
      throw err
    })
  } catch (err) {
    end('ROLLBACK')
    return Promise.reject(err)
  }
}

/**
 * `ownConnection`: nothing else runs statements on `db`'s connection (a command line's export or import), so
 * transaction bodies may wait on outside work between statements (`waiting()`).
 */
export function sqliteEngine(db: Db, options?: { ownConnection?: boolean }): Engine {
  const ownConnection = options?.ownConnection === true
  return {
    name: 'sqlite',
    db,
    t: schema,
    run(body) {
      try {
        return Promise.resolve(drive(body(db), (s) => execSync(db, s)))
      } catch (err) {
        return Promise.reject(err)
      }
    },
    transaction(body, options) {
      if (ownConnection) return transactionAlone(db, body, options?.immediate === true)
      try {
        return Promise.resolve(db.transaction((tx) => drive(body(tx), (s) => execSync(tx, s)), { behavior: options?.immediate ? 'immediate' : 'deferred' }))
      } catch (err) {
        return Promise.reject(err)
      }
    },
    forUpdate: (query) => query,
    lock: () => undefined,
    prepare: (query) => new SqlitePrepared(clientOf(db), query),
    byteOrder: (column: AnyColumn | SQL) => sql`${column}`,
    asciiLower: (column: AnyColumn | SQL) => sql`lower(${column})`,
    notify: () => undefined,
    lockKey: () => undefined,
  }
}

/**
 * Drives a body synchronously on the caller's own SQLite connection or transaction: for the reads that must
 * answer without awaiting (the interest sources asked by hot writers) and the synchronous publish() and
 * enqueue() tests use.
 */
export function driveSync<T>(tx: Tx, body: (engine: Engine, tx: Builder) => Steps<T>): T {
  return drive(body(sqliteEngine(tx as Db), tx), (s) => execSync(tx, s))
}

/** A statement on the driver (db/hot.ts): its text, and its runs answering rows as the driver gives them. */
export interface HotStatement {
  /** The statement's text, constants written in. */
  readonly sql: string
  /** Answers how many rows it changed. */
  run(values?: Row): number
  get(values?: Row): Row | undefined
  all(values?: Row): Row[]
}

/**
 * `query` compiled as Engine.prepare compiles it, prepared on `db`'s driver, for the SQLite-only hot paths
 * that run it outside transaction bodies (db/hot.ts). Rows come back as the driver gives them: keyed by
 * column name, values not decoded.
 */
export function hotStatement(db: Db, query: SQLWrapper): HotStatement {
  const { text, slots } = compile(dialect, query)
  const stmt = db.$client.prepare<Row, never[]>(text)
  return {
    sql: text,
    run: (values) => stmt.run(...(bind(slots, values) as never[])).changes,
    get: (values) => stmt.get(...(bind(slots, values) as never[])) ?? undefined,
    all: (values) => stmt.all(...(bind(slots, values) as never[])),
  }
}
