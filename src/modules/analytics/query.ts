// Reading and checking an analytics question's query before any figure is read: its range (from, to, tz),
// its timeline interval, and the links it may see. Every bad value is refused here, so the readers after it
// meet only sound ranges and scopes.
import { iso } from '../../platform/clock'
import type { Deps } from '../../context'
import type { Caller } from '../identity'
import { notADate, rangeBackwards, rangeTooLong, unknownInterval, unknownLink, unknownTimeZone } from './errors'
import type { AnalyticsRepo, AnalyticsScope } from './port'
import type { UniquesHelper } from './uniques-helper'
import { instantOf, INTERVALS, isTimeZone, parseInstant, wallTime, type Interval } from './time'
import { DAY_MS, HOUR_MS } from '../../platform/time'

export interface AnalyticsCtx extends Deps {
  analytics: AnalyticsRepo
  /** Measures unique visitors on another thread (SQLite; see uniques-helper.ts). */
  uniques?: UniquesHelper
}

/** Longest range one question may cover. */
export const MAX_RANGE_DAYS = 731
export const DEFAULT_RANGE_DAYS = 30
/** Most buckets one timeline may have (an hourly timeline covers up to 41 days). */
export const MAX_BUCKETS = 1000
/** Intervals are chosen as the finest one giving at most this many buckets. */
const AUTO_BUCKETS = 400
export const TOP_LIMIT = 10
export const TOP_LINKS_MAX = 100

export interface RangeQuery {
  from?: string
  to?: string
  tz?: string
  linkId?: string
}

export interface Range {
  from: number
  to: number
  tz: string
  /** The clock when the question was asked: no click is later (see planRange). */
  now: number
}

/** from/to/tz of a query as instants; defaults to the last 30 days (today included) in tz. */
export function resolveRange(q: RangeQuery, now: number): Range {
  const tz = q.tz ?? 'UTC'
  if (!isTimeZone(tz)) throw unknownTimeZone(tz)
  const parse = (param: 'from' | 'to', text: string | undefined, end: boolean) => {
    if (text === undefined) return undefined
    const t = parseInstant(text, tz, end)
    if (t === null) throw notADate(param, text)
    return t
  }
  const to = parse('to', q.to, true) ?? now
  let from = parse('from', q.from, false)
  if (from === undefined) {
    const w = wallTime(tz, to - 1)
    from = instantOf(tz, w.year, w.month, w.day - (DEFAULT_RANGE_DAYS - 1))
  }
  if (to <= from) throw rangeBackwards(iso(from))
  if (to - from > MAX_RANGE_DAYS * DAY_MS) throw rangeTooLong(MAX_RANGE_DAYS)
  return { from, to, tz, now }
}

/** The finest interval that keeps the range within AUTO_BUCKETS buckets. */
function chooseInterval(range: Range): Interval {
  const span = range.to - range.from
  if (span <= AUTO_BUCKETS * HOUR_MS) return 'hour'
  if (span <= AUTO_BUCKETS * DAY_MS) return 'day'
  if (span <= AUTO_BUCKETS * 7 * DAY_MS) return 'week'
  return 'month'
}

/** The timeline's interval as asked, or chosen from the range when not. */
export function resolveInterval(interval: string | undefined, range: Range): Interval {
  if (interval !== undefined && !INTERVALS.includes(interval as Interval)) throw unknownInterval(INTERVALS)
  return (interval as Interval | undefined) ?? chooseInterval(range)
}

/**
 * The query's scope: the workspace's live links (a test key: its test links), narrowed to one link and to the
 * key's scope filters.
 */
export async function scopeOf(ctx: AnalyticsCtx, caller: Caller, linkId: string | undefined): Promise<AnalyticsScope> {
  const filters = caller.key.scopeFilters
  const scope: AnalyticsScope = {
    workspaceId: caller.workspace.id,
    test: caller.mode === 'test',
    domains: filters?.domains,
    tags: filters?.tags,
    folders: filters?.folders,
  }
  if (linkId !== undefined) {
    const id = linkId.toLowerCase()
    // Unknown, another workspace's, of the other mode (a test link to a live key, a live one to a test key) or
    // out of the key's scope: all the same 404.
    if (!/^[0-9a-f-]{36}$/.test(id) || (await ctx.analytics.countLinks({ ...scope, linkId: id })) === 0) throw unknownLink(linkId)
    scope.linkId = id
  }
  return scope
}
