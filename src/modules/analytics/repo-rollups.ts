// The rollup rows as a flush merges into them where several nodes flush at once (PostgreSQL): every bucket a
// flush touches at once, in a few statements of a transaction body, where repo-rollups-sqlite.ts goes one
// bucket at a time by primary key (cheap on a local file, one round trip each over a network). Arrays
// through unnest() keep each statement at one parameter per column, however many buckets it carries.
import { sql } from 'drizzle-orm'
import { rawRows, rawRun, type Steps } from '../../db/engine'
import type { Grain } from './plan'
import type { RollupScope, StoredRollup } from './port'

export interface BucketKey {
  id: string
  grain: Grain
  bucket: number
}

export interface BucketRow extends BucketKey {
  row: StoredRollup
}

const TABLES = {
  l: { table: sql.raw('link_rollups'), key: sql.raw('link_id') },
  w: { table: sql.raw('workspace_rollups'), key: sql.raw('workspace_id') },
}

export const bucketKey = (k: BucketKey) => `${k.id}\u0000${k.grain}\u0000${k.bucket}`

const keyArrays = (keys: readonly BucketKey[]) =>
  sql`unnest(${sql.param(keys.map((k) => k.id))}::text[], ${sql.param(keys.map((k) => k.grain))}::text[], ${sql.param(keys.map((k) => k.bucket))}::int8[])`

/**
 * Locks the buckets for the rest of the transaction and answers what they hold, by bucketKey(). Another node
 * may be flushing into the same buckets (a workspace's second, hour and day above all): the merge reads,
 * merges in memory and writes back, which is only safe while no one else can write the row in between. FOR
 * UPDATE locks only rows that exist, so missing buckets are first created empty (ON CONFLICT DO NOTHING waits
 * for a node that is creating the same one and then sees its row). Both statements take the rows in key
 * order, the same on every node, so two flushes wait for each other instead of deadlocking.
 */
export function* lockBuckets(scope: RollupScope, keys: readonly BucketKey[]): Steps<Map<string, StoredRollup>> {
  const { table, key } = TABLES[scope]
  yield* rawRun(sql`INSERT INTO ${table} (${key}, grain, bucket, clicks, bots, visitors, dims)
    SELECT k.id, k.grain, k.bucket, 0, 0, NULL, '' FROM ${keyArrays(keys)} AS k(id, grain, bucket)
    ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING`)
  const rows = yield* rawRows<{
    id: string
    grain: Grain
    bucket: string
    clicks: string
    bots: string
    visitors: Uint8Array | null
    dims: string
  }>(sql`SELECT r.${key} AS id, r.grain, r.bucket, r.clicks, r.bots, r.visitors, r.dims
    FROM ${table} r JOIN ${keyArrays(keys)} AS k(id, grain, bucket) ON r.${key} = k.id AND r.grain = k.grain AND r.bucket = k.bucket
    ORDER BY r.${key}, r.grain, r.bucket FOR UPDATE OF r`)
  const out = new Map<string, StoredRollup>()
  // bigint columns come back as text from a raw statement.
  for (const r of rows)
    out.set(bucketKey({ id: r.id, grain: r.grain, bucket: Number(r.bucket) }), {
      clicks: Number(r.clicks),
      bots: Number(r.bots),
      visitors: r.visitors,
      dims: r.dims,
    })
  return out
}

// A view on the same bytes: Bun sends a Buffer as bytea.
const asBytea = (v: Uint8Array | null) => (v ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : null)

/** Replaces the figures of buckets locked by lockBuckets() in this transaction: one statement for all. */
export function* writeBuckets(scope: RollupScope, rows: readonly BucketRow[]): Steps<void> {
  const { table, key } = TABLES[scope]
  const p = <T>(f: (r: BucketRow) => T) => sql.param(rows.map(f))
  yield* rawRun(sql`INSERT INTO ${table} (${key}, grain, bucket, clicks, bots, visitors, dims)
    SELECT * FROM unnest(${p((r) => r.id)}::text[], ${p((r) => r.grain)}::text[], ${p((r) => r.bucket)}::int8[], ${p((r) => r.row.clicks)}::int8[],
      ${p((r) => r.row.bots)}::int8[], ${p((r) => asBytea(r.row.visitors))}::bytea[], ${p((r) => r.row.dims)}::text[])
    ON CONFLICT (${key}, grain, bucket) DO UPDATE SET clicks = excluded.clicks, bots = excluded.bots, visitors = excluded.visitors, dims = excluded.dims`)
}
