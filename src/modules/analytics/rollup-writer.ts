// Keeps the rollups (db/schema/analytics.ts) in step with the clicks: the click flush adds each batch here
// inside its own transaction, so a click and its share of every rollup commit together. A batch is summed
// in memory first, so each touched bucket costs one read and one write however many clicks it got.
// Plain SQL prepared once, like the rest of the flush: it is the busiest write of the service.
import type { Database } from 'bun:sqlite'
import { type ClickFacts, Figures } from './figures'

export const HOUR = 3_600_000
export const DAY = 86_400_000

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

export function createRollupWriter(sqlite: Database) {
  const statements = (table: 'link_rollups' | 'workspace_rollups', key: 'link_id' | 'workspace_id') => ({
    read: sqlite.prepare(`SELECT clicks, bots, visitors, dims FROM ${table} WHERE ${key} = ? AND grain = ? AND bucket = ?`),
    write: sqlite.prepare(
      `INSERT INTO ${table} (${key}, grain, bucket, clicks, bots, visitors, dims) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (${key}, grain, bucket) DO UPDATE SET clicks = excluded.clicks, bots = excluded.bots, visitors = excluded.visitors, dims = excluded.dims`,
    ),
  })
  const scopes = { l: statements('link_rollups', 'link_id'), w: statements('workspace_rollups', 'workspace_id') }

  /** Call inside the flush's transaction. */
  return function addToRollups(batch: readonly RollupClick[]) {
    const buckets = new Map<string, { scope: 'l' | 'w'; id: string; grain: 'hour' | 'day'; bucket: number; figures: Figures }>()
    const into = (scope: 'l' | 'w', id: string, grain: 'hour' | 'day', bucket: number, c: RollupClick) => {
      const key = `${scope}\u0000${id}\u0000${grain}\u0000${bucket}`
      let b = buckets.get(key)
      if (!b) buckets.set(key, (b = { scope, id, grain, bucket, figures: new Figures() }))
      b.figures.addClick(c)
    }
    for (const c of batch) {
      const hour = c.clickedAt - (c.clickedAt % HOUR)
      const day = c.clickedAt - (c.clickedAt % DAY)
      into('l', c.linkId, 'hour', hour, c)
      into('l', c.linkId, 'day', day, c)
      into('w', c.workspaceId, 'hour', hour, c)
      into('w', c.workspaceId, 'day', day, c)
    }
    for (const b of buckets.values()) {
      const s = scopes[b.scope]
      const stored = s.read.get(b.id, b.grain, b.bucket) as StoredRow | null
      if (stored) b.figures.addRow(stored)
      const f = b.figures
      s.write.run(b.id, b.grain, b.bucket, f.clicks, f.bots, f.visitors.empty ? null : f.visitors.encode(), f.dimsJson())
    }
  }
}
