// The click flush on PostgreSQL (issue 18): repo.ts's port with the SQLite implementation's meaning (the same
// clicks, visitors, addresses, counters, link.clicked events and rollups for the same batch), written as one
// transaction of a few set-based statements instead of one prepared statement per row: each round trip costs
// here what a whole row costs on SQLite. Rows go as arrays through unnest(), one parameter per column, so a
// statement never nears PostgreSQL's 65,535 parameters however large the batch.
//
// Several nodes flush at once. What SQLite's single writer gave for free is made explicit:
// - the batch's links are locked first, in id order, so the counter UPDATE (whose row order the planner
//   picks) never deadlocks with another flush, and a link cannot be deleted under its new clicks;
// - a visitor is new only if this flush's INSERT … ON CONFLICT DO NOTHING created its row (RETURNING says
//   which): a node inserting the same visitor waits for the other to commit, so a visitor counts once;
// - counters are added in SQL, never read and written back;
// - the rollups lock the buckets they merge (rollup-writer-pg.ts).
import { eq, sql } from 'drizzle-orm'
import type { PgDb, PgTx } from '../../db/pg/client'
import { linkAddresses } from '../../db/pg/schema.generated'
import type { AsyncPort } from '../../db/rows'
import { notifyOutboxIn } from '../../events/repo-outbox-pg'
import { sortableId } from '../../platform/random'
import type { Enricher, Enrichment } from '../analytics/enrich'
import type { RollupClick } from '../analytics/rollup-writer'
import { createRollupWriterPg } from '../analytics/rollup-writer-pg'
import { shortUrl } from '../links/slug'
import { visitorHash, type ClickBatch, type ClickReservations, type ClicksRepo, type Reservation } from './repo'

type LinkRef = { id: string; slug: string; domain: string; shortUrl: string; destinationUrl: string }

/** A link's share of the flush: its counter increments, and how its click events name it. */
interface LinkTotals {
  clicks: number
  unique: number
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
const CLICK_COLUMNS = [
  ['id', 'text'], ['link_id', 'text'], ['workspace_id', 'text'], ['clicked_at', 'int8'], ['visitor_hash', 'text'], ['user_agent', 'text'], ['referrer', 'text'],
  ['referrer_host', 'text'], ['country', 'text'], ['city', 'text'], ['device', 'text'], ['browser', 'text'], ['os', 'text'], ['is_bot', 'bool'],
] as const

/** Rolls a reservation back: its address was refused after its click had been added. */
class AddressRefused extends Error {}

/**
 * Locks the batch's links (id order) and answers those that still exist, as their events name them. A join,
 * not `id = any($1)`: a row another flush updated meanwhile is rechecked against the query's condition, and
 * against an array parameter that recheck scans the whole array, so locking n contended rows cost n² string
 * comparisons (20,000 links took two minutes after a saturating load, docs/performance.md); the join's
 * recheck is one comparison.
 */
async function lockLinks(tx: PgTx, ids: string[], urls: { config: { baseUrl: string } }): Promise<Map<string, LinkTotals>> {
  const rows = (await tx.execute(sql`SELECT l.id, l.slug, l.domain, l.destination_url FROM links l
    JOIN unnest(${param(ids)}::text[]) AS v(id) ON l.id = v.id
    ORDER BY l.id FOR NO KEY UPDATE OF l`)) as unknown as { id: string; slug: string; domain: string; destination_url: string }[]
  return new Map(
    rows.map((r) => [r.id, { clicks: 0, unique: 0, ref: { id: r.id, slug: r.slug, domain: r.domain, shortUrl: shortUrl(urls, r), destinationUrl: r.destination_url } }]),
  )
}

/** Inserts the pairs not stored yet (in key order, the same on every node) and answers which were new. */
async function insertFirstSeen(tx: PgTx, table: 'link_visitors' | 'link_addresses', pairs: FirstSeen[]): Promise<Set<string>> {
  if (!pairs.length) return new Set()
  const column = sql.raw(table === 'link_visitors' ? 'visitor_hash' : 'ip_hash')
  const rows = (await tx.execute(sql`INSERT INTO ${sql.raw(table)} (link_id, ${column}, first_seen_at)
    SELECT * FROM unnest(${param(pairs.map((p) => p.linkId))}::text[], ${param(pairs.map((p) => p.key))}::text[], ${param(pairs.map((p) => p.at))}::int8[]) AS v(l, k, t)
    ORDER BY 1, 2 ON CONFLICT DO NOTHING RETURNING link_id, ${column} AS key`)) as unknown as { link_id: string; key: string }[]
  return new Set(rows.map((r) => `${r.link_id}\u0000${r.key}`))
}

export function createClicksRepoPg(db: PgDb, visitorKey: Buffer, enricher: Enricher, baseUrl: string): AsyncPort<ClicksRepo> & ClickReservations {
  const urls = { config: { baseUrl } }
  const addToRollups = createRollupWriterPg()

  async function write(tx: PgTx, { clicks: batch, counts }: ClickBatch, enriched: Enrichment[], now: number) {
    const ids = [...new Set([...batch.map((c) => c.linkId), ...counts.map((c) => c.linkId)])]
    if (!ids.length) return
    // A link deleted since the click was served takes its clicks with it.
    const totals = await lockLinks(tx, ids, urls)
    const rows: unknown[][] = CLICK_COLUMNS.map(() => [])
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
      // device 'bot' exactly when is_bot: the redirect's verdict (isbot) decides, not the UA parser.
      const device = c.isBot ? 'bot' : e.device === 'bot' ? 'other' : e.device
      // In CLICK_COLUMNS' order.
      const values = [c.id, c.linkId, c.workspaceId, c.clickedAt, visitor, c.userAgent, c.referrer, c.referrerHost, e.country, e.city, device, e.browser, e.os, c.isBot]
      for (let k = 0; k < values.length; k++) rows[k]!.push(values[k])
      rollup.push({ linkId: c.linkId, workspaceId: c.workspaceId, clickedAt: c.clickedAt, visitor, isBot: c.isBot, country: e.country, referrer: c.referrerHost, browser: e.browser, os: e.os, device })
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
      const arrays = sql.join(rows.map((r, k) => sql`${param(r)}::${sql.raw(CLICK_COLUMNS[k]![1])}[]`), sql`, `)
      await tx.execute(sql`INSERT INTO clicks (${sql.raw(CLICK_COLUMNS.map(([name]) => name).join(', '))}) SELECT * FROM unnest(${arrays})`)
    }
    const newVisitors = await insertFirstSeen(tx, 'link_visitors', [...visitors.values()])
    await insertFirstSeen(tx, 'link_addresses', [...addresses.values()])

    const events: { id: string; workspaceId: string; data: string }[] = []
    for (const { i, pair } of counted) {
      const c = batch[i]!
      const t = totals.get(c.linkId)!
      // Only the click that inserted the pair is unique, as on SQLite, where a later click of the same pair conflicts.
      const unique = newVisitors.delete(pair)
      if (!c.counted) t.clicks++
      if (unique) t.unique++
      if (!c.announce) continue
      const data = { click: { id: c.id, timestamp: new Date(c.clickedAt).toISOString(), unique, referrer: c.referrer, userAgent: c.userAgent }, link: t.ref }
      events.push({ id: sortableId('evt', now), workspaceId: c.workspaceId, data: JSON.stringify(data) })
    }
    for (const c of counts) {
      const t = totals.get(c.linkId)
      if (t) t.clicks += c.clicks
    }
    const added = [...totals].filter(([, t]) => t.clicks || t.unique)
    if (added.length) {
      await tx.execute(sql`UPDATE links SET total_clicks = total_clicks + v.clicks, unique_clicks = unique_clicks + v.uniq
        FROM unnest(${param(added.map(([id]) => id))}::text[], ${param(added.map(([, t]) => t.clicks))}::int8[], ${param(added.map(([, t]) => t.unique))}::int8[]) AS v(id, clicks, uniq)
        WHERE links.id = v.id`)
    }
    await addToRollups(tx, rollup)
    if (events.length) {
      // publishPg()'s row, many at once; WITH ORDINALITY keeps the batch's order in the outbox's sequence.
      // Last: a dispatcher waits for transactions that hold the outbox's write lock (a gap in seq may still fill).
      await tx.execute(sql`INSERT INTO outbox (id, type, mode, workspace_id, data, created_at)
        SELECT e.id, 'link.clicked', 'live', e.ws, e.data::jsonb, ${now}::int8
        FROM unnest(${param(events.map((e) => e.id))}::text[], ${param(events.map((e) => e.workspaceId))}::text[], ${param(events.map((e) => e.data))}::text[]) WITH ORDINALITY AS e(id, ws, data, n)
        ORDER BY e.n`)
      // Not empty: the empty payload is the reset notice (db/pg/notify.ts), which clears every node's caches.
      await notifyOutboxIn(tx)
    }
  }

