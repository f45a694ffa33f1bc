// The seam on SQLite: transaction bodies run synchronously inside one bun:sqlite transaction.
import { is, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import { SQLiteSelectBase } from 'drizzle-orm/sqlite-core'
import type { Db } from '../client'
import * as schema from '../schema'
import type { Tx } from '../tx'
import { drive, isRaw, type Builder, type Engine, type Statement, type Steps } from './index'

/** One statement now: what drizzle's own `execute()` would answer, without its Promise. */
function execSync(tx: Builder, s: Statement): unknown {
  if (isRaw(s)) return s.mode === 'all' ? tx.all(s.raw) : tx.run(s.raw)
  const q = s as unknown as { all(): unknown; run(): unknown; config?: { returning?: unknown } }
  return is(s, SQLiteSelectBase) || q.config?.returning ? q.all() : q.run()
}

export function sqliteEngine(db: Db): Engine {
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
 * Drives a body synchronously inside the caller's own SQLite transaction, for synchronous code not yet
 * written on the seam (it calls enqueuing() where it called enqueue()).
 */
export function driveSync<T>(tx: Tx, body: (engine: Engine, tx: Builder) => Steps<T>): T {
  return drive(body(sqliteEngine(tx as Db), tx), (s) => execSync(tx, s))
}
