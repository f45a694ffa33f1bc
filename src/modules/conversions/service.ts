// Conversion logic shared by HTTP and, later, jobs and the CLI: the rules of a beacon's body, the click it
// must name (a person's click of a live link with conversionTracking), the 24-hour deduplication of resent
// beacons, and the Conversion view. Attribution is the click's: its link and that link's workspace.
import { canonicalJson } from '../../platform/canonical-json'
import { iso } from '../../platform/clock'
import type { Deps } from '../../context'
import type { ValidationIssue } from '../../platform/errors'
import { clickNotFound, clickNotTracked, invalidConversion } from './errors'
import { sha256Hex, sortableId } from '../../platform/random'
import { shortUrl } from '../links/model'
import { isCurrencyCode } from './currencies'
import { CLICK_ID_PATTERN, EVENT_NAME_MAX, METADATA_MAX_BYTES, VALUE_MAX, type ConversionInput, type ConversionView } from './model'
import { ConversionRefused, type ClickOfConversion, type ConversionRow, type ConversionsRepo } from './port'
import { DAY_MS, MINUTE_MS } from '../../platform/time'

export interface ConversionsCtx extends Deps {
  conversions: ConversionsRepo
  /** Writes the clicks still held in memory (the click buffer): a beacon can overtake its click's flush. */
  flushClicks(): Promise<void>
}

/** A resent beacon less than this long after the first is counted once. */
export const DUPLICATE_WINDOW_MS = DAY_MS
const FIELDS = ['clickId', 'eventName', 'value', 'currency', 'metadata'] as const
const CLICK_ID = new RegExp(CLICK_ID_PATTERN)
// C0 and C1 control characters (tab and newline included): an event name is a label, not text.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
const NEEDS_BOTH = 'a conversion needs clickId (the lnk_cid the destination received) and eventName'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Checks a beacon's body against every rule and answers it typed; otherwise throws validation_failed
 * listing every problem. null in an optional field is the same as leaving it out.
 */
export function checkConversionBody(raw: unknown): ConversionInput {
  const issues: ValidationIssue[] = []
  const add = (path: string, message: string) => issues.push({ path, message })
  if (!isObject(raw)) {
    add('', `the body must be a JSON object such as {"clickId": "clk_…", "eventName": "signup"}; ${NEEDS_BOTH}`)
    throw invalidConversion(issues)
  }
  for (const key of Object.keys(raw)) {
    if (!(FIELDS as readonly string[]).includes(key)) add(key, `is not a field of a conversion; the fields are ${FIELDS.join(', ')}`)
  }

  const { clickId, eventName, metadata } = raw
  const value = raw.value ?? undefined
  const currency = raw.currency ?? undefined
  if (clickId === undefined || clickId === null) add('clickId', `is required: ${NEEDS_BOTH}`)
  else if (typeof clickId !== 'string' || !CLICK_ID.test(clickId)) {
    add('clickId', 'must be a click id as the redirect hands it to the destination in lnk_cid: clk_ followed by 20 letters and digits')
  }

  if (eventName === undefined || eventName === null) add('eventName', `is required: ${NEEDS_BOTH}`)
  else if (typeof eventName !== 'string') add('eventName', `must be a string of 1-${EVENT_NAME_MAX} characters, such as "signup" or "purchase"`)
  else {
    const length = [...eventName].length
    if (eventName.trim() === '') add('eventName', `must not be empty or blank; 1-${EVENT_NAME_MAX} characters, such as "signup"`)
    else if (length > EVENT_NAME_MAX) add('eventName', `must be at most ${EVENT_NAME_MAX} characters (it has ${length})`)
    else if (CONTROL.test(eventName)) add('eventName', 'must not contain control characters (tabs, line breaks…)')
  }

  if (value !== undefined) {
    if (typeof value !== 'number' || !Number.isFinite(value)) add('value', 'must be a number, in the major unit of currency (19.99 for 19.99 EUR)')
    else if (value < 0) add('value', 'must be 0 or more')
    else if (value > VALUE_MAX) add('value', `must be at most ${VALUE_MAX}`)
  }
  if (currency !== undefined) {
    if (typeof currency !== 'string') add('currency', 'must be an ISO 4217 code such as "EUR" or "USD"')
    else if (!isCurrencyCode(currency)) {
      const upper = currency.toUpperCase()
      add(
        'currency',
        isCurrencyCode(upper)
          ? `must be in upper case: "${upper}"`
          : `"${currency.slice(0, 16)}" is not a current ISO 4217 currency code (such as EUR, USD, GBP, JPY)`,
      )
    }
  }
  // A value is revenue in some currency, and analytics sums it per currency: the two come together.
  if (value !== undefined && currency === undefined) add('currency', 'is required with value: the ISO 4217 code value is in, such as "EUR"')
  if (currency !== undefined && value === undefined) add('value', 'is required with currency (or leave currency out)')

  if (metadata !== undefined && metadata !== null) {
    if (!isObject(metadata)) add('metadata', 'must be a JSON object, such as {"plan": "pro"} (or left out)')
    else {
      const bytes = Buffer.byteLength(JSON.stringify(metadata))
      if (bytes > METADATA_MAX_BYTES) add('metadata', `must be at most ${METADATA_MAX_BYTES} bytes as JSON (it has ${bytes})`)
    }
  }

  if (issues.length) throw invalidConversion(issues)
  const input: ConversionInput = { clickId: clickId as string, eventName: eventName as string }
  if (value !== undefined) input.value = value as number
  if (currency !== undefined) input.currency = currency as string
  if (isObject(metadata)) input.metadata = metadata
  return input
}

