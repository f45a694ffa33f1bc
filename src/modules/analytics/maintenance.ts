// Keeping raw clicks and rollups in order: raw clicks are pruned after LNK_CLICK_RETENTION_DAYS (rollups
// stay, so analytics keeps every figure but partial hours), and clicks recorded before rollups existed
// are rolled up once. Synchronous: both run as short write transactions on the caller's connection.
import type { Db } from '../../db/client'
import { DAY_MS, MINUTE_MS } from '../../platform/time'
import { Figures } from './figures'
import { MINUTES_FROM, MONTHS_BEFORE } from './repo'
import { createMaintenanceRepo } from './repo-maintenance'
import { createRollupWriter } from './rollup-writer'

const PRUNE_CHUNK = 5_000
const BACKFILL_PAGE = 10_000
/** Links whose month is summed per transaction (and between two yields of the event loop). */
const MONTH_CHUNK = 500

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
  // The workspaces' minute rollups go with the raw clicks: past retention, analytics has nothing finer
  // than the hour (docs/analytics.md), and a busy workspace's minutes are the bulk of its rollups.
  repo.deleteMinutesBefore(before)
  return removed
}

/**
 * Marks, once, from when workspace minute rollups exist: the first start of a version that writes them.
 * Partial hours before it are read from raw clicks, as before; a minute of margin for a click buffered
 * when an older version stopped.
 */
export function markMinuteRollups(db: Db, now: number) {
  createMaintenanceRepo(db).setMarkOnce(MINUTES_FROM, now - (now % MINUTE_MS) + 2 * MINUTE_MS, now)
}

const monthStart = (t: number) => Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth(), 1)
const nextMonth = (t: number) => Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth() + 1, 1)

/**
 * Sums each link's day rollups of every UTC month over for a day into a month rollup, so a question over
 * months (top links of a year) reads 12 rows per link instead of 365. The flush never writes a month row:
 * it costs clicks nothing. A month is summed once, after its last click was flushed (a click is written
 * within a second of its visit); the mark says which months are, and only those are read as months.
 * Answers how many month rows were written.
 */
export async function rollMonths(db: Db, now: number): Promise<number> {
  const repo = createMaintenanceRepo(db)
  const until = monthStart(now - DAY_MS)
  let month = repo.mark(MONTHS_BEFORE) ?? monthStart(repo.firstDay() ?? until)
  let written = 0
  while (month < until) {
    const next = nextMonth(month)
    const ids = repo.linkIds()
    for (let i = 0; i < ids.length; i += MONTH_CHUNK) {
      const rows = []
      for (const linkId of ids.slice(i, i + MONTH_CHUNK)) {
        const days = repo.dayRows(linkId, month, next)
        if (!days.length) continue
        const f = new Figures()
        for (const d of days) f.addRow(d)
        rows.push({ linkId, bucket: month, figures: { clicks: f.clicks, bots: f.bots, visitors: f.visitors.empty ? null : f.visitors.encode(), dims: f.dimsText() } })
      }
      if (rows.length) repo.writeMonths(rows)
      written += rows.length
      // A first run sums every past month: let requests through between chunks.
      await new Promise((resolve) => setImmediate(resolve))
    }
    month = next
    repo.setMark(MONTHS_BEFORE, month, now)
  }
  if (repo.mark(MONTHS_BEFORE) === undefined) repo.setMark(MONTHS_BEFORE, until, now)
  return written
}

/**
 * Rolls up the clicks stored before the rollup tables existed (an install upgraded to this version), once:
 * the rollups and the mark that it happened commit together, so it can neither be skipped nor repeated.
 */
export function backfillRollups(db: Db, now: number): number {
  const repo = createMaintenanceRepo(db)
  if (repo.backfillDone()) return 0
  return repo.backfill(createRollupWriter(db.$client, { minutes: false }), BACKFILL_PAGE, now)
}
