// The rows maintenance.ts works on: raw clicks past retention, and the clicks stored before rollups existed.
// Synchronous: both run as short write transactions on the caller's connection (at start-up, in a job).
import { and, asc, eq, gt, inArray, lt, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { clicks, links, settings, workspaceRollups } from '../../db/schema'
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

  return {
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
