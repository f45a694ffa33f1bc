// The rows maintenance.ts works on: raw clicks past retention, and the clicks stored before rollups existed.
// Synchronous: both run as short write transactions on the caller's connection (at start-up, in a job).
import { and, asc, eq, gt, gte, inArray, lt, min, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { clicks, linkRollups, links, settings, workspaceRollups, workspaces } from '../../db/schema'
import type { StoredRollup } from './repo-rollups'
import type { RollupClick } from './rollup-writer'

/** The settings row that says the backfill happened (its value: how many clicks it rolled up). */
const BACKFILL_MARK = 'rollups_backfilled'

export function createMaintenanceRepo(db: Db) {
  const before = { linkId: sql.placeholder('linkId'), before: sql.placeholder('before') }
  const oldClicks = and(eq(clicks.linkId, before.linkId), lt(clicks.clickedAt, before.before))
  const hasOld = db.select({ id: clicks.id }).from(clicks).where(oldClicks).limit(1).prepare()
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

  const mark = (key: string): number | undefined => {
    const row = db.select({ value: settings.value }).from(settings).where(eq(settings.key, key)).get()
    return row === undefined ? undefined : Number(row.value)
  }
  const setMark = (key: string, value: number, now: number) =>
    db.insert(settings).values({ key, value: String(value), createdAt: now }).onConflictDoUpdate({ target: settings.key, set: { value: String(value) } }).run()

  return {
    mark,
    setMark,

    /** Sets the mark unless it is set already: the first start of a version decides it. */
    setMarkOnce: (key: string, value: number, now: number) => db.insert(settings).values({ key, value: String(value), createdAt: now }).onConflictDoNothing().run(),

    /** The earliest day any workspace has clicks in (its rollups cover every link's), if any. */
    firstDay: (): number | undefined => db.select({ first: min(workspaceRollups.bucket) }).from(workspaceRollups).where(eq(workspaceRollups.grain, 'day')).get()?.first ?? undefined,

    /** A link's rows of one grain in [from, to), dimensions included. */
    linkRows: (linkId: string, grain: 'day' | 'month', from: number, to: number): StoredRollup[] =>
      db
        .select({ clicks: linkRollups.clicks, bots: linkRollups.bots, visitors: linkRollups.visitors, dims: linkRollups.dims })
        .from(linkRollups)
        .where(and(eq(linkRollups.linkId, linkId), eq(linkRollups.grain, grain), gte(linkRollups.bucket, from), lt(linkRollups.bucket, to)))
        .all(),

    /** Writes week, month or quarter rows (replacing any), in one transaction. */
    writeSums(grain: 'week' | 'month' | 'quarter', rows: { linkId: string; bucket: number; figures: StoredRollup }[]) {
      db.transaction(
        (tx) => {
          for (const r of rows) {
            const values = { clicks: r.figures.clicks, bots: r.figures.bots, visitors: r.figures.visitors ? Buffer.from(r.figures.visitors) : null, dims: r.figures.dims }
            tx.insert(linkRollups)
              .values({ linkId: r.linkId, grain, bucket: r.bucket, ...values })
              .onConflictDoUpdate({ target: [linkRollups.linkId, linkRollups.grain, linkRollups.bucket], set: values })
              .run()
          }
        },
        { behavior: 'immediate' },
      )
    },

    /** Deletes every workspace's minute or second rows older than `at`; answers how many. */
    deleteWorkspaceRowsBefore(grain: 'minute' | 'second', at: number): number {
      let removed = 0
      for (const { id } of db.select({ id: workspaces.id }).from(workspaces).all()) {
        removed += db
          .delete(workspaceRollups)
          .where(and(eq(workspaceRollups.workspaceId, id), eq(workspaceRollups.grain, grain), lt(workspaceRollups.bucket, at)))
          .returning({ b: workspaceRollups.bucket })
          .all().length
      }
      return removed
    },

    linkIds: (): string[] => db.select({ id: links.id }).from(links).all().map((r) => r.id),

    hasClicksBefore: (linkId: string, at: number): boolean => hasOld.get({ linkId, before: at }) !== undefined,

    /** Deletes up to `limit` of the link's clicks older than `at`, in a transaction of its own; answers how many. */
    deleteClicksBefore(linkId: string, at: number, limit: number): number {
      const chunk = db.select({ id: clicks.id }).from(clicks).where(and(eq(clicks.linkId, linkId), lt(clicks.clickedAt, at))).limit(limit)
      return db.transaction((tx) => tx.delete(clicks).where(inArray(clicks.id, chunk)).returning({ id: clicks.id }).all().length, { behavior: 'immediate' })
    },

    backfillDone: (): boolean => db.select({ key: settings.key }).from(settings).where(eq(settings.key, BACKFILL_MARK)).get() !== undefined,

    /**
     * In one transaction: unless rollups exist already (then the clicks were rolled up as they came), hands
     * every stored click to `add`, `pageSize` at a time; then marks the backfill done. Answers how many clicks.
     */
    backfill(add: (page: RollupClick[]) => void, pageSize: number, now: number): number {
      return db.transaction(
        (tx) => {
          const fresh = !tx.select({ id: workspaceRollups.workspaceId }).from(workspaceRollups).limit(1).get()
          let total = 0
          for (let after = ''; fresh; ) {
            const page = tx.select(clickFacts).from(clicks).where(gt(clicks.id, after)).orderBy(asc(clicks.id)).limit(pageSize).all()
            if (!page.length) break
            add(page)
            total += page.length
            after = page[page.length - 1]!.id
          }
          tx.insert(settings).values({ key: BACKFILL_MARK, value: String(total), createdAt: now }).run()
          return total
        },
        { behavior: 'immediate' },
      )
    },
  }
}
