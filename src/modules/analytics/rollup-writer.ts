// Keeps the rollups (db/schema/analytics.ts) in step with the clicks: the click flush adds each batch here
// inside its own transaction, so a click and its share of every rollup commit together. A batch is summed
// in memory first, so each touched bucket costs one write however many clicks it got.
//
// The buckets being filled (this hour, this day) are rewritten by every flush, so the writer keeps them
// decoded in memory instead of reading, parsing and decoding the row each time. A cached bucket is trusted
// only while the row still holds the counts the writer last wrote (one cheap primary-key read of two
// integers), so neither another writer (a second process, the main-thread fallback) nor a rolled-back
// flush can make it write stale figures. Plain SQL prepared once, like the rest of the flush: it is the busiest write of the service.
import type { Database } from 'bun:sqlite'
import { type ClickFacts, Figures } from './figures'
import { visitorEntry } from './hll'

export const HOUR = 3_600_000
export const DAY = 86_400_000
/** Buckets kept decoded; past it the cache starts afresh (it only saves reads). */
const CACHE_MAX = 8_192

export interface RollupClick extends ClickFacts {
  linkId: string
  workspaceId: string
  clickedAt: number
}

interface StoredRow {
  clicks: number
  bots: number
  visitors: Uint8Array | null
  dims: string
}

type Scope = 'l' | 'w'
type Grain = 'hour' | 'day'

export function createRollupWriter(sqlite: Database) {
  const statements = (table: 'link_rollups' | 'workspace_rollups', key: 'link_id' | 'workspace_id') => ({
    counts: sqlite.prepare(`SELECT clicks, bots FROM ${table} WHERE ${key} = ? AND grain = ? AND bucket = ?`),
    read: sqlite.prepare(`SELECT clicks, bots, visitors, dims FROM ${table} WHERE ${key} = ? AND grain = ? AND bucket = ?`),
    write: sqlite.prepare(
      `INSERT INTO ${table} (${key}, grain, bucket, clicks, bots, visitors, dims) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (${key}, grain, bucket) DO UPDATE SET clicks = excluded.clicks, bots = excluded.bots, visitors = excluded.visitors, dims = excluded.dims`,
    ),
  })
  const scopes = { l: statements('link_rollups', 'link_id'), w: statements('workspace_rollups', 'workspace_id') }
  const cache = new Map<string, Figures>()

  /** The bucket's figures as stored, from the cache when it is still what the row holds. */
  function current(scope: Scope, id: string, grain: Grain, bucket: number, key: string): Figures {
    const s = scopes[scope]
    const cached = cache.get(key)
    if (cached) {
      const row = s.counts.get(id, grain, bucket) as { clicks: number; bots: number } | null
      if (row && row.clicks === cached.clicks && row.bots === cached.bots) return cached
    }
    const f = new Figures()
    const stored = s.read.get(id, grain, bucket) as StoredRow | null
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
      const hour = c.clickedAt - (c.clickedAt % HOUR)
      const day = c.clickedAt - (c.clickedAt % DAY)
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
      scopes[t.scope].write.run(t.id, t.grain, t.bucket, f.clicks, f.bots, f.visitors.empty ? null : f.visitors.encode(), f.dimsJson())
      cache.set(key, f)
    }
  }
}
