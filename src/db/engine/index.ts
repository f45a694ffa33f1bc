// The dialect seam: the one place repo code learns which engine answers. A repo is written once, with
// drizzle's query builder over `engine.t` (the tables of src/db/schema on SQLite, the generated twins of
// the same names on PostgreSQL), and asks the engine only for what the two truly do differently: how a
// transaction runs, how a statement prepared once runs (Engine.prepare), row locks, byte-order comparison
// and ASCII case folding.
//
// Statements outside a transaction are awaited on both engines. A transaction's body is a generator that
// yields its statements (`yield* rows(q)`): SQLite runs it synchronously inside one write transaction (a
// bun:sqlite transaction cannot span an await without letting other requests' statements into it), while
// PostgreSQL awaits each statement on its transaction. The body reads like straight-line code either way,
// and it may try/catch a statement's error. A body that must wait on outside work between its statements
// (an export writing what it read to a file) yields that wait (`yield* waiting(p)`); SQLite allows it only
// on an engine over a connection of its own (engine/sqlite.ts).
import type { AnyColumn, SQL, SQLWrapper } from 'drizzle-orm'
import type { Tx } from '../tx'
import type * as schema from '../schema'

/** The query builder repos write with: typed as SQLite's; PostgreSQL's answers the same calls repos make. */
export type Builder = Tx

export type Tables = typeof schema

/**
 * A statement handed to the engine: a drizzle query (select, insert, update or delete), raw SQL or a run of a
 * prepared statement; or a wait.
 */
export type Statement = PromiseLike<unknown> | RawStatement | PreparedRun | Wait

/** Raw SQL, for what the builder cannot say: `all` answers rows, `run` nothing. */
export interface RawStatement {
  raw: SQL
  mode: 'all' | 'run'
}

/**
 * A statement compiled once (Engine.prepare) for the engine that prepared it, run with the values of its named
 * placeholders: for the statements run thousands of times a second (the webhook fan-out and deliveries, the
 * job queue), where building the query again at every call costs more than the database's work.
 */
export interface Prepared<Row = Record<string, unknown>> {
  /** The statement's text, constants written in. */
  readonly text: string
  /**
   * Runs it where the body stands, for an engine whose bodies run synchronously on the connection it was
   * prepared on (SQLite: inside the transaction open there): the statement then passes through no yield.
   */
  readonly runNow?: (values: Record<string, unknown> | undefined, mode: PreparedRun['mode']) => unknown
  /** Only types what its rows are. */
  readonly rowType?: Row
}

/** A run of a prepared statement: `run` answers how many rows it changed, `all` its rows, `get` the first. */
export interface PreparedRun {
  prepared: Prepared<unknown>
  values: Record<string, unknown> | undefined
  mode: 'run' | 'all' | 'get'
}

/** The row a drizzle query answers (never for one that answers no rows). */
export type RowOf<Q> = Q extends PromiseLike<infer A> ? (A extends readonly (infer R)[] ? R : never) : never

/** Outside work the body waits on between two statements, its transaction held open meanwhile. */
export interface Wait {
  wait: PromiseLike<unknown>
}

/** A transaction body: yields statements, gets each one's result back, returns the transaction's answer. */
export type Steps<T> = Generator<Statement, T, unknown>

export interface TransactionOptions {
  /**
   * SQLite: take the write lock at BEGIN (IMMEDIATE), so a read-then-write body runs alone. PostgreSQL has
   * no such lock; bodies that need one writer lock rows with `forUpdate` instead.
   */
  immediate?: boolean
  /**
   * A read-only body whose statements all see one snapshot: PostgreSQL runs it REPEATABLE READ READ ONLY (at
   * READ COMMITTED each statement sees its own); a SQLite read transaction is one snapshot already.
   */
  snapshot?: boolean
}

export interface LockOptions {
  of?: unknown
  weak?: boolean
  keyShare?: boolean
  skipLocked?: boolean
}

export interface Engine {
  readonly name: 'sqlite' | 'pg'
  /** drizzle on the requests' connection (SQLite) or the pool (PostgreSQL). */
  readonly db: Builder
  readonly t: Tables
  /**
   * Runs `body` outside a transaction, each statement on its own: for statement sequences that serve both
   * inside a caller's transaction and alone.
   */
  run<T>(body: (db: Builder) => Steps<T>): Promise<T>
  /** Runs `body` in one transaction; a throw (or a throwing statement left uncaught) rolls it back. */
  transaction<T>(body: (tx: Builder) => Steps<T>, options?: TransactionOptions): Promise<T>
  /**
   * The rows of `query` locked for the rest of the transaction (PostgreSQL `FOR UPDATE`, or `FOR NO KEY
   * UPDATE` with `weak`; `FOR KEY SHARE` with `keyShare`, which only keeps the rows from being deleted or
   * their keys changed; `skipLocked` passes over rows another transaction holds instead of waiting); on
   * SQLite, where the transaction already holds the one write lock, the query itself.
   */
  forUpdate<Q>(query: Q, options?: LockOptions): Q
  /**
   * Locks the rows of the query `build` answers for the rest of the transaction when the engine locks rows
   * (PostgreSQL, as forUpdate); nothing on SQLite, whose transaction already holds the one write lock, and
   * which then never builds the query: for a body that only needs the lock, not the rows.
   */
  lock(build: () => unknown, options?: LockOptions): Statement | undefined
  /**
   * `query` (built with drizzle over `t`) compiled once for this engine, its values named with
   * sql.placeholder(name): SQLite prepares it on its driver, on this engine's connection, and runs it there
   * at once (inside the transaction open on that connection); PostgreSQL runs its text, with $n parameters,
   * on the transaction of the body that yields it. Run it with exec(), all() or first().
   */
  prepare<Q extends SQLWrapper>(query: Q): Prepared<RowOf<Q>>
  /** `column` compared and sorted byte by byte, as SQLite compares text (PostgreSQL: COLLATE "C"). */
  byteOrder(column: AnyColumn | SQL): SQL
  /** `column` with ASCII letters folded to lower case and nothing else, as SQLite's LIKE folds. */
  asciiLower(column: AnyColumn | SQL): SQL
  /**
   * A notice other nodes receive when the transaction commits (PostgreSQL's pg_notify; db/pg/notify.ts
   * listens). None on SQLite, whose one process hears its own commits on the event bus.
   */
  notify(channel: string, payload: string): Statement | undefined
  /**
   * A lock on `key` within a numbered space, held to the end of the transaction: for "nobody did X, so do Y"
   * across rows that may not exist yet (PostgreSQL's transaction-level advisory lock on the key's hash). None
   * on SQLite, whose IMMEDIATE transaction already runs alone.
   */
  lockKey(space: number, key: string): Statement | undefined
}

