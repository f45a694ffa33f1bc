// TypeBox shapes of conversions: the beacon's body (spec 2.8, "Record conversion") and the Conversion it
// answers. The service checks bodies itself (they also arrive as text/plain, and every rule gets a message
// that names it); these schemas state the same rules in the OpenAPI document.
import { t, type Static } from 'elysia'
import type { EventDefinition } from '../../events/catalogue'
import { LinkRef } from '../links/model'

/** Ids the redirect hands destinations as lnk_cid: `clk_` + 20 base62 characters (random.ts sortableId). */
export const CLICK_ID_PATTERN = '^clk_[0-9A-Za-z]{20}$'
export const EVENT_NAME_MAX = 64
export const METADATA_MAX_BYTES = 4 * 1024
/** Largest value accepted: keeps sums of many far inside the range a double holds to the cent. */
export const VALUE_MAX = 1_000_000_000_000

export const ConversionBody = t.Object(
  {
    clickId: t.String({ pattern: CLICK_ID_PATTERN, description: 'Required. The lnk_cid query parameter the redirect added to the destination URL (clk_…)' }),
    eventName: t.String({
      minLength: 1,
      maxLength: EVENT_NAME_MAX,
      description: `Required. What happened, e.g. "signup" or "purchase": 1-${EVENT_NAME_MAX} characters, not blank, no control characters`,
    }),
    value: t.Optional(t.Number({ minimum: 0, maximum: VALUE_MAX, description: 'Amount in the major unit of currency (19.99 for 19.99 EUR); needs currency' })),
    currency: t.Optional(t.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code in upper case (EUR, USD, JPY…); needs value' })),
    metadata: t.Optional(t.Record(t.String(), t.Unknown(), { description: `Any JSON object, at most ${METADATA_MAX_BYTES} bytes serialised` })),
  },
  { additionalProperties: false, title: 'ConversionCreate' },
)
export type ConversionInput = Static<typeof ConversionBody>

export const Conversion = t.Object(
  {
    id: t.String({ description: 'cnv_…' }),
    clickId: t.String(),
    eventName: t.String(),
    value: t.Union([t.Number(), t.Null()]),
    currency: t.Union([t.String(), t.Null()]),
    metadata: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
    createdAt: t.String({ format: 'date-time' }),
    duplicate: t.Boolean({
      description: 'true when this beacon repeats one recorded less than 24 h ago: the answer is that first conversion, and nothing new was counted',
    }),
  },
  { title: 'Conversion' },
)
export type ConversionView = Static<typeof Conversion>

export const CONVERSION_EVENTS: EventDefinition[] = [
  {
    type: 'conversion.created',
    description:
      'A conversion beacon (POST /conversions) was recorded for a click of a link with conversionTracking; a resent beacon counted once sends no second event.',
    data: t.Object({
      conversion: t.Object({
        id: t.String({ description: 'cnv_…' }),
        clickId: t.String({ description: 'The click (clk_…) whose lnk_cid the beacon carried' }),
        eventName: t.String({ minLength: 1, maxLength: 64 }),
        value: t.Union([t.Number({ minimum: 0 }), t.Null()], { description: 'In the major unit of currency (19.99), or null' }),
        currency: t.Union([t.String({ pattern: '^[A-Z]{3}$' }), t.Null()], { description: 'ISO 4217 code; set exactly when value is' }),
        metadata: t.Union([t.Record(t.String(), t.Unknown()), t.Null()], { description: 'The object the beacon sent, or null' }),
        timestamp: t.String({ format: 'date-time', description: 'When it was recorded' }),
      }),
      link: LinkRef,
      workspaceId: t.String({ description: 'The workspace of the link' }),
    }),
  },
]
