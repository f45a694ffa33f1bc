// The conversions area's port: what the service asks of storage, in plain types (repo.ts answers it on
// either engine).
import type { Insertable } from '../../db/rows'
import type { PublishInput } from '../../events/outbox'

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
