// SQLite's hot paths of the clicks area: the click flush and the redirect path's read of a link's admitted
// addresses. The flush is one transaction per batch for clicks, distinct visitors and admitted addresses, the
// links' counters, the link.clicked events and the analytics rollups; it is the busiest write of the service
// (tens of thousands of rows a second), so its statements are plain SQL prepared once, a row at a time (on a
// local file a row costs less than building a set). It runs on the click-writer thread in a server, and
// inline in tests and tools. Each click is enriched here (country, city, device, browser, OS), off the
// redirect path. Bot hits are stored flagged is_bot = 1 and are nothing else: no counter, no visitor, no
// event. repo.ts writes the same rows on PostgreSQL, set by set.
import type { Db } from '../../db/client'
import { preparedPublisher } from '../../events/outbox'
import { type Enricher, type Enrichment, type RollupClick, createRollupWriter } from '../analytics'
import { shortUrl } from '../links/model'
import type { ClickBatch, ClickHotReads, ClickRecord, ClicksRepo } from './port'
import { CLICK_COLUMNS, clickRow, rollupClick } from './click-row'
import { visitorHash } from './visitor'

interface LinkTotals {
  clicks: number
  unique: number
  /** The newest counted click's time in the batch (0: none), for links.last_clicked_at. */
  last: number
  /** The link as its click events name it, read for the first event written. */
  ref: { id: string; slug: string; domain: string; shortUrl: string; destinationUrl: string } | null
}

/**
 * link.clicked's `click`, the same on both engines. The link part names the link's own destination; this
 * one the destination the visit was sent to, with the rule or variant that chose it.
 */
export const clickData = (c: ClickRecord, unique: boolean) => ({
  id: c.id,
  timestamp: new Date(c.clickedAt).toISOString(),
  unique,
  referrer: c.referrer,
  userAgent: c.userAgent,
  ruleId: c.ruleId,
  variantId: c.variantId,
  destinationUrl: c.destinationUrl,
})

export function createClickFlush(db: Db, visitorKey: Buffer, enricher: Enricher, baseUrl: string): ClickHotReads & Pick<ClicksRepo, 'writeBatch'> {
  const sqlite = db.$client
  const urls = { config: { baseUrl } }
  const addressesOf = sqlite.prepare('SELECT ip_hash FROM link_addresses WHERE link_id = ?')
  const linkExists = sqlite.prepare('SELECT 1 AS x FROM links WHERE id = ?')
  // What a link.clicked event names: read at the flush, and only for links whose events are written,
  // rather than carried by every click to the thread.
  const linkRef = sqlite.prepare('SELECT id, slug, domain, destination_url FROM links WHERE id = ?')
  const insertClick = sqlite.prepare(
    `INSERT INTO clicks (${CLICK_COLUMNS.map(([name]) => name).join(', ')}) VALUES (${CLICK_COLUMNS.map(() => '?').join(', ')})`,
  )
  const insertVisitor = sqlite.prepare('INSERT INTO link_visitors (link_id, visitor_hash, first_seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
  const insertAddress = sqlite.prepare('INSERT INTO link_addresses (link_id, ip_hash, first_seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
  // last_clicked_at only moves forward: a batch may hold older clicks than one written before it (shed counts
  // carry only their hour). SQLite's two-argument max() is null when either is, hence the coalesce.
  const addCounts = sqlite.prepare(
    'UPDATE links SET total_clicks = total_clicks + ?1, unique_clicks = unique_clicks + ?2, last_clicked_at = max(coalesce(last_clicked_at, ?3), ?3) ' +
      'WHERE id = ?4',
  )
  const publish = preparedPublisher(db)
  const addToRollups = createRollupWriter(sqlite)

  const writeBatch = sqlite.transaction(({ clicks: batch, counts }: ClickBatch, enriched: Enrichment[], now: number) => {
    const totals = new Map<string, LinkTotals | null>()
    // A link deleted since the click was served takes its clicks with it.
    const totalsOf = (linkId: string) => {
      let t = totals.get(linkId)
      if (t === undefined) totals.set(linkId, (t = linkExists.get(linkId) ? { clicks: 0, unique: 0, last: 0, ref: null } : null))
      return t
    }
    const rollup: RollupClick[] = []
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i]!
      const t = totalsOf(c.linkId)
      if (t === null) continue
      const visitor = visitorHash(visitorKey, c.ip, c.userAgent)
      const e = enriched[i]!
      insertClick.run(...clickRow(c, visitor, e))
      rollup.push(rollupClick(c, visitor, e))
      if (c.isBot) continue
      const unique = insertVisitor.run(c.linkId, visitor, c.clickedAt).changes > 0
      if (!c.counted) {
        if (c.newAddress) insertAddress.run(c.linkId, c.newAddress, c.clickedAt)
        t.clicks++
      }
      if (unique) t.unique++
      if (c.clickedAt > t.last) t.last = c.clickedAt
      if (!c.announce) continue
      if (!t.ref) {
        const row = linkRef.get(c.linkId) as { id: string; slug: string; domain: string; destination_url: string }
        t.ref = { id: row.id, slug: row.slug, domain: row.domain, shortUrl: shortUrl(urls, row), destinationUrl: row.destination_url }
      }
      publish(
        {
          type: 'link.clicked',
          workspaceId: c.workspaceId,
          mode: 'live',
          data: { click: clickData(c, unique), link: t.ref },
        },
        now,
      )
    }
    for (const c of counts) {
      const t = totalsOf(c.linkId)
      if (!t || !c.clicks) continue
      t.clicks += c.clicks
      if (c.hour > t.last) t.last = c.hour
    }
    for (const [linkId, t] of totals) if (t && (t.clicks || t.unique || t.last)) addCounts.run(t.clicks, t.unique, t.last, linkId)
    addToRollups(rollup)
  })

  return {
    admittedAddressesSync(linkId: string): string[] {
      return (addressesOf.all(linkId) as { ip_hash: string }[]).map((r) => r.ip_hash)
    },
    async writeBatch(batch: ClickBatch, now: number): Promise<void> {
      // Looked up before the transaction, so the write lock is held for the writes alone.
      const enriched = batch.clicks.map((c) => enricher.enrich(c.ip, c.userAgent))
      writeBatch.immediate(batch, enriched, now)
    },
  }
}
