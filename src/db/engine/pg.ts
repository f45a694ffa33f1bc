// The seam on PostgreSQL: transaction bodies await each statement on a drizzle transaction of the pool;
// prepared statements run their text on Bun's client under that transaction, as drizzle itself runs a query.
import { sql, type AnyColumn, type SQL, type SQLWrapper } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { bunClientOf, type PgTx, type PgDb } from '../pg/client'
import { noticePayload } from '../pg/notify'
import * as tables from '../pg/schema.generated'
import {
  driveAsync,
  isPreparedRun,
  isRaw,
  type Builder,
  type Engine,
  type LockOptions,
  type Prepared,
  type PreparedRun,
  type Statement,
  type Tables,
} from './index'
import { bind, compile, decode, type Compiled } from './prepared'

const ASCII_UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'

const dialect = new PgDialect()

/** A statement compiled once (Engine.prepare); Bun's client prepares its text on each connection it runs on. */
class PgPrepared implements Prepared {
  readonly text: string
  constructor(private readonly compiled: Compiled) {
    this.text = compiled.text
  }

  async run(tx: PgTx, { values, mode }: PreparedRun): Promise<unknown> {
    const { text, slots, fields } = this.compiled
    const query = bunClientOf(tx).unsafe(text, bind(slots, values))
    if (mode === 'run') return (await query).count
    if (!fields) return mode === 'get' ? (await query)[0] : [...(await query)]
    const rows = (await query.values()) as unknown[][]
    if (mode === 'get') return rows.length ? decode(fields, rows[0]!) : undefined
    return rows.map((r) => decode(fields, r))
  }
}

async function exec(tx: PgTx, s: Statement): Promise<unknown> {
  if (isPreparedRun(s)) return (s.prepared as PgPrepared).run(tx, s)
  if (!isRaw(s)) return s
  const result = await tx.execute(s.raw)
  return s.mode === 'all' ? [...(result as unknown as Iterable<unknown>)] : undefined
}

type Lockable = { for(strength: 'update' | 'no key update' | 'key share', config?: { of?: unknown; skipLocked?: true }): unknown }

function locked<Q>(query: Q, options?: LockOptions): Q {
  const config = { ...(options?.of ? { of: options.of } : {}), ...(options?.skipLocked ? { skipLocked: true as const } : {}) }
  return (query as unknown as Lockable).for(
    options?.keyShare ? 'key share' : options?.weak ? 'no key update' : 'update',
    Object.keys(config).length ? config : undefined,
  ) as Q
}

export function pgEngine(db: PgDb): Engine {
  return {
    name: 'pg',
    // The generated tables carry the SQLite tables' names, columns and keys; drizzle's PostgreSQL builder
    // takes the same calls the repos make, so both are typed as SQLite's (engine/index.ts).
    db: db as unknown as Builder,
    t: tables as unknown as Tables,
    run: (body) => driveAsync(body(db as unknown as Builder), (s) => exec(db, s)),
    transaction: (body, options) =>
      db.transaction(
        (tx) => driveAsync(body(tx as unknown as Builder), (s) => exec(tx, s)),
        options?.snapshot ? { isolationLevel: 'repeatable read', accessMode: 'read only' } : undefined,
      ),
    forUpdate: locked,
    lock: (build, options) => locked(build() as PromiseLike<unknown>, options),
    prepare: (query: SQLWrapper) => new PgPrepared(compile(dialect, query)),
    // SQLite compares text byte by byte; "C" does the same here, so lists come in the same order on both.
    byteOrder: (column: AnyColumn | SQL) => sql`${column} collate "C"`,
    // SQLite's lower() and LIKE fold ASCII letters only (é and É stay apart): translate() folds exactly those.
    asciiLower: (column: AnyColumn | SQL) => sql`translate(${column}, ${ASCII_UPPER}, ${ASCII_UPPER.toLowerCase()})`,
    lockKey: (space, key) => ({ raw: sql`SELECT pg_advisory_xact_lock(${space}::int, hashtext(${key}))`, mode: 'run' }),
    // PostgreSQL folds identical notices of one transaction into one.
    notify: (channel, payload) => ({ raw: sql`SELECT pg_notify(${channel}, ${noticePayload(channel, payload)})`, mode: 'run' }),
  }
}
