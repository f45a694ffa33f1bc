// Keeps the rollups (db/schema/analytics.ts) in step with the clicks: the click flush adds each batch here
// inside its own transaction, so a click and its share of every rollup commit together. A batch is summed
// in memory first, so each touched bucket costs one write however many clicks it got.
//
// The buckets being filled (this hour, this day) are rewritten by every flush, so the writer keeps them
// decoded in memory instead of reading, parsing and decoding the row each time. A cached bucket is trusted
// only while the row still holds the counts the writer last wrote (one cheap primary-key read of two
// integers), so neither another writer (a second process, the main-thread fallback) nor a rolled-back
// flush can make it write stale figures. The rows themselves are read and written by repo-rollups.ts.
import type { Connection } from '../../db/client'
import { DAY_MS, HOUR_MS } from '../../platform/time'
import { type ClickFacts, Figures } from './figures'
import { visitorEntry } from './hll'
import type { Grain } from './plan'
import { createRollupRepo, type RollupScope as Scope } from './repo-rollups'

/** Buckets kept decoded; past it the cache starts afresh (it only saves reads). */
const CACHE_MAX = 8_192

export interface RollupClick extends ClickFacts {
  linkId: string
  workspaceId: string
  clickedAt: number
}

export function createRollupWriter(sqlite: Connection) {
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
    const touched = new Map<string, { scope: Scope; id: string; grain: Grain; bucket: number; clicks: RollupClick[]; entries: number[] }>()
    const into = (scope: Scope, id: string, grain: Grain, bucket: number, c: RollupClick, entry: number) => {
      const key = `${scope}\u0000${id}\u0000${grain}\u0000${bucket}`
      let t = touched.get(key)
      if (!t) touched.set(key, (t = { scope, id, grain, bucket, clicks: [], entries: [] }))
      t.clicks.push(c)
      t.entries.push(entry)
    }
    for (const c of batch) {
      const hour = c.clickedAt - (c.clickedAt % HOUR_MS)
      const day = c.clickedAt - (c.clickedAt % DAY_MS)
      const entry = c.isBot ? 0 : visitorEntry(c.visitor)
      into('l', c.linkId, 'hour', hour, c, entry)
      into('l', c.linkId, 'day', day, c, entry)
      into('w', c.workspaceId, 'hour', hour, c, entry)
      into('w', c.workspaceId, 'day', day, c, entry)
    }
    if (cache.size + touched.size > CACHE_MAX) cache.clear()
    for (const [key, t] of touched) {
      const f = current(t.scope, t.id, t.grain, t.bucket, key)
      for (let i = 0; i < t.clicks.length; i++) f.addClick(t.clicks[i]!, t.entries[i])
      rows.write(t.scope, t.id, t.grain, t.bucket, { clicks: f.clicks, bots: f.bots, visitors: f.visitors.empty ? null : f.visitors.encode(), dims: f.dimsJson() })
      cache.set(key, f)
    }
  }
}
