// The rows maintenance.ts works on, on either engine: marks, summed spans, raw clicks past retention, and the
// clicks stored before rollups existed. Writes run as short transactions (at start-up, in a job), IMMEDIATE
// on SQLite so a read-then-write body runs alone. On PostgreSQL several nodes may run a job at once: writes
// are upserts or deletes that another node's identical run cannot break, and the backfill's decision taken
// on a read (no rollups yet) is guarded by its mark, claimed first.
import { and, asc, eq, gt, gte, inArray, lt, min, sql } from 'drizzle-orm'
import { rows, type Engine } from '../../db/engine'
import type { MaintenanceRepo } from './port'

/** The settings row that says the backfill happened (its value: how many clicks it rolled up). */
const BACKFILL_MARK = 'rollups_backfilled'
/** Rows per upsert statement: well under PostgreSQL's 65,535 parameters (and SQLite's 32,766) at 7 a row. */
const SUMS_PER_STATEMENT = 1_000

export function createMaintenanceRepo(engine: Engine): MaintenanceRepo {
  const { db } = engine
  const { clicks, linkRollups, links, settings, workspaceRollups, workspaces } = engine.t
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
      await db
        .insert(settings)
        .values({ key, value: String(value), createdAt: now })
        .onConflictDoUpdate({ target: settings.key, set: { value: String(value) } })
    },

    // Through engine.run, which runs a SQLite statement as it is called (an awaited query runs a microtask
    // later): start-up marks are written before the module's factory returns.
    setMarkOnce: (key, value, now) =>
      engine.run(function* (tx) {
        yield* rows(
          tx
            .insert(settings)
            .values({ key, value: String(value), createdAt: now })
            .onConflictDoNothing(),
        )
      }),

    async firstDay() {
      const [row] = await db
        .select({ first: min(workspaceRollups.bucket) })
        .from(workspaceRollups)
        .where(eq(workspaceRollups.grain, 'day'))
      return row?.first ?? undefined
    },

    linkRows: (linkId, grain, from, to) =>
      db
        .select({ clicks: linkRollups.clicks, bots: linkRollups.bots, visitors: linkRollups.visitors, dims: linkRollups.dims })
        .from(linkRollups)
        .where(and(eq(linkRollups.linkId, linkId), eq(linkRollups.grain, grain), gte(linkRollups.bucket, from), lt(linkRollups.bucket, to))),

    async writeSums(grain, sums) {
      // A later row for the same link and bucket replaces an earlier one, as upserts row by row would leave
      // it; one statement cannot touch a row twice (PostgreSQL refuses it).
      const byLink = new Map(sums.map((r) => [`${r.linkId}\u0000${r.bucket}`, r]))
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
      await engine.transaction(
        function* (tx) {
          for (let i = 0; i < values.length; i += SUMS_PER_STATEMENT) {
            yield* rows(
              tx
                .insert(linkRollups)
                .values(values.slice(i, i + SUMS_PER_STATEMENT))
                .onConflictDoUpdate({
                  target: [linkRollups.linkId, linkRollups.grain, linkRollups.bucket],
                  set: { clicks: sql`excluded.clicks`, bots: sql`excluded.bots`, visitors: sql`excluded.visitors`, dims: sql`excluded.dims` },
                }),
            )
          }
        },
        { immediate: true },
      )
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
      const found = await db
        .select({ id: clicks.id })
        .from(clicks)
        .where(and(eq(clicks.linkId, linkId), lt(clicks.clickedAt, at)))
        .limit(1)
      return found.length > 0
    },

    deleteClicksBefore: (linkId, at, limit) =>
      engine.transaction(
        function* (tx) {
          // On PostgreSQL rows another node's prune holds are skipped rather than waited for: it deletes them,
          // and this chunk is full of rows still to delete, so neither node ends its loop early on rows the
          // other took. Oldest first, ties by id: a chunk is the same rows on either engine, whatever plan reads it.
          const chunk = engine.forUpdate(
            tx
              .select({ id: clicks.id })
              .from(clicks)
              .where(and(eq(clicks.linkId, linkId), lt(clicks.clickedAt, at)))
              .orderBy(asc(clicks.clickedAt), asc(clicks.id))
              .limit(limit),
            { skipLocked: true },
          )
          return (yield* rows(tx.delete(clicks).where(inArray(clicks.id, chunk)).returning({ id: clicks.id }))).length
        },
        { immediate: true },
      ),

    async backfillDone() {
      return (await db.select({ key: settings.key }).from(settings).where(eq(settings.key, BACKFILL_MARK))).length > 0
    },

    backfill: (add, pageSize, now) =>
      engine.transaction(
        function* (tx) {
          // The mark is claimed first: on PostgreSQL a second node's insert waits on this row until the first
          // commits and then finds it, so the clicks are rolled up once (SQLite's IMMEDIATE transaction runs
          // alone anyway). A start that finds the mark answers 0: nothing rolled up by it.
          const claimed = yield* rows(
            tx.insert(settings).values({ key: BACKFILL_MARK, value: '0', createdAt: now }).onConflictDoNothing().returning({ key: settings.key }),
          )
          if (!claimed.length) return 0
          const fresh = !(yield* rows(tx.select({ id: workspaceRollups.workspaceId }).from(workspaceRollups).limit(1))).length
          let total = 0
          for (let after = ''; fresh; ) {
            const page = yield* rows(tx.select(clickFacts).from(clicks).where(gt(clicks.id, after)).orderBy(asc(clicks.id)).limit(pageSize))
            if (!page.length) break
            yield* add(tx, page)
            total += page.length
            after = page[page.length - 1]!.id
          }
          yield* rows(
            tx
              .update(settings)
              .set({ value: String(total) })
              .where(eq(settings.key, BACKFILL_MARK)),
          )
          return total
        },
        { immediate: true },
      ),
  }
}