/** What makes two beacons "the same": clickId, eventName, value, currency and metadata. */
export const fingerprintOf = (input: ConversionInput) =>
  sha256Hex(canonicalJson([input.clickId, input.eventName, input.value ?? null, input.currency ?? null, input.metadata ?? null]))

/** The millisecond a click id was minted at (its first 9 base62 characters, random.ts sortableId). */
function clickTime(clickId: string): number {
  let t = 0
  for (const c of clickId.slice(4, 13)) {
    const code = c.charCodeAt(0)
    t = t * 62 + (code <= 57 ? code - 48 : code <= 90 ? code - 55 : code - 61)
  }
  return t
}

/**
 * Whether the click may still wait in the click buffer (flushed every 250 ms, later when a write fails):
 * only then is an unknown id worth a flush and a second look.
 */
const mayBeBuffered = (clickId: string, now: number) => {
  const at = clickTime(clickId)
  return at <= now + MINUTE_MS && at >= now - 10 * MINUTE_MS
}

export function toConversion(row: ConversionRow, duplicate: boolean): ConversionView {
  return {
    id: row.id,
    clickId: row.clickId,
    eventName: row.eventName,
    value: row.value,
    currency: row.currency,
    metadata: row.metadata ?? null,
    createdAt: iso(row.createdAt),
    duplicate,
  }
}

function decide(ctx: ConversionsCtx, input: ConversionInput, fingerprint: string, now: number) {
  return (click: ClickOfConversion) => {
    // Bots never get a click id, and test links record no clicks; should either ever be stored, it still
    // cannot convert.
    if (click.isBot) return new ConversionRefused('bot_click', click)
    if (click.link.isTest) return new ConversionRefused('test_click', click)
    if (!click.link.conversionTracking) return new ConversionRefused('not_tracked', click)
    const link = click.link
    return {
      row: {
        id: sortableId('cnv', now),
        clickId: click.id,
        linkId: link.id,
        workspaceId: link.workspaceId,
        eventName: input.eventName,
        value: input.value ?? null,
        currency: input.currency ?? null,
        metadata: input.metadata ?? null,
        fingerprint,
        createdAt: now,
      },
      event: (row: ConversionRow) => ({
        type: 'conversion.created',
        workspaceId: row.workspaceId,
        mode: 'live' as const,
        data: {
          conversion: {
            id: row.id,
            clickId: row.clickId,
            eventName: row.eventName,
            value: row.value,
            currency: row.currency,
            metadata: row.metadata ?? null,
            timestamp: iso(row.createdAt),
          },
          link: { id: link.id, slug: link.slug, domain: link.domain, shortUrl: shortUrl(ctx, link), destinationUrl: link.destinationUrl },
          workspaceId: row.workspaceId,
        },
      }),
    }
  }
}

/**
 * Records the conversion a beacon reports. Answers the new conversion (duplicate false), or the one an
 * identical beacon recorded less than 24 h ago (duplicate true, nothing written). Refuses an unknown
 * click, a bot's hit and a test click with 404, and a click of a link without conversionTracking with 400.
 */
export async function recordConversion(ctx: ConversionsCtx, raw: unknown): Promise<ConversionView> {
  const input = checkConversionBody(raw)
  const fingerprint = fingerprintOf(input)
  const attempt = () => {
    const now = ctx.clock.now()
    return ctx.conversions.record(input.clickId, fingerprint, now - DUPLICATE_WINDOW_MS, decide(ctx, input, fingerprint, now), now)
  }
  let outcome = await attempt()
  if (outcome instanceof ConversionRefused && outcome.reason === 'unknown_click' && mayBeBuffered(input.clickId, ctx.clock.now())) {
    // The visitor may have converted within moments of the redirect, before its click was written.
    await ctx.flushClicks()
    outcome = await attempt()
  }
  if (!(outcome instanceof ConversionRefused)) return toConversion(outcome.row, outcome.duplicate)
  // A bot's hit and a test click are not clicks a conversion can name: the same answer as an unknown id.
  throw outcome.reason === 'not_tracked' ? clickNotTracked() : clickNotFound(input.clickId)
}
