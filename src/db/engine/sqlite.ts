// The seam on SQLite: transaction bodies run synchronously inside one bun:sqlite transaction.
import { is, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import { SQLiteSelectBase } from 'drizzle-orm/sqlite-core'
import type { Db } from '../client'
import * as schema from '../schema'
import type { Tx } from '../tx'
import { drive, isRaw, isWait, type Builder, type Engine, type Statement, type Steps } from './index'

/** One statement now: what drizzle's own `execute()` would answer, without its Promise. */
function execSync(tx: Builder, s: Statement): unknown {
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
