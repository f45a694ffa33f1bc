// The rollup rows (db/schema/analytics.ts) as SQLite's click flush reads and writes them: one bucket at a
// time by primary key. Plain SQL prepared once, like the rest of the flush: it is the busiest write of the
// service. Synchronous: it runs inside the flush's transaction, on the flush's connection.
import type { Connection } from '../../db/client'
import type { Grain } from './plan'
import type { RollupScope, StoredRollup } from './port'

export function createRollupRepo(sqlite: Connection) {
  const statements = (table: 'link_rollups' | 'workspace_rollups', key: 'link_id' | 'workspace_id') => ({
    counts: sqlite.prepare(`SELECT clicks, bots FROM ${table} WHERE ${key} = ? AND grain = ? AND bucket = ?`),
    read: sqlite.prepare(`SELECT clicks, bots, visitors, dims FROM ${table} WHERE ${key} = ? AND grain = ? AND bucket = ?`),
    write: sqlite.prepare(
      `INSERT INTO ${table} (${key}, grain, bucket, clicks, bots, visitors, dims) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (${key}, grain, bucket) DO UPDATE SET clicks = excluded.clicks, bots = excluded.bots, visitors = excluded.visitors, dims = excluded.dims`,
    ),
  })
  const scopes = { l: statements('link_rollups', 'link_id'), w: statements('workspace_rollups', 'workspace_id') }
  return {
    /** The bucket's two counts only: enough to tell whether a copy held in memory is still what the row holds. */
    counts: (scope: RollupScope, id: string, grain: Grain, bucket: number) =>
      scopes[scope].counts.get(id, grain, bucket) as Pick<StoredRollup, 'clicks' | 'bots'> | null,
    read: (scope: RollupScope, id: string, grain: Grain, bucket: number) => scopes[scope].read.get(id, grain, bucket) as StoredRollup | null,
    /** Inserts the bucket or replaces its figures. */
    write(scope: RollupScope, id: string, grain: Grain, bucket: number, row: StoredRollup) {
      scopes[scope].write.run(id, grain, bucket, row.clicks, row.bots, row.visitors, row.dims)
    },
  }
}
