// The maintenance jobs' rows (repo-maintenance.ts has the meaning) on PostgreSQL. Every method is awaited,
// and the backfill hands its writer the transaction to write in (on SQLite the writer shares the one
// connection). Several nodes may run a job at once: writes are upserts or deletes that another node's
// identical run cannot break, and the backfill's decision taken on a read (no rollups yet) is guarded.
import { and, asc, eq, gt, gte, inArray, lt, min, sql } from 'drizzle-orm'
import type { PgDb, PgTx } from '../../db/pg/client'
import { clicks, linkRollups, links, settings, workspaceRollups, workspaces } from '../../db/pg/schema.generated'
import type { StoredRollup } from './repo-rollups'
import type { RollupClick } from './rollup-writer'

/** The settings row that says the backfill happened (repo-maintenance.ts's; its value: how many clicks). */
const BACKFILL_MARK = 'rollups_backfilled'
/** Rows per upsert statement: well under PostgreSQL's 65,535 parameters at 7 a row. */
const SUMS_PER_STATEMENT = 1_000

/** The maintenance port, awaited. */
export interface MaintenanceRepoPg {
  mark(key: string): Promise<number | undefined>
  setMark(key: string, value: number, now: number): Promise<void>
  setMarkOnce(key: string, value: number, now: number): Promise<void>
  firstDay(): Promise<number | undefined>
  linkRows(linkId: string, grain: 'day' | 'month', from: number, to: number): Promise<StoredRollup[]>
  writeSums(grain: 'week' | 'month' | 'quarter', rows: { linkId: string; bucket: number; figures: StoredRollup }[]): Promise<void>
  deleteWorkspaceRowsBefore(grain: 'minute' | 'second', at: number): Promise<number>
  linkIds(): Promise<string[]>
  hasClicksBefore(linkId: string, at: number): Promise<boolean>
  deleteClicksBefore(linkId: string, at: number, limit: number): Promise<number>
  backfillDone(): Promise<boolean>
  /** `add` writes each page's rollups in `tx`, the backfill's transaction (rollup-writer-pg.ts's writer fits). */
  backfill(add: (tx: PgTx, page: RollupClick[]) => Promise<void>, pageSize: number, now: number): Promise<number>
}

export function createMaintenanceRepoPg(db: PgDb): MaintenanceRepoPg {
  const clickFacts = {
    id: clicks.id,
    linkId: clicks.linkId,
    workspaceId: clicks.workspaceId,
    clickedAt: clicks.clickedAt,
    visitor: clicks.visitorHash,
    isBot: clicks.isBot,
    country: clicks.country,
    referrer: clicks.referrerHost,
    browser: clicks.browser,
    os: clicks.os,
    device: clicks.device,
  }

  return {
    async mark(key) {
      const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, key))
      return row === undefined ? undefined : Number(row.value)
    },

    async setMark(key, value, now) {
      await db.insert(settings).values({ key, value: String(value), createdAt: now }).onConflictDoUpdate({ target: settings.key, set: { value: String(value) } })
    },

    async setMarkOnce(key, value, now) {
      await db.insert(settings).values({ key, value: String(value), createdAt: now }).onConflictDoNothing()
    },

    async firstDay() {
      const [row] = await db.select({ first: min(workspaceRollups.bucket) }).from(workspaceRollups).where(eq(workspaceRollups.grain, 'day'))
      return row?.first ?? undefined
    },

    linkRows: (linkId, grain, from, to) =>
      db
        .select({ clicks: linkRollups.clicks, bots: linkRollups.bots, visitors: linkRollups.visitors, dims: linkRollups.dims })
        .from(linkRollups)
        .where(and(eq(linkRollups.linkId, linkId), eq(linkRollups.grain, grain), gte(linkRollups.bucket, from), lt(linkRollups.bucket, to))),

    async writeSums(grain, rows) {
      // A later row for the same link replaces an earlier one, as SQLite's row-by-row upserts leave it; one
      // statement cannot touch a row twice.
      const byLink = new Map(rows.map((r) => [`${r.linkId}\u0000${r.bucket}`, r]))
      const values = [...byLink.values()].map((r) => ({
        linkId: r.linkId,
        grain,
        bucket: r.bucket,
        clicks: r.figures.clicks,
        bots: r.figures.bots,
        visitors: r.figures.visitors ? Buffer.from(r.figures.visitors) : null,
        dims: r.figures.dims,
      }))
      if (!values.length) return
      await db.transaction(async (tx) => {
        for (let i = 0; i < values.length; i += SUMS_PER_STATEMENT) {
          await tx
            .insert(linkRollups)
            .values(values.slice(i, i + SUMS_PER_STATEMENT))
            .onConflictDoUpdate({
              target: [linkRollups.linkId, linkRollups.grain, linkRollups.bucket],
              set: { clicks: sql`excluded.clicks`, bots: sql`excluded.bots`, visitors: sql`excluded.visitors`, dims: sql`excluded.dims` },
            })
        }
      })
    },

    async deleteWorkspaceRowsBefore(grain, at) {
      let removed = 0
      for (const { id } of await db.select({ id: workspaces.id }).from(workspaces)) {
        const gone = await db
          .delete(workspaceRollups)
          .where(and(eq(workspaceRollups.workspaceId, id), eq(workspaceRollups.grain, grain), lt(workspaceRollups.bucket, at)))
          .returning({ b: workspaceRollups.bucket })
        removed += gone.length
      }
      return removed
    },

    async linkIds() {
      return (await db.select({ id: links.id }).from(links)).map((r) => r.id)
    },

    async hasClicksBefore(linkId, at) {
      const found = await db.select({ id: clicks.id }).from(clicks).where(and(eq(clicks.linkId, linkId), lt(clicks.clickedAt, at))).limit(1)
      return found.length > 0
    },

    async deleteClicksBefore(linkId, at, limit) {
      // Rows another node's prune holds are skipped rather than waited for: it deletes them, and this chunk
      // is full of rows still to delete, so neither node ends its loop early on rows the other took.
      const chunk = db
        .select({ id: clicks.id })
        .from(clicks)
        .where(and(eq(clicks.linkId, linkId), lt(clicks.clickedAt, at)))
        .limit(limit)
        .for('update', { skipLocked: true })
      return (await db.delete(clicks).where(inArray(clicks.id, chunk)).returning({ id: clicks.id })).length
    },

    async backfillDone() {
      return (await db.select({ key: settings.key }).from(settings).where(eq(settings.key, BACKFILL_MARK))).length > 0
    },

    async backfill(add, pageSize, now) {
      return db.transaction(async (tx) => {
        // The mark is claimed first (SQLite writes it last, under its one-writer lock): a second node's
        // insert waits on this row until the first commits and then finds it, so the clicks are rolled up
        // once. That node answers 0 (nothing rolled up by it) where SQLite's second writer fails on the key.
        const claimed = await tx.insert(settings).values({ key: BACKFILL_MARK, value: '0', createdAt: now }).onConflictDoNothing().returning({ key: settings.key })
        if (!claimed.length) return 0
        const fresh = !(await tx.select({ id: workspaceRollups.workspaceId }).from(workspaceRollups).limit(1)).length
        let total = 0
        for (let after = ''; fresh; ) {
          const page = await tx.select(clickFacts).from(clicks).where(gt(clicks.id, after)).orderBy(asc(clicks.id)).limit(pageSize)
          if (!page.length) break
          await add(tx, page)
          total += page.length
          after = page[page.length - 1]!.id
        }
        await tx.update(settings).set({ value: String(total) }).where(eq(settings.key, BACKFILL_MARK))
        return total
      })
    },
  }
}
