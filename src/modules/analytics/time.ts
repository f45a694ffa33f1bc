// Calendar arithmetic in an IANA time zone, without a date library: local wall times ↔ instants through
// Intl, so buckets follow the zone's own rules (a DST day has 23 or 25 hours, a week starts on Monday).
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../platform/time'

export type Interval = 'hour' | 'day' | 'week' | 'month'
export const INTERVALS: readonly Interval[] = ['hour', 'day', 'week', 'month']

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formatters.set(tz, f)
  }
  return f
}

/**
 * Whether `tz` is an IANA zone this runtime knows. Intl also reads offsets ("+01:00"), which name no zone
 * (the document says so, http/time-zone.ts): a zone name starts with a letter.
 */
export function isTimeZone(tz: string): boolean {
  if (!/^[A-Za-z]/.test(tz)) return false
  try {
    formatter(tz)
    return true
  } catch {
    return false
  }
}

export interface WallTime {
  year: number
  /** 1-12 */
  month: number
  day: number
  hour: number
  minute: number
  second: number
}

export function wallTime(tz: string, instant: number): WallTime {
  const parts: Record<string, number> = {}
  for (const p of formatter(tz).formatToParts(new Date(instant))) if (p.type !== 'literal') parts[p.type] = Number(p.value)
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! }
}

/** The zone's offset from UTC at `instant`, in ms (east positive). */
export function offsetAt(tz: string, instant: number): number {
  const w = wallTime(tz, instant)
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second)
  return asUtc - (instant - (((instant % 1000) + 1000) % 1000))
}

/**
 * The instant a local wall time names. Date.UTC normalises overflow (day 32, month 13). A wall time that
 * a DST gap skips is moved forward by the gap (Temporal's "compatible" choice): 02:30 on a spring-forward
 * night in New York is 03:30, and a midnight that does not exist (Santiago) is the 01:00 the day starts at.
 */
export function instantOf(tz: string, year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number {
  const wall = Date.UTC(year, month - 1, day, hour, minute, second, ms)
  const t = wall - offsetAt(tz, wall - offsetAt(tz, wall))
  if (t + offsetAt(tz, t) === wall) return t
  // In a gap: of the offsets around it, the one in force before the gap gives the instant after it.
  return Math.max(wall - offsetAt(tz, t - 6 * HOUR_MS), wall - offsetAt(tz, t + 6 * HOUR_MS))
}

/** Start of the bucket holding `instant`. Weeks start on Monday. */
export function bucketStart(tz: string, interval: Interval, instant: number): number {
  const w = wallTime(tz, instant)
  switch (interval) {
    case 'hour': {
      const start = instantOf(tz, w.year, w.month, w.day, w.hour)
      return start <= instant ? start : instant - (instant % HOUR_MS)
    }
    case 'day':
      return instantOf(tz, w.year, w.month, w.day)
    case 'week': {
      const weekday = new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay()
      return instantOf(tz, w.year, w.month, w.day - ((weekday + 6) % 7))
    }
    case 'month':
      return instantOf(tz, w.year, w.month, 1)
  }
}

/** Start of the bucket after the one starting at `start`. */
export function nextBucket(tz: string, interval: Interval, start: number): number {
  if (interval === 'hour') return start + HOUR_MS
  const w = wallTime(tz, start)
  const next =
    interval === 'day'
      ? instantOf(tz, w.year, w.month, w.day + 1)
      : interval === 'week'
        ? instantOf(tz, w.year, w.month, w.day + 7)
        : instantOf(tz, w.year, w.month + 1, 1)
  // A zone whose day starts in a gap can name the same instant twice; never loop in place.
  return next > start ? next : start + DAY_MS
}

/** ISO 8601 with the zone's offset at that instant: 2026-03-08T00:00:00.000-05:00. */
export function localIso(tz: string, instant: number): string {
  const offset = offsetAt(tz, instant)
  const local = new Date(instant + offset).toISOString().slice(0, 23)
  const sign = offset < 0 ? '-' : '+'
  const abs = Math.abs(offset) / MINUTE_MS
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
/** The local date-time form (no offset), as the OpenAPI document publishes it. */
export const LOCAL_DATE_TIME_PATTERN = '^(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2})(?::(\\d{2})(?:\\.(\\d{1,3}))?)?$'
const LOCAL_DATE_TIME = new RegExp(LOCAL_DATE_TIME_PATTERN)
const ZONED_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i

/**
 * An ISO 8601 date or date-time as an instant. A date is local midnight in `tz`; as the end of a range
 * (`endOfDate`) it is the next midnight, so `to=2026-03-31` includes that whole day. A date-time without
 * an offset is local time in `tz`. Null when the text is none of these or names no real date.
 */
export function parseInstant(text: string, tz: string, endOfDate = false): number | null {
  let m = DATE.exec(text)
  if (m) {
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
    if (!realDate(y, mo, d)) return null
    return instantOf(tz, y, mo, d + (endOfDate ? 1 : 0))
  }
  m = LOCAL_DATE_TIME.exec(text)
  if (m) {
    const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m![i] ?? 0)) as [number, number, number, number, number, number]
    if (!realDate(y, mo, d) || h > 23 || mi > 59 || s > 59) return null
    return instantOf(tz, y, mo, d, h, mi, s, Number((m[7] ?? '0').padEnd(3, '0')))
  }
  if (ZONED_DATE_TIME.test(text)) {
    const t = Date.parse(text)
    return Number.isNaN(t) ? null : t
  }
  return null
}

function realDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false
  return d <= new Date(Date.UTC(y, m, 0)).getUTCDate()
}