/** The result of one statement inside a transaction body: `const found = yield* rows(tx.select()…)`. */
export function* rows<T>(query: PromiseLike<T>): Generator<Statement, T, unknown> {
  return (yield query) as T
}

/** Raw SQL inside a transaction body, answering its rows. */
export function* rawRows<T = Record<string, unknown>>(raw: SQL): Generator<Statement, T[], unknown> {
  return (yield { raw, mode: 'all' }) as T[]
}

/** Raw SQL inside a transaction body, for its effect. */
export function* rawRun(raw: SQL): Generator<Statement, void, unknown> {
  yield { raw, mode: 'run' }
}

/** A prepared statement (Engine.prepare) inside a transaction body, for its effect: answers how many rows it changed. */
export function* exec(prepared: Prepared<unknown>, values?: Record<string, unknown>): Generator<Statement, number, unknown> {
  return (prepared.runNow ? prepared.runNow(values, 'run') : yield { prepared, values, mode: 'run' }) as number
}

/** A prepared statement's rows inside a transaction body, decoded as drizzle answers them. */
export function* all<Row>(prepared: Prepared<Row>, values?: Record<string, unknown>): Generator<Statement, Row[], unknown> {
  return (prepared.runNow ? prepared.runNow(values, 'all') : yield { prepared, values, mode: 'all' }) as Row[]
}

/** A prepared statement's first row inside a transaction body, or undefined: for statements of one row (SQLite reads all it answers). */
export function* first<Row>(prepared: Prepared<Row>, values?: Record<string, unknown>): Generator<Statement, Row | undefined, unknown> {
  return (prepared.runNow ? prepared.runNow(values, 'get') : yield { prepared, values, mode: 'get' }) as Row | undefined
}

/** Engine.lock inside a transaction body. */
export function* locking(engine: Engine, build: () => unknown, options?: LockOptions): Generator<Statement, void, unknown> {
  const statement = engine.lock(build, options)
  if (statement) yield statement
}

/** Engine.lockKey inside a transaction body. */
export function* lockKey(engine: Engine, space: number, key: string): Generator<Statement, void, unknown> {
  const statement = engine.lockKey(space, key)
  if (statement) yield statement
}

/** A notice inside a transaction body (Engine.notify): sent at commit, never for a rollback. */
export function* notice(engine: Engine, channel: string, payload: string): Generator<Statement, void, unknown> {
  const statement = engine.notify(channel, payload)
  if (statement) yield statement
}

/** Waits inside a transaction body for `work` (not a statement), answering its result or throwing its error. */
export function* waiting<T>(work: PromiseLike<T>): Generator<Statement, T, unknown> {
  return (yield { wait: work }) as T
}

export const isWait = (s: Statement): s is Wait => typeof s === 'object' && s !== null && 'wait' in s

export const isPreparedRun = (s: Statement): s is PreparedRun => typeof s === 'object' && s !== null && 'prepared' in s

export const isRaw = (s: Statement): s is RawStatement => typeof s === 'object' && s !== null && 'raw' in s && 'mode' in s

/**
 * Drives a body to its end, handing each statement to `exec` and the result (or the error) back; shared by
 * both engines, so a body behaves the same on each.
 */
export function drive<T>(steps: Steps<T>, exec: (s: Statement) => unknown): T {
  let step = steps.next()
  while (!step.done) {
    let result: unknown
    try {
      result = exec(step.value)
    } catch (err) {
      step = steps.throw(err)
      continue
    }
    step = steps.next(result)
  }
  return step.value
}

/** drive() for an engine whose statements answer Promises; the body's waits are awaited like them. */
export async function driveAsync<T>(steps: Steps<T>, exec: (s: Statement) => Promise<unknown>): Promise<T> {
  let step = steps.next()
  while (!step.done) {
    let result: unknown
    try {
      const s = step.value
      result = await (isWait(s) ? s.wait : exec(s))
    } catch (err) {
      step = steps.throw(err)
      continue
    }
    step = steps.next(result)
  }
  return step.value
}
