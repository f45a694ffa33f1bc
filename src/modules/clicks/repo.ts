// Writes of the click buffer: one transaction per flush for clicks, distinct visitors and admitted
// addresses, the links' counters and the link.clicked events. This is the busiest write of the service
// (tens of thousands of rows a second), so its statements are plain SQL prepared once. It runs on the
// click-writer thread in a server, and inline in tests and tools. Each click is enriched here (country,
// city, device, browser, OS), off the redirect path. Bot hits are stored flagged is_bot = 1 and are
// nothing else: no counter, no visitor, no event. The same transaction keeps the analytics rollups.
import type { Db } from '../../db/client'
import { preparedPublisher } from '../../events/outbox'
import type { Enricher, Enrichment } from '../analytics/enrich'
import { createRollupWriter, type RollupClick } from '../analytics/rollup-writer'
import { shortUrl } from '../links/slug'

/** A served click as the redirect path hands it over: plain data, so it can cross to the writer thread. */
export interface ClickRecord {
  id: string
  linkId: string
  workspaceId: string
  clickedAt: number
  /** The client address; held in memory until the flush hashes it, never written. */
  ip: string
  userAgent: string | null
  referrer: string | null
  referrerHost: string | null
  /** Keyed hash of a client address newly admitted under uniqueIpLimit (never set for a bot). */
  newAddress: string | null
  /** A bot's hit (a crawler's preview included): stored for the bot count, never counted as a click. */
  isBot: boolean
  /** Whether anyone listens for link.clicked in the workspace (events/interest.ts): only then is it written. */
  announce: boolean
  /**
   * Already counted by a reservation (ClickReservations, PostgreSQL, links under limits): the link's
   * total_clicks and the admitted address were written when it was served, so the flush adds neither again.
   */
  counted?: boolean
}

/** Clicks kept as counts only (the buffer was full, see click-buffer.ts): one link, one UTC hour. */
export interface ClickCounts {
  linkId: string
  workspaceId: string
  hour: number
  clicks: number
  bots: number
}

/** One flush's write: clicks in full, and clicks kept as counts. */
export interface ClickBatch {
  clicks: ClickRecord[]
  counts: ClickCounts[]
}

interface LinkTotals {
  clicks: number
  unique: number
  /** The link as its click events name it, read for the first event written. */
  ref: { id: string; slug: string; domain: string; shortUrl: string; destinationUrl: string } | null
}

/**
 * Keyed hash of a visitor (address + user agent): unique clicks without keeping the address. HMAC-SHA256
 * through Bun's hasher: the same bytes as node:crypto's createHmac, for a third less per click.
 */
export const visitorHash = (key: Buffer, ip: string, userAgent: string | null) =>
  new Bun.CryptoHasher('sha256', key).update(`v|${ip}|${userAgent ?? ''}`).digest('base64url').slice(0, 32)

/** What a reservation answers: the click may be served, or the limit that refused it. */
export type Reservation = 'ok' | 'clickLimit' | 'uniqueIpLimit'

/**
 * PostgreSQL only: the decision a person's click on a link with clickLimit or uniqueIpLimit takes in the
 * database before it is served, so the limits hold across nodes. SQLite's one process counts them in memory.
 */
export interface ClickReservations {
  /**
   * One atomic decision: under clickLimit, total_clicks is added to only while below it; under
   * uniqueIpLimit, `address` (the keyed hash of the client address) is admitted only if already admitted or
   * while fewer than the limit are. An accepted click has its total_clicks and address written.
   */
  reserveClick(linkId: string, address: string | null, now: number): Promise<Reservation>
}

/** Click storage: the one read the redirect path makes, and the flush's write. */
export interface ClicksRepo {
  /** Synchronous: the redirect path loads a link's admitted addresses once, without awaiting. */
  admittedAddressesSync(linkId: string): string[]
  /** One transaction: clicks, visitors, admitted addresses, the links' counters, events and rollups. */
  writeBatch(batch: ClickBatch, now: number): Promise<void>
}

export function createClicksRepo(db: Db, visitorKey: Buffer, enricher: Enricher, baseUrl: string): ClicksRepo {
  const sqlite = db.$client
  const urls = { config: { baseUrl } }
  const addressesOf = sqlite.prepare('SELECT ip_hash FROM link_addresses WHERE link_id = ?')
  const linkExists = sqlite.prepare('SELECT 1 AS x FROM links WHERE id = ?')
  // What a link.clicked event names: read at the flush, and only for links whose events are written,
  // rather than carried by every click to the thread.
  const linkRef = sqlite.prepare('SELECT id, slug, domain, destination_url FROM links WHERE id = ?')
  const insertClick = sqlite.prepare(
    'INSERT INTO clicks (id, link_id, workspace_id, clicked_at, visitor_hash, user_agent, referrer, referrer_host, country, city, device, browser, os, is_bot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const insertVisitor = sqlite.prepare('INSERT INTO link_visitors (link_id, visitor_hash, first_seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
  const insertAddress = sqlite.prepare('INSERT INTO link_addresses (link_id, ip_hash, first_seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
  const addCounts = sqlite.prepare('UPDATE links SET total_clicks = total_clicks + ?, unique_clicks = unique_clicks + ? WHERE id = ?')
  const publish = preparedPublisher(db)
  const addToRollups = createRollupWriter(sqlite)

  const writeBatch = sqlite.transaction(({ clicks: batch, counts }: ClickBatch, enriched: Enrichment[], now: number) => {
    const totals = new Map<string, LinkTotals | null>()
    // A link deleted since the click was served takes its clicks with it.
    const totalsOf = (linkId: string) => {
      let t = totals.get(linkId)
      if (t === undefined) totals.set(linkId, (t = linkExists.get(linkId) ? { clicks: 0, unique: 0, ref: null } : null))
      return t
    }
    const rollup: RollupClick[] = []
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i]!
      const t = totalsOf(c.linkId)
      if (t === null) continue
      const visitor = visitorHash(visitorKey, c.ip, c.userAgent)
      const e = enriched[i]!
      // device 'bot' exactly when is_bot: the redirect's verdict (isbot) decides, not the UA parser.
      const device = c.isBot ? 'bot' : e.device === 'bot' ? 'other' : e.device
      insertClick.run(c.id, c.linkId, c.workspaceId, c.clickedAt, visitor, c.userAgent, c.referrer, c.referrerHost, e.country, e.city, device, e.browser, e.os, c.isBot)
      rollup.push({ linkId: c.linkId, workspaceId: c.workspaceId, clickedAt: c.clickedAt, visitor, isBot: c.isBot, country: e.country, referrer: c.referrerHost, browser: e.browser, os: e.os, device })
      if (c.isBot) continue
      const unique = insertVisitor.run(c.linkId, visitor, c.clickedAt).changes > 0
      if (!c.counted) {
        if (c.newAddress) insertAddress.run(c.linkId, c.newAddress, c.clickedAt)
        t.clicks++
      }
      if (unique) t.unique++
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
          data: { click: { id: c.id, timestamp: new Date(c.clickedAt).toISOString(), unique, referrer: c.referrer, userAgent: c.userAgent }, link: t.ref },
        },
        now,
      )
    }
    for (const c of counts) {
      const t = totalsOf(c.linkId)
      if (t) t.clicks += c.clicks
    }
    for (const [linkId, t] of totals) if (t && (t.clicks || t.unique)) addCounts.run(t.clicks, t.unique, linkId)
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
