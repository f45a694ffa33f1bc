// Click storage on either engine: the admitted addresses, the flush and the reservations (port.ts has their
// meaning).
//
// The flush writes the same clicks, visitors, addresses, counters, link.clicked events and rollups for the
// same batch on both engines, each in the form its engine writes fastest. SQLite's is repo-sqlite.ts: a row
// at a time through statements prepared once, on its one writer. Here, where each round trip costs what a
// whole row costs on SQLite, it is one transaction of a few set-based statements: rows go as arrays through
// PostgreSQL's unnest(), one parameter per column, so a statement never nears PostgreSQL's 65,535
// parameters however large the batch.
//
// Several nodes flush at once there. What SQLite's single writer gave for free is made explicit:
// - the batch's links are locked first, in id order, so the counter UPDATE (whose row order the planner
//   picks) never deadlocks with another flush, and a link cannot be deleted under its new clicks;
// - a visitor is new only if this flush's INSERT … ON CONFLICT DO NOTHING created its row (RETURNING says
//   which): a node inserting the same visitor waits for the other to commit, so a visitor counts once;
// - counters are added in SQL, never read and written back;
// - the rollups lock the buckets they merge (analytics' rollup-writer.ts).
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { notice, rawRows, rawRun, rows, type Builder, type Engine, type Steps } from '../../db/engine'
import { OUTBOX_CHANNEL } from '../../events/outbox'
import { sortableId } from '../../platform/random'
import { type Enricher, type Enrichment, type RollupAdder, rollupWriter, type RollupClick } from '../analytics'
import { shortUrl } from '../links/model'
import type { ClickBatch, ClickReservations, ClicksRepo, Reservation } from './port'
import { CLICK_COLUMNS, clickRow, rollupClick } from './click-row'
import { clickData, createClickFlush } from './repo-sqlite'
import { visitorHash } from './visitor'

type LinkRef = { id: string; slug: string; domain: string; shortUrl: string; destinationUrl: string }

/** A link's share of the flush: its counter increments, and how its click events name it. */
interface LinkTotals {
  clicks: number
  unique: number
  /** The newest counted click's time in the batch (0: none), for links.last_clicked_at. */
  last: number
  ref: LinkRef
}

/** A (link, key) pair as first seen in the batch: visitors and admitted addresses are inserted once each. */
interface FirstSeen {
  linkId: string
  key: string
  at: number
}

const param = <T>(values: T[]) => sql.param(values)

/** The clicks table's columns and their array types, as a flush sends them. */

/** Rolls a reservation back: its address was refused after its click had been added. */
class AddressRefused extends Error {}

/**
 * Locks the batch's links (id order) and answers those that still exist, as their events name them. A join,
 * not `id = any($1)`: a row another flush updated meanwhile is rechecked against the query's condition, and
 * against an array parameter that recheck scans the whole array, so locking n contended rows cost n² string
 * comparisons (20,000 links took two minutes after a saturating load, docs/performance.md); the join's
 * recheck is one comparison.
 */
function* lockLinks(ids: string[], urls: { config: { baseUrl: string } }): Steps<Map<string, LinkTotals>> {
  const found = yield* rawRows<{
    id: string
    slug: string
    domain: string
    destination_url: string
  }>(sql`SELECT l.id, l.slug, l.domain, l.destination_url FROM links l
    JOIN unnest(${param(ids)}::text[]) AS v(id) ON l.id = v.id
    ORDER BY l.id FOR NO KEY UPDATE OF l`)
  return new Map(
    found.map((r) => [
      r.id,
      { clicks: 0, unique: 0, last: 0, ref: { id: r.id, slug: r.slug, domain: r.domain, shortUrl: shortUrl(urls, r), destinationUrl: r.destination_url } },
    ]),
  )
}

/** Inserts the pairs not stored yet (in key order, the same on every node) and answers which were new. */
function* insertFirstSeen(table: 'link_visitors' | 'link_addresses', pairs: FirstSeen[]): Steps<Set<string>> {
  if (!pairs.length) return new Set()
  const column = sql.raw(table === 'link_visitors' ? 'visitor_hash' : 'ip_hash')
  const inserted = yield* rawRows<{ link_id: string; key: string }>(sql`INSERT INTO ${sql.raw(table)} (link_id, ${column}, first_seen_at)
    SELECT * FROM unnest(${param(pairs.map((p) => p.linkId))}::text[], ${param(pairs.map((p) => p.key))}::text[], ${param(pairs.map((p) => p.at))}::int8[]) AS v(l, k, t)
    ORDER BY 1, 2 ON CONFLICT DO NOTHING RETURNING link_id, ${column} AS key`)
  return new Set(inserted.map((r) => `${r.link_id}\u0000${r.key}`))
}

