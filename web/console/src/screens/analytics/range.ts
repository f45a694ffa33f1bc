// The range an analytics screen shows, kept in the hash query (`?range=7d`, `?range=custom&from=…&to=…`) so a
// reload or a shared address shows the same figures. Presets are turned into the API's query at load time,
// in the viewer's own time zone, so buckets and "today" are the viewer's.
import type { Params, Schema } from '../../api-types'

export type Preset = '24h' | '7d' | '30d' | '12m' | 'custom'
type TimelineQuery = Params<'/analytics/timeline', 'get'>
export type Interval = NonNullable<TimelineQuery['interval']>

export const PRESETS: { value: Preset; label: string }[] = [
  { value: '24h', label: '24 hours' },
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
  { value: '12m', label: '12 months' },
  { value: 'custom', label: 'Custom' },
]

export interface Range {
  preset: Preset
  /** Local dates (YYYY-MM-DD) of a custom range, `to` included. */
  from?: string
  to?: string
}

/** What the analytics endpoints are asked: from/to (to omitted means now), the viewer's zone, bucket size. */
export type RangeQuery = Required<Pick<TimelineQuery, 'from' | 'tz' | 'interval'>> & Pick<TimelineQuery, 'to'>

/** The browser's zone, taken to be one the server knows (it refuses another with a message naming tz). */
export const viewerZone = (): Schema<'TimeZone'> => (Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC') as Schema<'TimeZone'>

const DATE = /^\d{4}-\d{2}-\d{2}$/
const pad = (n: number) => String(n).padStart(2, '0')

/** A Date's calendar day in the viewer's zone (the browser's local time is that zone). */
export const localDate = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`

const daysBefore = (now: Date, days: number) => new Date(now.getFullYear(), now.getMonth(), now.getDate() - days)

export function readRange(query: URLSearchParams): Range {
  const preset = PRESETS.find((p) => p.value === query.get('range'))?.value ?? '30d'
  if (preset !== 'custom') return { preset }
  const from = query.get('from') ?? ''
  const to = query.get('to') ?? ''
  return DATE.test(from) && DATE.test(to) ? { preset, from, to } : { preset: '30d' }
}

/** The hash query of a range (with the screen's other query values kept). */
export function rangeQuery(range: Range, keep: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { ...keep, range: range.preset, from: range.preset === 'custom' ? range.from : undefined, to: range.preset === 'custom' ? range.to : undefined }
}

/** The days a custom range spans, both ends included. */
export function spanDays(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1
}

/** Buckets a person can read: a few dozen points rather than the API's finest. */
function customInterval(days: number): Interval {
  if (days <= 2) return 'hour'
  if (days <= 92) return 'day'
  if (days <= 400) return 'week'
  return 'month'
}

export function toQuery(range: Range, now = new Date(), tz = viewerZone()): RangeQuery {
  switch (range.preset) {
    case '24h':
      return { from: new Date(now.getTime() - 86_400_000).toISOString(), tz, interval: 'hour' }
    case '7d':
      return { from: localDate(daysBefore(now, 6)), tz, interval: 'day' }
    case '12m':
      return { from: localDate(new Date(now.getFullYear(), now.getMonth() - 11, 1)), tz, interval: 'month' }
    case 'custom':
      return { from: range.from!, to: range.to!, tz, interval: customInterval(spanDays(range.from!, range.to!)) }
    default:
      return { from: localDate(daysBefore(now, 29)), tz, interval: 'day' }
  }
}

export const START_MISSING = 'Choose a start date.'

/** Why a custom range cannot be asked for, in words; null when it can (all but a missing start are the end's). */
export function customProblem(from: string, to: string): string | null {
  if (!DATE.test(from)) return START_MISSING
  if (!DATE.test(to)) return 'Choose an end date.'
  if (to < from) return 'The end date must be on or after the start date.'
  if (spanDays(from, to) > 731) return 'A range covers at most 731 days (two years).'
  return null
}
