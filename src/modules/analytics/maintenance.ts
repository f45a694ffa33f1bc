// Keeping raw clicks and rollups in order: raw clicks are pruned after LNK_CLICK_RETENTION_DAYS (rollups
// stay, so analytics keeps every figure but partial hours), and clicks recorded before rollups existed
// are rolled up once. Synchronous: both run as short write transactions on the caller's connection.
import type { Db } from '../../db/client'
import { createRollupWriter, type RollupClick } from './rollup-writer'

const PRUNE_CHUNK = 5_000
const BACKFILL_MARK = 'rollups_backfilled'

/**
 * Deletes raw clicks older than `before`, link by link through the (link_id, clicked_at) index, at most
 * PRUNE_CHUNK rows per transaction so the click writer never waits long for the lock. Answers how many.
 */
export function pruneRawClicks(db: Db, before: number): number {
  const sqlite = db.$client
  // Every link, each probed through the index: scanning the clicks for the links that have old ones would
  // read the whole table every hour.
  const linkIds = (sqlite.query('SELECT id FROM links').all() as { id: string }[]).map((r) => r.id)
  const chunk = sqlite.prepare(
    `DELETE FROM clicks WHERE rowid IN (SELECT rowid FROM clicks WHERE link_id = ? AND clicked_at < ? LIMIT ${PRUNE_CHUNK})`,
  )
  const hasOld = sqlite.prepare('SELECT 1 FROM clicks WHERE link_id = ? AND clicked_at < ? LIMIT 1')
  let removed = 0
  for (const id of linkIds) {
    // A plain read first: most links have nothing to prune, and they need not take the write lock.
    if (!hasOld.get(id, before)) continue
    for (;;) {
      const n = sqlite.transaction(() => chunk.run(id, before).changes).immediate()
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
  const sqlite = db.$client
  if (sqlite.query('SELECT 1 FROM settings WHERE key = ?').get(BACKFILL_MARK)) return 0
  const addToRollups = createRollupWriter(sqlite)
  const page = sqlite.prepare(
    `SELECT rowid AS r, link_id AS linkId, workspace_id AS workspaceId, clicked_at AS clickedAt, visitor_hash AS visitor, is_bot AS isBot,
            country, referrer_host AS referrer, browser, os, device FROM clicks WHERE rowid > ? ORDER BY rowid LIMIT 10000`,
  )
  return sqlite
    .transaction(() => {
      // Rollups already written mean the clicks were rolled up as they came: nothing to add.
      const fresh = !sqlite.query('SELECT 1 FROM workspace_rollups LIMIT 1').get()
      let total = 0
      for (let after = 0; fresh; ) {
        const rows = page.all(after) as (Omit<RollupClick, 'isBot'> & { r: number; isBot: number })[]
        if (!rows.length) break
        addToRollups(rows.map((c) => ({ ...c, isBot: c.isBot === 1 })))
        total += rows.length
        after = rows[rows.length - 1]!.r
      }
      sqlite.prepare('INSERT INTO settings (key, value, created_at) VALUES (?, ?, ?)').run(BACKFILL_MARK, String(total), now)
      return total
    })
    .immediate()
}
