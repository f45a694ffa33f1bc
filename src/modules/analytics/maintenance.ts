// Keeping raw clicks and rollups in order: raw clicks are pruned after LNK_CLICK_RETENTION_DAYS (rollups
// stay, so analytics keeps every figure but partial hours), and clicks recorded before rollups existed
// are rolled up once. Written once for both engines over the maintenance port (repo-maintenance.ts).
import type { Engine } from '../../db/engine'
import { DAY_MS, MINUTE_MS } from '../../platform/time'
import { Figures } from './figures'
import { quarterFloor, weekFloor } from './plan'
import { MINUTES_FROM, MONTHS_BEFORE, QUARTERS_BEFORE, SECONDS_FROM, SECONDS_KEPT_MS, WEEKS_BEFORE, type MaintenanceRepo, type SummedRollup } from './port'
import { createMaintenanceRepo } from './repo-maintenance'
import { rollupWriter } from './rollup-writer'

const PRUNE_CHUNK = 5_000
const BACKFILL_PAGE = 10_000
/** Links whose month is summed per transaction (and between two yields of the event loop). */
const MONTH_CHUNK = 500

/**
 * Deletes raw clicks older than `before`, link by link through the (link_id, clicked_at) index, at most
 * PRUNE_CHUNK rows per transaction so the click writer never waits long for the lock. Answers how many.
 */
export async function pruneRawClicks(repo: MaintenanceRepo, before: number): Promise<number> {
  let removed = 0
  // Every link, each probed through the index: scanning the clicks for the links that have old ones would
  // read the whole table every hour.
  for (const id of await repo.linkIds()) {
    // A plain read first: most links have nothing to prune, and they need not take the write lock.
    if (!(await repo.hasClicksBefore(id, before))) continue
    for (;;) {
      const n = await repo.deleteClicksBefore(id, before, PRUNE_CHUNK)
      removed += n
      if (n < PRUNE_CHUNK) break
    }
  }
  // The workspaces' minute rollups go with the raw clicks: past retention, analytics has nothing finer
  // than the hour (docs/analytics.md), and a busy workspace's minutes are the bulk of its rollups.
  await repo.deleteWorkspaceRowsBefore('minute', before)
  return removed
}

/** Deletes the workspaces' second rollups older than SECONDS_KEPT_MS (analytics reads none older). */
export function pruneSecondRollups(repo: MaintenanceRepo, now: number): Promise<number> {
  return repo.deleteWorkspaceRowsBefore('second', now - SECONDS_KEPT_MS)
}

/**
 * Marks, once, from when workspace minute rollups exist: the first start of a version that writes them.
 * Partial hours before it are read from raw clicks, as before; a minute of margin for a click buffered
 * when an older version stopped.
 */
export function markMinuteRollups(repo: MaintenanceRepo, now: number): Promise<unknown> {
  const from = now - (now % MINUTE_MS) + 2 * MINUTE_MS
  return Promise.all([repo.setMarkOnce(MINUTES_FROM, from, now), repo.setMarkOnce(SECONDS_FROM, from, now)])
}

const monthStart = (t: number) => Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth(), 1)
const nextMonth = (t: number) => Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth() + 1, 1)

/**
 * Sums each link's day rollups of every UTC month over for a day into a month rollup, so a question over
 * months (top links of a year) reads 12 rows per link instead of 365, then the month rows of every quarter
 * whose months are all summed into a quarter rollup (a year then reads 4-6 rows, mostly dense sketches that
 * merge a word at a time), and the day rollups of every UTC week (from Monday) over for a day into a week
 * rollup (the days at a range's ends outside whole months). The flush never writes them: they cost clicks
 * nothing. A span is summed once, after its last click was flushed (a click is written within a second of
 * its visit); the marks say which spans are, and only those are read as such. Answers how many rows were
 * written.
 */
export async function rollSpans(repo: MaintenanceRepo, now: number): Promise<number> {
  const months = await sumSpans(repo, now, MONTHS_BEFORE, 'day', 'month', monthStart(now - DAY_MS), monthStart, nextMonth)
  const quarters = await sumSpans(repo, now, QUARTERS_BEFORE, 'month', 'quarter', quarterFloor((await repo.mark(MONTHS_BEFORE))!), quarterFloor, nextQuarter)
  const weeks = await sumSpans(repo, now, WEEKS_BEFORE, 'day', 'week', weekFloor(now - DAY_MS), weekFloor, (t) => t + 7 * DAY_MS)
  return months + quarters + weeks
}

/** rollSpans on a database. */
export const rollMonths = (engine: Engine, now: number) => rollSpans(createMaintenanceRepo(engine), now)

const nextQuarter = (t: number) => Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth() + 3, 1)

/** Sums each link's `from` rows of every span before `until` into a `to` row, span by span behind `markKey`. */
async function sumSpans(
  repo: MaintenanceRepo,
  now: number,
  markKey: string,
  from: 'day' | 'month',
  to: 'week' | 'month' | 'quarter',
  until: number,
  floor: (t: number) => number,
  next: (t: number) => number,
) {
  let span = (await repo.mark(markKey)) ?? floor((await repo.firstDay()) ?? until)
  let written = 0
  while (span < until) {
    const end = next(span)
    const ids = await repo.linkIds()
    for (let i = 0; i < ids.length; i += MONTH_CHUNK) {
      const rows: SummedRollup[] = []
      for (const linkId of ids.slice(i, i + MONTH_CHUNK)) {
        const parts = await repo.linkRows(linkId, from, span, end)
        if (!parts.length) continue
        const f = new Figures()
        f.addRows(parts)
        rows.push({
          linkId,
          bucket: span,
          figures: { clicks: f.clicks, bots: f.bots, visitors: f.visitors.empty ? null : f.visitors.encode(), dims: f.dimsText() },
        })
      }
      if (rows.length) await repo.writeSums(to, rows)
      written += rows.length
      // A first run sums every past span: let requests through between chunks.
      await new Promise((resolve) => setImmediate(resolve))
    }
    span = end
    await repo.setMark(markKey, span, now)
  }
  if ((await repo.mark(markKey)) === undefined) await repo.setMark(markKey, until, now)
  return written
}

/**
 * Rolls up the clicks stored before the rollup tables existed (an install upgraded to this version), once:
 * the rollups and the mark that it happened commit together, so it can neither be skipped nor repeated. The
 * first start (the first node, on PostgreSQL) of this version does it; the others answer 0. One transaction,
 * which SQLite runs before this returns: its start-up need not wait for it.
 */
export function backfillRollups(engine: Engine, now: number): Promise<number> {
  return createMaintenanceRepo(engine).backfill(rollupWriter(engine, { minutes: false }), BACKFILL_PAGE, now)
}
