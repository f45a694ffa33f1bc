// Keeping raw clicks and rollups in order: raw clicks are pruned after LNK_CLICK_RETENTION_DAYS (rollups
// stay, so analytics keeps every figure but partial hours), and clicks recorded before rollups existed
// are rolled up once. Synchronous: both run as short write transactions on the caller's connection.
import type { Db } from '../../db/client'
import { createMaintenanceRepo } from './repo-maintenance'
import { createRollupWriter } from './rollup-writer'

const PRUNE_CHUNK = 5_000
const BACKFILL_PAGE = 10_000

/**
 * Deletes raw clicks older than `before`, link by link through the (link_id, clicked_at) index, at most
 * PRUNE_CHUNK rows per transaction so the click writer never waits long for the lock. Answers how many.
 */
export function pruneRawClicks(db: Db, before: number): number {
  const repo = createMaintenanceRepo(db)
  let removed = 0
  // Every link, each probed through the index: scanning the clicks for the links that have old ones would
  // read the whole table every hour.
  for (const id of repo.linkIds()) {
    // A plain read first: most links have nothing to prune, and they need not take the write lock.
    if (!repo.hasClicksBefore(id, before)) continue
    for (;;) {
      const n = repo.deleteClicksBefore(id, before, PRUNE_CHUNK)
      removed += n
      if (n < PRUNE_CHUNK) break
    }
  }
  return removed
}

/**
 * Rolls up the clicks stored before the rollup tables existed (an install upgraded to this version), once:
 * the rollups and the mark that it happened commit together, so it can neither be skipped nor repeated.
 */
export function backfillRollups(db: Db, now: number): number {
  const repo = createMaintenanceRepo(db)
  if (repo.backfillDone()) return 0
  return repo.backfill(createRollupWriter(db.$client), BACKFILL_PAGE, now)
}
