// Which database a runtime serves from, and its connections. SQLite (the default): the file under
// LNK_DATA_DIR with two connections, one for requests and one for the job worker that never waits for the
// write lock. PostgreSQL (LNK_DATABASE_URL): one pool shared by requests and the worker, since
// PostgreSQL's writers do not exclude each other. Module factories pick their repos by `engine`.
import type { SQL } from 'bun'
import type { CheckpointMode, DbHandle } from './client'
import type { PgDb } from './pg/client'
import type { Engine } from './engine'
import { pgEngine } from './engine/pg'
import { sqliteEngine } from './engine/sqlite'

export interface SqliteStore {
  engine: 'sqlite'
  /** The connection of requests and services. */
  db: DbHandle
  /** The background worker's own connection, which never waits for the write lock. */
  workerDb: DbHandle
  /** How the connections of this process checkpoint; a connection of its own opened elsewhere follows it. */
  checkpoints: CheckpointMode
}

export interface PgStore {
  engine: 'pg'
  /** drizzle on the pool. */
  db: PgDb
  /** Bun's client: the pool itself, for the statements written on it directly (jobs, locks, notices). */
  sql: SQL
  /** LNK_DATABASE_URL, for connections of their own (the LISTEN connection). */
  url: string
}

export type Store = SqliteStore | PgStore

/** Throws when the database does not answer (readiness). */
export async function pingStore(store: Store): Promise<void> {
  if (store.engine === 'sqlite') store.db.ping()
  else await store.sql`SELECT 1`
}

/** The value for the engine served from: `sqlite(store)` or `pg(store)`. */
export function onEngine<T>(store: Store, sqlite: (s: SqliteStore) => T, pg: (s: PgStore) => T): T {
  return store.engine === 'sqlite' ? sqlite(store) : pg(store)
}

const engines = new WeakMap<object, Engine>()

/**
 * The dialect seam (db/engine) over the store's connection: the requests' one, or on SQLite the job
 * worker's own (`worker`). One per connection, so repos built from it share it.
 */
export function engineOf(store: Store, connection: 'requests' | 'worker' = 'requests'): Engine {
  const key = store.engine === 'sqlite' ? (connection === 'worker' ? store.workerDb : store.db) : store.db
  let engine = engines.get(key)
  if (!engine) engines.set(key, (engine = store.engine === 'sqlite' ? sqliteEngine((key as DbHandle).db) : pgEngine(store.db)))
  return engine
}
