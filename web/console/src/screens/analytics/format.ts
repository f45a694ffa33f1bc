// How analytics figures read: numbers and money in the viewer's locale, times in the viewer's zone, and the
// API's raw dimension values (country codes, null for unknown) as words.
import type { Overview } from './data'
import type { Interval } from './range'

const numbers = new Intl.NumberFormat()
export const count = (n: number) => numbers.format(n)

/** Revenue per currency, e.g. "€59.97 · $5.00"; "None" without any. */
export function money(revenue: Record<string, number>): string {
  const parts = Object.entries(revenue).map(([currency, value]) => {
    try {
      return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(value)
    } catch {
      return `${numbers.format(value)} ${currency}`
    }
  })
  return parts.length ? parts.join(' · ') : 'None'
}

let regions: Intl.DisplayNames | null = null
function countryName(code: string): string {
  try {
    regions ??= new Intl.DisplayNames(undefined, { type: 'region' })
    return regions.of(code) ?? code
  } catch {
    return code
  }
}

/** A breakdown of the overview: countries, devices, browsers, os, referrers. */
export type Dimension = keyof Overview['top']

export function dimensionValue(dimension: Dimension, value: string | null): string {
  if (value === null) return dimension === 'referrers' ? 'Direct (no referrer)' : 'Unknown'
  if (dimension === 'countries') return countryName(value)
  if (dimension === 'devices') return value.charAt(0).toUpperCase() + value.slice(1)
  return value
}

const BUCKET_FORMATS: Record<Interval, Intl.DateTimeFormatOptions> = {
  hour: { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' },
  day: { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' },
  week: { day: 'numeric', month: 'short', year: 'numeric' },
  month: { month: 'long', year: 'numeric' },
}

/** A bucket's start as a person reads it, in the viewer's zone. */
export function bucketLabel(start: string, interval: Interval): string {
  const text = new Intl.DateTimeFormat(undefined, BUCKET_FORMATS[interval]).format(new Date(start))
  return interval === 'week' ? `Week of ${text}` : text
}

const moment = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
export const when = (iso: string) => moment.format(new Date(iso))

export const INTERVAL_WORDS: Record<Interval, string> = { hour: 'hour', day: 'day', week: 'week', month: 'month' }
