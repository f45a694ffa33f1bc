// Writes of the click buffer: one transaction per flush for clicks, distinct visitors and admitted
// addresses, the links' counters and the link.clicked events. This is the busiest write of the service
// (tens of thousands of rows a second), so its statements are plain SQL prepared once.
import type { Db } from '../../db/client'
import { preparedPublisher, type PublishInput } from '../../events/outbox'

export interface NewClick {
  id: string
  linkId: string
  workspaceId: string
  clickedAt: number
  visitorHash: string
  userAgent: string | null
  referrer: string | null
  referrerHost: string | null
  isBot: boolean
}

export interface ClickWrite {
  click: NewClick
  /** Keyed hash of a client address newly admitted under uniqueIpLimit. */
  newAddress: string | null
  event: (unique: boolean) => PublishInput
}

export function createClicksRepo(db: Db) {
  const sqlite = db.$client
  const addressesOf = sqlite.prepare('SELECT ip_hash FROM link_addresses WHERE link_id = ?')
  const linkExists = sqlite.prepare('SELECT 1 AS x FROM links WHERE id = ?')
  const insertClick = sqlite.prepare(
    'INSERT INTO clicks (id, link_id, workspace_id, clicked_at, visitor_hash, user_agent, referrer, referrer_host, is_bot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const insertVisitor = sqlite.prepare('INSERT INTO link_visitors (link_id, visitor_hash, first_seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
  const insertAddress = sqlite.prepare('INSERT INTO link_addresses (link_id, ip_hash, first_seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
  const addCounts = sqlite.prepare('UPDATE links SET total_clicks = total_clicks + ?, unique_clicks = unique_clicks + ? WHERE id = ?')
  const publish = preparedPublisher(db)

  const writeBatch = sqlite.transaction((batch: ClickWrite[], now: number) => {
    const totals = new Map<string, { clicks: number; unique: number } | null>()
    for (const w of batch) {
      const c = w.click
      let t = totals.get(c.linkId)
      if (t === undefined) {
        // A link deleted since the click was served takes its clicks with it.
        t = linkExists.get(c.linkId) ? { clicks: 0, unique: 0 } : null
        totals.set(c.linkId, t)
      }
      if (t === null) continue
      insertClick.run(c.id, c.linkId, c.workspaceId, c.clickedAt, c.visitorHash, c.userAgent, c.referrer, c.referrerHost, c.isBot ? 1 : 0)
      const fresh = insertVisitor.run(c.linkId, c.visitorHash, c.clickedAt).changes > 0
      if (w.newAddress) insertAddress.run(c.linkId, w.newAddress, c.clickedAt)
      t.clicks++
      if (fresh) t.unique++
      publish(w.event(fresh), now)
    }
    for (const [linkId, t] of totals) if (t) addCounts.run(t.clicks, t.unique, linkId)
  })

  return {
    /** Synchronous: the redirect path loads a link's admitted addresses once, without awaiting. */
    admittedAddressesSync(linkId: string): string[] {
      return (addressesOf.all(linkId) as { ip_hash: string }[]).map((r) => r.ip_hash)
    },
    async writeBatch(batch: ClickWrite[], now: number): Promise<void> {
      writeBatch.immediate(batch, now)
    },
  }
}

export type ClicksRepo = ReturnType<typeof createClicksRepo>
