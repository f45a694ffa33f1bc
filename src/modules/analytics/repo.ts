// Reads of the analytics area on either engine (port.ts has their meaning). Every answer leaves in the
// port's shape whichever engine gave it: numbers for counts and sums (PostgreSQL answers bigint aggregates as
// text), Uint8Array sketches (Bun's PostgreSQL client answers bytea as Buffer), is_bot as 0/1.
import { and, count, eq, gte, inArray, lt, sql, type SQL } from 'drizzle-orm'
import { rows, type Engine } from '../../db/engine'
import { HOUR_MS } from '../../platform/time'
import type { Grain } from './plan'
import { scopeLinks } from './repo-scope'
import { MARK_KEYS, marksOf, wholeWorkspace, type AnalyticsRepo, type AnalyticsScope, type RollupRow } from './port'

const sketch = (v: Uint8Array | null) => (v === null || v.constructor === Uint8Array ? v : new Uint8Array(v))

export function createAnalyticsRepo(engine: Engine): AnalyticsRepo {
  const { db } = engine
  const { clicks, conversions, linkRollups, links, settings, workspaceRollups } = engine.t

  const linksOf = (s: AnalyticsScope): SQL => scopeLinks(db, engine.t, s)

  // Read as stored, without drizzle's decoding: a sketch stays the bytes the driver gives (mapped below).
  const visitorsOf = (table: typeof linkRollups | typeof workspaceRollups) => sql<Uint8Array | null>`${table.visitors}`
  const figures = (table: typeof linkRollups | typeof workspaceRollups, withDims: boolean) => ({
    bucket: table.bucket,
    clicks: table.clicks,
    bots: table.bots,
    visitors: visitorsOf(table),
    ...(withDims && { dims: table.dims }),
  })
  const asRollupRows = (found: RollupRow[]) => {
    for (const r of found) r.visitors = sketch(r.visitors)
    return found
  }
  const rollupRange = (table: typeof linkRollups, grain: Grain, from: number, to: number) =>
    and(eq(table.grain, grain), gte(table.bucket, from), lt(table.bucket, to))
  const clickRange = (from: number, to: number) => and(gte(clicks.clickedAt, from), lt(clicks.clickedAt, to))
  const people = eq(clicks.isBot, false)

  return {
    async rollups(s, grain, from, to, withDims) {
      if (wholeWorkspace(s)) {
        return asRollupRows(
          await db
            .select(figures(workspaceRollups, withDims))
            .from(workspaceRollups)
            .where(
              and(
                eq(workspaceRollups.workspaceId, s.workspaceId),
                eq(workspaceRollups.grain, grain),
                gte(workspaceRollups.bucket, from),
                lt(workspaceRollups.bucket, to),
              ),
            ),
        )
      }
      return asRollupRows(
        await db
          .select({ linkId: linkRollups.linkId, ...figures(linkRollups, withDims) })
          .from(links)
          .innerJoin(linkRollups, and(eq(linkRollups.linkId, links.id), rollupRange(linkRollups, grain, from, to)))
          .where(linksOf(s)),
      )
    },

    async rollupMarks() {
      return marksOf(await db.select({ key: settings.key, value: settings.value }).from(settings).where(inArray(settings.key, MARK_KEYS)))
    },

    async clicksPerLink(s, grain, from, to) {
      // A sum per link from the covering index (link, grain, bucket, clicks); as a subquery per link rather
      // than a join with GROUP BY, which sorts every row in a temporary b-tree (3.5x slower for a year on
      // SQLite). SUM over no rows is NULL on both engines: the link had no clicks in the range.
      const sum = db
        .select({ n: sql`SUM(${linkRollups.clicks})` })
        .from(linkRollups)
        .where(and(eq(linkRollups.linkId, links.id), rollupRange(linkRollups, grain, from, to)))
      return db
        .select({ linkId: links.id, clicks: sql<number | null>`(${sum})`.mapWith(Number) })
        .from(links)
        .where(linksOf(s))
    },

    async linkSketches(linkIds, grain, from, to) {
      if (!linkIds.length) return []
      return asRollupRows(
        await db
          .select({ linkId: linkRollups.linkId, ...figures(linkRollups, false) })
          .from(linkRollups)
          .where(and(inArray(linkRollups.linkId, [...linkIds]), rollupRange(linkRollups, grain, from, to))),
      )
    },

    async rawClicks(s, from, to) {
      // Without a link filter this reads every link of the scope; still each one an index range of at most an hour.
      const found = await db
        .select({
          linkId: clicks.linkId,
          clickedAt: clicks.clickedAt,
          visitor: clicks.visitorHash,
          isBot: clicks.isBot,
          country: clicks.country,
          referrer: clicks.referrerHost,
          browser: clicks.browser,
          os: clicks.os,
          device: clicks.device,
        })
        .from(links)
        .innerJoin(clicks, and(eq(clicks.linkId, links.id), clickRange(from, to)))
        .where(linksOf(s))
      return found.map((c) => ({ ...c, isBot: c.isBot ? 1 : 0 }))
    },

    async rawClicksPerLink(s, from, to) {
      const n = db
        .select({ n: count() })
        .from(clicks)
        .where(and(eq(clicks.linkId, links.id), clickRange(from, to), people))
      const found = await db
        .select({ linkId: links.id, clicks: sql<number>`(${n})`.mapWith(Number) })
        .from(links)
        .where(linksOf(s))
      return found.filter((r) => r.clicks > 0)
    },

    clicksPerLinkOutside: (s, hour, from, to) =>
      // One snapshot for the hour's rollups and the raw clicks subtracted from them: on PostgreSQL at READ
      // COMMITTED each statement would see its own, and a flush committing between them would count its
      // clicks once only.
      engine.transaction(
        function* (tx) {
          const counts = new Map<string, number>()
          const rolled = yield* rows(
            tx
              .select({ linkId: linkRollups.linkId, clicks: linkRollups.clicks })
              .from(links)
              .innerJoin(linkRollups, and(eq(linkRollups.linkId, links.id), eq(linkRollups.grain, 'hour'), eq(linkRollups.bucket, hour)))
              .where(linksOf(s)),
          )
          for (const r of rolled) counts.set(r.linkId, r.clicks)
          for (const [a, b] of [
            [hour, from],
            [to, hour + HOUR_MS],
          ] as const) {
            if (a >= b) continue
            const raw = yield* rows(
              tx
                .select({ linkId: clicks.linkId, clicks: count() })
                .from(links)
                .innerJoin(clicks, and(eq(clicks.linkId, links.id), clickRange(a, b), people))
                .where(linksOf(s))
                .groupBy(clicks.linkId),
            )
            for (const r of raw) counts.set(r.linkId, (counts.get(r.linkId) ?? 0) - r.clicks)
          }
          return [...counts].filter(([, n]) => n > 0).map(([linkId, clicks]) => ({ linkId, clicks }))
        },
        { snapshot: true },
      ),

    async rawVisitors(linkIds, from, to) {
      if (!linkIds.length) return []
      // All the links in one statement, each one's hashes in the order of the click index (link, time, is_bot,
      // hash), so every engine packs the same string.
      const found = await db
        .select({
          linkId: clicks.linkId,
          packed: sql<string>`string_agg(substr(${clicks.visitorHash}, 1, 11), '' ORDER BY ${clicks.clickedAt}, ${clicks.visitorHash})`,
        })
        .from(clicks)
        .where(and(inArray(clicks.linkId, [...linkIds]), clickRange(from, to), people))
        .groupBy(clicks.linkId)
      const packed = new Map(found.map((r) => [r.linkId, r.packed]))
      return linkIds.map((linkId) => ({ linkId, packed: packed.get(linkId) ?? '' }))
    },

    conversions: (s, from, to) =>
      db
        .select({ linkId: conversions.linkId, createdAt: conversions.createdAt, currency: conversions.currency, value: conversions.value })
        .from(links)
        .innerJoin(conversions, and(eq(conversions.linkId, links.id), gte(conversions.createdAt, from), lt(conversions.createdAt, to)))
        .where(linksOf(s)),

    async countLinks(s) {
      const [row] = await db.select({ n: count() }).from(links).where(linksOf(s))
      return row!.n
    },

    async linkDetails(ids) {
      if (!ids.length) return []
      return db
        .select({ id: links.id, slug: links.slug, domain: links.domain, destinationUrl: links.destinationUrl, title: links.title })
        .from(links)
        .where(inArray(links.id, [...ids]))
    },
  }
}