/**
 * The clicks repo on `engine`. On SQLite the flush is repo-sqlite.ts's (prepared on first use: a server's
 * flushes go through the click-writer thread's own) and the reservations are never asked for: SQLite's one
 * process counts limits in memory (redirect/count.ts).
 */
export function createClicksRepo(engine: Engine, visitorKey: Buffer, enricher: Enricher, baseUrl: string): ClicksRepo & ClickReservations {
  const { linkAddresses, links } = engine.t
  const urls = { config: { baseUrl } }
  // Built on first use: on SQLite the flush never comes here, and the writer would prepare statements for nothing.
  let addToRollups: RollupAdder | undefined
  let sqliteFlush: Pick<ClicksRepo, 'writeBatch'> | undefined

  function* write(tx: Builder, { clicks: batch, counts }: ClickBatch, enriched: Enrichment[], now: number): Steps<void> {
    const ids = [...new Set([...batch.map((c) => c.linkId), ...counts.map((c) => c.linkId)])]
    if (!ids.length) return
    // A link deleted since the click was served takes its clicks with it.
    const totals = yield* lockLinks(ids, urls)
    const columns: unknown[][] = CLICK_COLUMNS.map(() => [])
    const rollup: RollupClick[] = []
    const visitors = new Map<string, FirstSeen>()
    const addresses = new Map<string, FirstSeen>()
    /** Index in `batch` of each click counted as a person's, with its visitor's pair key. */
    const counted: { i: number; pair: string }[] = []
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i]!
      if (!totals.has(c.linkId)) continue
      const visitor = visitorHash(visitorKey, c.ip, c.userAgent)
      const e = enriched[i]!
      const values = clickRow(c, visitor, e)
      for (let k = 0; k < values.length; k++) columns[k]!.push(values[k])
      rollup.push(rollupClick(c, visitor, e))
      if (c.isBot) continue
      const pair = `${c.linkId}\u0000${visitor}`
      // SQLite inserts per click: the first click of a pair in the batch is the one its row records.
      if (!visitors.has(pair)) visitors.set(pair, { linkId: c.linkId, key: visitor, at: c.clickedAt })
      if (c.newAddress && !c.counted) {
        const a = `${c.linkId}\u0000${c.newAddress}`
        if (!addresses.has(a)) addresses.set(a, { linkId: c.linkId, key: c.newAddress, at: c.clickedAt })
      }
      counted.push({ i, pair })
    }
    if (rollup.length) {
      const arrays = sql.join(
        columns.map((r, k) => sql`${param(r)}::${sql.raw(CLICK_COLUMNS[k]![1])}[]`),
        sql`, `,
      )
      yield* rawRun(sql`INSERT INTO clicks (${sql.raw(CLICK_COLUMNS.map(([name]) => name).join(', '))}) SELECT * FROM unnest(${arrays})`)
    }
    const newVisitors = yield* insertFirstSeen('link_visitors', [...visitors.values()])
    yield* insertFirstSeen('link_addresses', [...addresses.values()])

    const events: { id: string; workspaceId: string; data: string }[] = []
    for (const { i, pair } of counted) {
      const c = batch[i]!
      const t = totals.get(c.linkId)!
      // Only the click that inserted the pair is unique, as on SQLite, where a later click of the same pair conflicts.
      const unique = newVisitors.delete(pair)
      if (!c.counted) t.clicks++
      if (unique) t.unique++
      if (c.clickedAt > t.last) t.last = c.clickedAt
      if (!c.announce) continue
      const data = { click: clickData(c, unique), link: t.ref }
      events.push({ id: sortableId('evt', now), workspaceId: c.workspaceId, data: JSON.stringify(data) })
    }
    for (const c of counts) {
      const t = totals.get(c.linkId)
      if (!t || !c.clicks) continue
      t.clicks += c.clicks
      if (c.hour > t.last) t.last = c.hour
    }
    // A reserved click (counted when served) still moves last_clicked_at, which only moves forward.
    const added = [...totals].filter(([, t]) => t.clicks || t.unique || t.last)
    if (added.length) {
      yield* rawRun(sql`UPDATE links SET total_clicks = total_clicks + v.clicks, unique_clicks = unique_clicks + v.uniq,
        last_clicked_at = greatest(links.last_clicked_at, v.last)
        FROM unnest(${param(added.map(([id]) => id))}::text[], ${param(added.map(([, t]) => t.clicks))}::int8[], ${param(added.map(([, t]) => t.unique))}::int8[],
          ${param(added.map(([, t]) => t.last))}::int8[]) AS v(id, clicks, uniq, last)
        WHERE links.id = v.id`)
    }
    yield* (addToRollups ??= rollupWriter(engine))(tx, rollup)
    if (events.length) {
      // publishing()'s row, many at once; WITH ORDINALITY keeps the batch's order in the outbox's sequence.
      // Last: a dispatcher waits for transactions that hold the outbox's write lock (a gap in seq may still fill).
      yield* rawRun(sql`INSERT INTO outbox (id, type, mode, workspace_id, data, created_at)
        SELECT e.id, 'link.clicked', 'live', e.ws, e.data::jsonb, ${now}::int8
        FROM unnest(${param(events.map((e) => e.id))}::text[], ${param(events.map((e) => e.workspaceId))}::text[], ${param(events.map((e) => e.data))}::text[]) WITH ORDINALITY AS e(id, ws, data, n)
        ORDER BY e.n`)
      yield* notice(engine, OUTBOX_CHANNEL, 'due')
    }
  }

  return {
    async admittedAddresses(linkId) {
      const found = await engine.db
        .select({ ipHash: linkAddresses.ipHash })
        .from(linkAddresses)
        .where(eq(linkAddresses.linkId, linkId))
        .orderBy(engine.byteOrder(linkAddresses.ipHash))
      return found.map((r) => r.ipHash)
    },

    async writeBatch(batch, now) {
      if (engine.name === 'sqlite') return (sqliteFlush ??= createClickFlush(engine.db as Db, visitorKey, enricher, baseUrl)).writeBatch(batch, now)
      // Looked up before the transaction, so its locks are held for the writes alone.
      const enriched = batch.clicks.map((c) => enricher.enrich(c.ip, c.userAgent))
      await engine.transaction((tx) => write(tx, batch, enriched, now))
    },

    async reserveClick(linkId, address, now): Promise<Reservation> {
      // The click is added only while below the limit, in one statement: its row lock queues concurrent
      // clicks from every node, and each sees the total the one before it left. No row: the limit is reached
      // (or the link is gone, which its cache hears about anyway).
      const add = (db: Builder) =>
        db
          .update(links)
          .set({ totalClicks: sql`${links.totalClicks} + 1` })
          .where(and(eq(links.id, linkId), or(isNull(links.clickLimit), lt(links.totalClicks, links.clickLimit))))
          .returning({ uniqueIpLimit: links.uniqueIpLimit })
      if (address === null) return (await add(engine.db)).length ? 'ok' : 'clickLimit'
      try {
        return await engine.transaction<Reservation>(function* (tx) {
          const [row] = yield* rows(add(tx))
          if (!row) return 'clickLimit'
          if (row.uniqueIpLimit === null) return 'ok'
          // The link's row stays locked to the commit, and every writer of its addresses (a reservation, a
          // flush) takes that lock first: this statement, on a snapshot taken after the lock, counts every
          // address admitted before it, so the count cannot overshoot.
          const [seen] = yield* rawRows<{
            admitted: boolean
          }>(sql`WITH known AS (SELECT 1 FROM link_addresses WHERE link_id = ${linkId} AND ip_hash = ${address}),
            added AS (INSERT INTO link_addresses (link_id, ip_hash, first_seen_at)
              SELECT ${linkId}, ${address}, ${now}::int8
              WHERE NOT EXISTS (SELECT 1 FROM known) AND (SELECT count(*) FROM link_addresses WHERE link_id = ${linkId}) < ${row.uniqueIpLimit}::int8
              ON CONFLICT DO NOTHING RETURNING 1)
            SELECT EXISTS (SELECT 1 FROM known) OR EXISTS (SELECT 1 FROM added) AS admitted`)
          if (!seen!.admitted) throw new AddressRefused()
          return 'ok'
        })
      } catch (err) {
        if (err instanceof AddressRefused) return 'uniqueIpLimit'
        throw err
      }
    },
  }
}
