// Writes of the click buffer: one transaction per flush for clicks, distinct visitors and admitted
// addresses, the links' counters and the link.clicked events.
import { eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { clicks, linkAddresses, links, linkVisitors } from '../../db/schema'
import { publish, type PublishInput } from '../../events/outbox'

export type NewClick = typeof clicks.$inferInsert

export interface ClickWrite {
  click: NewClick
  /** Keyed hash of a client address newly admitted under uniqueIpLimit. */
  newAddress: string | null
  event: (unique: boolean) => PublishInput
}

export function createClicksRepo(db: Db) {
  const addressesOf = db
    .select({ ipHash: linkAddresses.ipHash })
    .from(linkAddresses)
    .where(eq(linkAddresses.linkId, sql.placeholder('linkId')))
    .prepare()

  return {
    /** Synchronous: the redirect path loads a link's admitted addresses once, without awaiting. */
    admittedAddressesSync(linkId: string): string[] {
      return addressesOf.all({ linkId }).map((r) => r.ipHash)
    },
    /** Answers, per link, how many of the clicks were from new visitors. */
    async writeBatch(batch: ClickWrite[], now: number): Promise<Map<string, number>> {
      return db.transaction((tx) => {
        const totals = new Map<string, { clicks: number; unique: number }>()
        for (const w of batch) {
          const c = w.click
          // A link deleted since the click was served takes its clicks with it.
          const exists = tx.select({ id: links.id }).from(links).where(eq(links.id, c.linkId)).get()
          if (!exists) continue
          tx.insert(clicks).values(c).run()
          const fresh = tx.insert(linkVisitors).values({ linkId: c.linkId, visitorHash: c.visitorHash, firstSeenAt: c.clickedAt }).onConflictDoNothing().returning({ h: linkVisitors.visitorHash }).all().length > 0
          if (w.newAddress) tx.insert(linkAddresses).values({ linkId: c.linkId, ipHash: w.newAddress, firstSeenAt: c.clickedAt }).onConflictDoNothing().run()
          const t = totals.get(c.linkId) ?? { clicks: 0, unique: 0 }
          t.clicks++
          if (fresh) t.unique++
          totals.set(c.linkId, t)
          publish(tx, w.event(fresh), now)
        }
        for (const [linkId, t] of totals) {
          tx.update(links)
            .set({ totalClicks: sql`${links.totalClicks} + ${t.clicks}`, uniqueClicks: sql`${links.uniqueClicks} + ${t.unique}` })
            .where(eq(links.id, linkId))
            .run()
        }
        return new Map([...totals].map(([k, v]) => [k, v.unique]))
      }, { behavior: 'immediate' })
    },
  }
}

export type ClicksRepo = ReturnType<typeof createClicksRepo>
