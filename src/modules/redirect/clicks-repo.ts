// Writes of the click buffer: one transaction per flush for clicks, distinct visitors and admitted
// addresses, the links' counters and the link.clicked events. This is the busiest write of the service
// (tens of thousands of rows a second), so its statements are plain SQL prepared once. It runs on the
// click-writer thread in a server, and inline in tests and tools.
import { createHmac } from 'node:crypto'
import type { Db } from '../../db/client'
import { preparedPublisher } from '../../events/outbox'

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
  /** Keyed hash of a client address newly admitted under uniqueIpLimit. */
  newAddress: string | null
  link: { id: string; slug: string; domain: string; shortUrl: string; destinationUrl: string }
}

/** Keyed hash of a visitor (address + user agent): unique clicks without keeping the address. */
export const visitorHash = (key: Buffer, ip: string, userAgent: string | null) =>
  createHmac('sha256', key).update(`v|${ip}|${userAgent ?? ''}`).digest('base64url').slice(0, 32)

export function createClicksRepo(db: Db, visitorKey: Buffer) {
  const sqlite = db.$client
  const addressesOf = sqlite.prepare('SELECT ip_hash FROM link_addresses WHERE link_id = ?')
  const linkExists = sqlite.prepare('SELECT 1 AS x FROM links WHERE id = ?')
  const insertClick = sqlite.prepare(
    'INSERT INTO clicks (id, link_id, workspace_id, clicked_at, visitor_hash, user_agent, referrer, referrer_host, is_bot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)',
  )
  const insertVisitor = sqlite.prepare('INSERT INTO link_visitors (link_id, visitor_hash, first_seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
  const insertAddress = sqlite.prepare('INSERT INTO link_addresses (link_id, ip_hash, first_seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
  const addCounts = sqlite.prepare('UPDATE links SET total_clicks = total_clicks + ?, unique_clicks = unique_clicks + ? WHERE id = ?')
  const publish = preparedPublisher(db)

  const writeBatch = sqlite.transaction((batch: ClickRecord[], now: number) => {
    const totals = new Map<string, { clicks: number; unique: number } | null>()
    for (const c of batch) {
      let t = totals.get(c.linkId)
      if (t === undefined) {
        // A link deleted since the click was served takes its clicks with it.
        t = linkExists.get(c.linkId) ? { clicks: 0, unique: 0 } : null
        totals.set(c.linkId, t)
      }
      if (t === null) continue
      const visitor = visitorHash(visitorKey, c.ip, c.userAgent)
      insertClick.run(c.id, c.linkId, c.workspaceId, c.clickedAt, visitor, c.userAgent, c.referrer, c.referrerHost)
      const unique = insertVisitor.run(c.linkId, visitor, c.clickedAt).changes > 0
      if (c.newAddress) insertAddress.run(c.linkId, c.newAddress, c.clickedAt)
      t.clicks++
      if (unique) t.unique++
      publish(
        {
          type: 'link.clicked',
          workspaceId: c.workspaceId,
          mode: 'live',
          data: { click: { id: c.id, timestamp: new Date(c.clickedAt).toISOString(), unique, referrer: c.referrer, userAgent: c.userAgent }, link: c.link },
        },
        now,
      )
    }
    for (const [linkId, t] of totals) if (t) addCounts.run(t.clicks, t.unique, linkId)
  })

  return {
    /** Synchronous: the redirect path loads a link's admitted addresses once, without awaiting. */
    admittedAddressesSync(linkId: string): string[] {
      return (addressesOf.all(linkId) as { ip_hash: string }[]).map((r) => r.ip_hash)
    },
    async writeBatch(batch: ClickRecord[], now: number): Promise<void> {
      writeBatch.immediate(batch, now)
    },
  }
}

export type ClicksRepo = ReturnType<typeof createClicksRepo>
