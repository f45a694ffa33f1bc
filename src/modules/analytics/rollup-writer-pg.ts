// rollup-writer.ts on PostgreSQL: the click flush adds its batch to the rollups inside its own transaction,
// summed into the same buckets by the same groupByBucket() and merged with the same Figures and sketches,
// so both engines store the same rows for the same clicks. Several nodes flush at once here, so each
// touched bucket is locked while it is read, merged and written back (repo-rollups-pg.ts): the buckets of a
// table are read in one statement and written in one, link rollups before workspace rollups on every node.
import type { PgTx } from '../../db/pg/client'
import { Figures } from './figures'
import { bucketKey, lockBuckets, writeBuckets, type BucketRow } from './repo-rollups-pg'
import { groupByBucket, type RollupClick, type Touched } from './rollup-writer'

/** The options of createRollupWriter(). */
export function createRollupWriterPg(options: { minutes?: boolean; seconds?: boolean } = {}) {
  const minutes = options.minutes ?? true
  const seconds = minutes && (options.seconds ?? true)

  async function merge(tx: PgTx, scope: 'l' | 'w', touched: Touched[]) {
    if (!touched.length) return
    const stored = await lockBuckets(tx, scope, touched)
    const rows: BucketRow[] = touched.map((t) => {
      const f = new Figures()
      const row = stored.get(bucketKey(t))
      if (row) f.addRow(row)
      for (let i = 0; i < t.clicks.length; i++) f.addClick(t.clicks[i]!, t.entries[i])
      return { id: t.id, grain: t.grain, bucket: t.bucket, row: { clicks: f.clicks, bots: f.bots, visitors: f.visitors.empty ? null : f.visitors.encode(), dims: f.dimsText() } }
    })
    await writeBuckets(tx, scope, rows)
  }

  /** Call inside the flush's transaction. */
  return async function addToRollupsPg(tx: PgTx, batch: readonly RollupClick[]): Promise<void> {
    const touched = groupByBucket(batch, minutes, seconds)
    await merge(tx, 'l', touched.filter((t) => t.scope === 'l'))
    await merge(tx, 'w', touched.filter((t) => t.scope === 'w'))
  }
}
