// drizzle on Bun's PostgreSQL client, for the repos' PostgreSQL implementations (repo-pg.ts files): the same
// query builder as on SQLite over the generated tables (schema.generated.ts), so a PostgreSQL repo reads like
// its SQLite twin with `await` where that one runs synchronously.
import type { SQL } from 'bun'
import { sql } from 'drizzle-orm'
import { drizzle, type BunSQLDatabase } from 'drizzle-orm/bun-sql'
import * as schema from './schema.generated'

export type PgDb = BunSQLDatabase<typeof schema> & { $client: SQL }

/** A drizzle transaction on PostgreSQL, or the database itself: what code that joins the caller's transaction takes. */
export type PgTx = PgDb | Parameters<Parameters<PgDb['transaction']>[0]>[0]

export function pgDrizzle(client: SQL): PgDb {
  return drizzle({ client, schema }) as PgDb
}

/**
 * pg_notify inside `tx`: sent when it commits, never when it rolls back (notify.ts's publishChange, for a
 * drizzle transaction). Payloads past PostgreSQL's limit become the reset notice there; keep them short here.
 */
export async function notifyIn(tx: PgTx, channel: string, payload: string): Promise<void> {
  await tx.execute(sql`SELECT pg_notify(${channel}, ${payload})`)
}

/**
 * Bun's client under a drizzle transaction (or database), for the statements written on Bun's client
 * directly (engine/pg.ts's prepared statements, notify.ts) that must join that transaction.
 */
export function bunClientOf(tx: PgTx): SQL {
  return (tx as unknown as { session: { client: SQL } }).session.client
}
