// Queries of the conversions area. A conversion is written by one synchronous transaction that also reads
// its click (and the click's link) and any identical beacon of the last 24 hours, and publishes
// conversion.created: a refusal or a failure leaves nothing behind, and two identical beacons can never
// both be counted (the transaction takes the write lock up front, so they run one after the other).
// The port comes first (plain types, Promises, so another database can sit behind the same signatures);
// the SQLite implementation follows it.
import { and, desc, eq, gt } from 'drizzle-orm'
import type { Db } from '../../db/client'
import type { Insertable } from '../../db/rows'
import { clicks, conversions, links } from '../../db/schema'
import { publish, type PublishInput } from '../../events/outbox'

/** An accepted conversion, attributed to the click whose lnk_cid it carried, that click's link and workspace. */
export interface ConversionRow {
  id: string
  clickId: string
  linkId: string
  workspaceId: string
  eventName: string
  /** In the currency's major unit as sent; null when no value was sent. */
  value: number | null
  /** ISO 4217 code; set exactly when value is. */
  currency: string | null
  metadata: Record<string, unknown> | null
  /** Of clickId, eventName, value, currency and metadata: a resent beacon within 24 h is counted once. */
  fingerprint: string
  createdAt: number
}

export type NewConversion = Insertable<ConversionRow>

/** A stored click as a conversion sees it: whether a bot made it, and its link. */
export interface ClickOfConversion {
  id: string
  isBot: boolean
  link: { id: string; workspaceId: string; slug: string; domain: string; destinationUrl: string; conversionTracking: boolean; isTest: boolean }
}

/** Why a beacon was not recorded; the service turns it into an AppError. Nothing was written. */
export class ConversionRefused {
  constructor(
    readonly reason: 'unknown_click' | 'bot_click' | 'test_click' | 'not_tracked',
    readonly click?: ClickOfConversion,
  ) {}
}

/** What the service decides once it has seen the click: refuse, or write this row and this event. */
export type ConversionDecision = ConversionRefused | { row: NewConversion; event: (row: ConversionRow) => PublishInput }

export interface ConversionsRepo {
  /**
   * Looks up the click, lets `decide` accept or refuse it, answers an identical conversion (same
   * fingerprint) created after `duplicateAfter` instead of writing a new one, else inserts the row and
   * publishes its event. All in one transaction.
   */
  record(
    clickId: string,
    fingerprint: string,
    duplicateAfter: number,
    decide: (click: ClickOfConversion) => ConversionDecision,
    now: number,
  ): Promise<{ row: ConversionRow; duplicate: boolean } | ConversionRefused>
}

// --- SQLite ------------------------------------------------------------------------------------------

export function createConversionsRepo(db: Db): ConversionsRepo {
  return {
    async record(clickId, fingerprint, duplicateAfter, decide, now) {
      return db.transaction((tx) => {
        const found = tx
          .select({
            id: clicks.id,
            isBot: clicks.isBot,
            linkId: links.id,
            workspaceId: links.workspaceId,
            slug: links.slug,
            domain: links.domain,
            destinationUrl: links.destinationUrl,
            conversionTracking: links.conversionTracking,
            isTest: links.isTest,
          })
          .from(clicks)
          .innerJoin(links, eq(links.id, clicks.linkId))
          .where(eq(clicks.id, clickId))
          .get()
        if (!found) return new ConversionRefused('unknown_click')
        const { id, isBot, linkId, ...link } = found
        const decision = decide({ id, isBot, link: { id: linkId, ...link } })
        if (decision instanceof ConversionRefused) return decision
        const earlier = tx
          .select()
          .from(conversions)
          .where(and(eq(conversions.fingerprint, fingerprint), gt(conversions.createdAt, duplicateAfter)))
          .orderBy(desc(conversions.createdAt))
          .limit(1)
          .get()
        if (earlier) return { row: earlier, duplicate: true }
        const row = tx.insert(conversions).values(decision.row).returning().get()
        publish(tx, decision.event(row), now)
        return { row, duplicate: false }
      }, { behavior: 'immediate' })
    },
  }
}
