// Opens the SQLite file with the pragmas lnk relies on and wraps it in drizzle.
import { Database } from 'bun:sqlite'
import { accessSync, constants, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import * as schema from './schema'

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database }

/**
 * The raw connection and its parameter values, for the repos that prepare plain SQL on hot paths (the
 * click flush, analytics reads). Named here so that only db/ imports the driver.
 */
export type { Database as Connection, SQLQueryBindings as SqlParam } from 'bun:sqlite'

export interface DbHandle {
  sqlite: Database
  db: Db
  path: string
  /** Throws when the database does not answer (readiness). */
  ping(): void
  close(): void
}

export const DB_FILE = 'lnk.db'

/** Creates the data directory if missing and refuses one lnk cannot write to. */
export function prepareDataDir(dataDir: string): string {
  try {
    mkdirSync(dataDir, { recursive: true })
    accessSync(dataDir, constants.W_OK | constants.R_OK)
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err)
    throw new Error(`data directory ${dataDir} is not usable (LNK_DATA_DIR): ${why}`)
  }
  return join(dataDir, DB_FILE)
}

/**
 * Who copies the WAL back into the database file. 'auto': whichever connection commits past
 * AUTO_CHECKPOINT_PAGES, inside its commit (tools and tests). 'background': the checkpoint thread
 * (checkpointer.ts) while the server runs; a connection checkpoints by itself only past
 * BACKSTOP_CHECKPOINT_PAGES, should that thread be gone or unable to finish (see there).
 */
export type CheckpointMode = 'auto' | 'background'

// Every ~40 MB of WAL instead of SQLite's 4 MB: the click flush rewrites the same hot pages (this hour's
// rollups, the ends of the click indexes) many times a second, and each checkpoint copies them back to
// the database file; fewer checkpoints copy them fewer times (15-35 % more clicks/s here).
export const AUTO_CHECKPOINT_PAGES = 10_000
const BACKSTOP_CHECKPOINT_PAGES = 40_000

/**
 * A read-only connection for a thread that only reads (the uniques thread): none of the pragmas that write,
 * and no checkpoint when it closes.
 */
export function openReader(path: string, cacheMb: number): Database {
  const sqlite = new Database(path, { readonly: true, strict: true })
  sqlite.exec('PRAGMA busy_timeout = 5000')
  sqlite.exec(`PRAGMA cache_size = -${Math.max(1, Math.floor(cacheMb)) * 1024}`)
  return sqlite
}

/**
 * busyTimeoutMs: how long a write waits for another connection's write lock (default 5 s). A connection
 * on the thread that answers requests and only does background work may use 0: it gives up at once and
 * tries again later rather than stall requests.
 */
export function openDatabase(path: string, options: { busyTimeoutMs?: number; cacheMb?: number; checkpoints?: CheckpointMode } = {}): DbHandle {
  const sqlite = new Database(path, { create: true, strict: true })
  // busy_timeout first: the other pragmas may already need to wait for a writer in another process.
  sqlite.exec('PRAGMA busy_timeout = 5000')
  sqlite.exec('PRAGMA journal_mode = WAL')
  sqlite.exec('PRAGMA synchronous = NORMAL')
  sqlite.exec('PRAGMA foreign_keys = ON')
  sqlite.exec('PRAGMA temp_store = MEMORY')
  // Page cache per connection (SQLite's default is 2 MiB): the click writer's connection takes the most
  // (click, visitor and rollup indexes grow fast, and a cold page per insert is what makes a big database
  // slow); the others less, since every commit of another connection empties their cache anyway.
  sqlite.exec(`PRAGMA cache_size = -${Math.max(1, Math.floor(options.cacheMb ?? 64)) * 1024}`)
  sqlite.exec(`PRAGMA wal_autocheckpoint = ${options.checkpoints === 'background' ? BACKSTOP_CHECKPOINT_PAGES : AUTO_CHECKPOINT_PAGES}`)
  if (options.busyTimeoutMs !== undefined) sqlite.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`)
  const db = drizzle({ client: sqlite, schema })
  let closed = false
  return {
    sqlite,
    db,
    path,
    ping() {
      sqlite.query('SELECT 1').get()
    },
    close() {
      if (closed) return
      closed = true
      try {
        sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)')
      } finally {
        // true: finalize prepared statements and release the connection now. Without it the connection
        // lingers until they are collected, and a lingering one keeps the last checkpoint from completing.
        sqlite.close(true)
      }
    },
  }
}