  return {
    async admittedAddresses(linkId: string): Promise<string[]> {
      const rows = await db
        .select({ ipHash: linkAddresses.ipHash })
        .from(linkAddresses)
        .where(eq(linkAddresses.linkId, linkId))
        .orderBy(sql`${linkAddresses.ipHash} collate "C"`)
      return rows.map((r) => r.ipHash)
    },
    async writeBatch(batch: ClickBatch, now: number): Promise<void> {
      // Looked up before the transaction, so its locks are held for the writes alone.
      const enriched = batch.clicks.map((c) => enricher.enrich(c.ip, c.userAgent))
      await db.transaction((tx) => write(tx, batch, enriched, now))
    },
    async reserveClick(linkId: string, address: string | null, now: number): Promise<Reservation> {
      // The click is added only while below the limit, in one statement: its row lock queues concurrent
      // clicks from every node, and each sees the total the one before it left. No row: the limit is reached
      // (or the link is gone, which its cache hears about anyway).
      const add = sql`UPDATE links SET total_clicks = total_clicks + 1 WHERE id = ${linkId} AND (click_limit IS NULL OR total_clicks < click_limit) RETURNING unique_ip_limit`
      if (address === null) return ((await db.execute(add)) as unknown as unknown[]).length ? 'ok' : 'clickLimit'
      try {
        return await db.transaction(async (tx) => {
          const [row] = (await tx.execute(add)) as unknown as { unique_ip_limit: string | number | null }[]
          if (!row) return 'clickLimit'
          if (row.unique_ip_limit === null) return 'ok'
          // The link's row stays locked to the commit, and every writer of its addresses (a reservation, a
          // flush) takes that lock first: this statement, on a snapshot taken after the lock, counts every
          // address admitted before it, so the count cannot overshoot.
          const [seen] = (await tx.execute(sql`WITH known AS (SELECT 1 FROM link_addresses WHERE link_id = ${linkId} AND ip_hash = ${address}),
            added AS (INSERT INTO link_addresses (link_id, ip_hash, first_seen_at)
              SELECT ${linkId}, ${address}, ${now}::int8
              WHERE NOT EXISTS (SELECT 1 FROM known) AND (SELECT count(*) FROM link_addresses WHERE link_id = ${linkId}) < ${row.unique_ip_limit}::int8
              ON CONFLICT DO NOTHING RETURNING 1)
            SELECT EXISTS (SELECT 1 FROM known) OR EXISTS (SELECT 1 FROM added) AS admitted`)) as unknown as { admitted: boolean }[]
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
