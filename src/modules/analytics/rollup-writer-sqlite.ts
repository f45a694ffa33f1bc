// rollup-writer.ts's writer on SQLite, for the click flush there: a batch summed by the same groupByBucket()
// and merged with the same Figures, each touched bucket read and written by primary key through statements
// prepared once (repo-rollups-sqlite.ts), inside the flush's transaction (SQLite's one writer holds every
// bucket while it merges).
//
// The buckets being filled (this hour, this day) are rewritten by every flush, so the writer keeps them
// decoded in memory instead of reading, parsing and decoding the row each time. A cached bucket is trusted
// only while the row still holds the counts the writer last wrote (one cheap primary-key read of two
// integers), so neither another writer (a second process, the main-thread fallback) nor a rolled-back
// flush can make it write stale figures.
import type { Connection } from '../../db/client'
import { Figures } from './figures'
import type { Grain } from './plan'
import type { RollupScope as Scope } from './port'
import { createRollupRepo } from './repo-rollups-sqlite'
import { groupByBucket } from './buckets'
import type { RollupClick } from './port'

/** Buckets kept decoded; past it the cache starts afresh (it only saves reads). */
const CACHE_MAX = 8_192

/**
 * `minutes: false`: neither the workspace's minute nor second buckets (the backfill: its clicks predate
 * them); `seconds: false`: not its second buckets (clicks seeded over a past year, whose seconds would be
 * pruned at once).
 */
export function createRollupWriter(sqlite: Connection, options: { minutes?: boolean; seconds?: boolean } = {}) {
  const minutes = options.minutes ?? true
  const seconds = minutes && (options.seconds ?? true)
  const rows = createRollupRepo(sqlite)
  const cache = new Map<string, Figures>()

  /** The bucket's figures as stored, from the cache when it is still what the row holds. */
  function current(scope: Scope, id: string, grain: Grain, bucket: number, key: string): Figures {
    const cached = cache.get(key)
    if (cached) {
      const row = rows.counts(scope, id, grain, bucket)
      if (row && row.clicks === cached.clicks && row.bots === cached.bots) return cached
    }
    const f = new Figures()
    const stored = rows.read(scope, id, grain, bucket)
    if (stored) f.addRow(stored)
    return f
  }

  /** Call inside the flush's transaction. */
  return function addToRollups(batch: readonly RollupClick[]) {
    const touched = groupByBucket(batch, minutes, seconds)
    if (cache.size + touched.length > CACHE_MAX) cache.clear()
    for (const t of touched) {
      const key = `${t.scope}${t.grain}${t.bucket}\u0000${t.id}`
      const f = current(t.scope, t.id, t.grain, t.bucket, key)
      for (let i = 0; i < t.clicks.length; i++) f.addClick(t.clicks[i]!, t.entries[i])
      rows.write(t.scope, t.id, t.grain, t.bucket, {
        clicks: f.clicks,
        bots: f.bots,
        visitors: f.visitors.empty ? null : f.visitors.encode(),
        dims: f.dimsText(),
      })
      cache.set(key, f)
    }
  }
}
