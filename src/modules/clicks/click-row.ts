// A stored click as both flushes write it: the columns of `clicks` in one order, and one click's values in
// that order, so SQLite's prepared insert and PostgreSQL's unnest cannot disagree on what a click holds.
import type { Enrichment, RollupClick } from '../analytics'
import type { ClickRecord } from './port'

/** Each column with its PostgreSQL type (for unnest's arrays). */
export const CLICK_COLUMNS = [
  ['id', 'text'],
  ['link_id', 'text'],
  ['workspace_id', 'text'],
  ['clicked_at', 'int8'],
  ['visitor_hash', 'text'],
  ['user_agent', 'text'],
  ['referrer', 'text'],
  ['referrer_host', 'text'],
  ['rule_id', 'text'],
  ['variant_id', 'text'],
  ['country', 'text'],
  ['city', 'text'],
  ['device', 'text'],
  ['browser', 'text'],
  ['os', 'text'],
  ['is_bot', 'bool'],
] as const

/** device 'bot' exactly when is_bot: the redirect's verdict (isbot) decides, not the UA parser. */
const deviceOf = (c: ClickRecord, e: Enrichment) => (c.isBot ? 'bot' : e.device === 'bot' ? 'other' : e.device)

/** One click's values, in CLICK_COLUMNS' order. */
export function clickRow(c: ClickRecord, visitor: string, e: Enrichment): (string | number | boolean | null)[] {
  return [
    c.id,
    c.linkId,
    c.workspaceId,
    c.clickedAt,
    visitor,
    c.userAgent,
    c.referrer,
    c.referrerHost,
    c.ruleId,
    c.variantId,
    e.country,
    e.city,
    deviceOf(c, e),
    e.browser,
    e.os,
    c.isBot,
  ]
}

/** What the click adds to the rollups. */
export function rollupClick(c: ClickRecord, visitor: string, e: Enrichment): RollupClick {
  return {
    linkId: c.linkId,
    workspaceId: c.workspaceId,
    clickedAt: c.clickedAt,
    visitor,
    isBot: c.isBot,
    country: e.country,
    referrer: c.referrerHost,
    browser: e.browser,
    os: e.os,
    device: deviceOf(c, e),
  }
}
