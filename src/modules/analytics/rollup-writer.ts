// Keeps the rollups (db/schema/analytics.ts) in step with the clicks: the click flush adds each batch here
// inside its own transaction, so a click and its share of every rollup commit together. A batch is summed
// in memory first, so each touched bucket costs one write however many clicks it got: a link's hour and
// day, and its workspace's second, minute, hour and day (the workspace's buckets take one write per flush,
// so its seconds and minutes cost next to nothing and spare a question ending inside a busy hour, or a busy
// minute, from reading raw clicks).
//
// rollupWriter() adds inside a transaction body on either engine. Where several nodes flush at once
// (PostgreSQL), each touched bucket is locked while it is read, merged and written back (repo-rollups.ts):
// the buckets of a table are read in one statement and written in one, link rollups before workspace
// rollups on every node. SQLite's one writer already holds every bucket, and its flush merges through the
// cached writer of rollup-writer-sqlite.ts, so both engines store the same rows for the same clicks.
import type { Db } from '../../db/client'
import type { Engine } from '../../db/engine'
import { Figures } from './figures'
import { groupByBucket, type Touched } from './buckets'
import type { RollupAdder, RollupScope as Scope } from './port'

export type { RollupClick } from './port'
import { bucketKey, lockBuckets, writeBuckets, type BucketRow } from './repo-rollups'
import { createRollupWriter } from './rollup-writer-sqlite'

/**
 * Adds a batch to the rollups inside the caller's transaction body. `minutes: false`: neither the
 * workspace's minute nor second buckets (the backfill: its clicks predate them); `seconds: false`: not its
 * second buckets.
 */
export function rollupWriter(engine: Engine, options: { minutes?: boolean; seconds?: boolean } = {}): RollupAdder {
  if (engine.name === 'sqlite') {
    // The body runs synchronously inside the engine's transaction on this very connection, so the prepared
    // statements write in that transaction.
    const add = createRollupWriter((engine.db as Db).$client, options)
    return function* (_tx, batch) {
      add(batch)
    }
  }
  const minutes = options.minutes ?? true
  const seconds = minutes && (options.seconds ?? true)

  function* merge(scope: Scope, touched: Touched[]) {
    if (!touched.length) return
    const stored = yield* lockBuckets(scope, touched)
    const rows: BucketRow[] = touched.map((t) => {
      const f = new Figures()
      const row = stored.get(bucketKey(t))
      if (row) f.addRow(row)
      for (let i = 0; i < t.clicks.length; i++) f.addClick(t.clicks[i]!, t.entries[i])
      return {
        id: t.id,
        grain: t.grain,
        bucket: t.bucket,
        row: { clicks: f.clicks, bots: f.bots, visitors: f.visitors.empty ? null : f.visitors.encode(), dims: f.dimsText() },
      }
    })
    yield* writeBuckets(scope, rows)
  }

  return function* (_tx, batch) {
    const touched = groupByBucket(batch, minutes, seconds)
    yield* merge(
      'l',
      touched.filter((t) => t.scope === 'l'),
    )
    yield* merge(
      'w',
      touched.filter((t) => t.scope === 'w'),
    )
  }
}
