// How a time range is read: whole UTC quarters, months and weeks (when summed, see maintenance.ts) and days
// from quarter, month, week and day rollups, whole hours around them from hour rollups, whole minutes and then seconds
// of a partial hour from a workspace's minute and second rollups when the question has them, and raw clicks
// only for what is left at either end (a range can start at any millisecond).
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../platform/time'

const SECOND_MS = 1_000

export type Grain = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter'

export interface Segment {
  source: Grain | 'raw'
  from: number
  to: number
}

/** Which finer and coarser rollups a question may read besides hours and days. */
export interface PlanOptions {
  /** Minute rollups hold every click from this instant on (the workspace's own; absent: none). */
  minutesFrom?: number
  /** Second rollups hold every click from this instant on (the workspace's own, kept a day; absent: none). */
  secondsFrom?: number
  /** Month rollups hold every whole UTC month ending at or before this instant (absent: none). */
  monthsBefore?: number
  /** Quarter rollups hold every whole UTC quarter ending at or before this instant (absent: none). */
  quartersBefore?: number
  /** Week rollups hold every whole UTC week (from Monday) ending at or before this instant (absent: none). */
  weeksBefore?: number
}

const floorTo = (t: number, unit: number) => t - (((t % unit) + unit) % unit)
const ceilTo = (t: number, unit: number) => {
  const f = floorTo(t, unit)
  return f === t ? t : f + unit
}
const monthFloor = (t: number) => {
  const d = new Date(t)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}
const monthCeil = (t: number) => {
  const f = monthFloor(t)
  if (f === t) return t
  const d = new Date(t)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}
/** 1970-01-05, the first Monday after the epoch: weeks are counted from it. */
const MONDAY = 4 * DAY_MS
const WEEK_MS = 7 * DAY_MS
export const weekFloor = (t: number) => t - ((((t - MONDAY) % WEEK_MS) + WEEK_MS) % WEEK_MS)
const weekCeil = (t: number) => {
  const f = weekFloor(t)
  return f === t ? t : f + WEEK_MS
}
export const quarterFloor = (t: number) => {
  const d = new Date(t)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - (d.getUTCMonth() % 3), 1)
}
const quarterCeil = (t: number) => {
  const f = quarterFloor(t)
  if (f === t) return t
  const d = new Date(f)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 3, 1)
}

/**
 * The segments covering [from, to) exactly, in time order; empty when from >= to. No click is later than
 * `now`, so a range reaching past it is read to the end of the current hour: its rollup row already holds
 * every click of that hour, and the raw clicks of a busy hour are never scanned for "until now".
 */
export function planRange(from: number, to: number, now = Number.POSITIVE_INFINITY, options: PlanOptions = {}): Segment[] {
  if (from >= to) return []
  if (to >= now) to = Math.max(to, ceilTo(now, HOUR_MS))
  const out: Segment[] = []
  const push = (source: Segment['source'], a: number, b: number) => {
    if (a < b) out.push({ source, from: a, to: b })
  }
  // A partial hour (or less than two hours with no whole one): whole minutes when the question has them.
  // When they start inside it (the hour a version writing them first ran, or a day ago for seconds), what
  // precedes their mark is read finer and the rest from them, rather than the whole part from raw clicks.
  const edge = (a: number, b: number) => {
    const mark = options.minutesFrom
    if (mark === undefined || mark >= b) return partialMinute(a, b)
    const m1 = ceilTo(Math.max(a, mark), MINUTE_MS)
    const m2 = floorTo(b, MINUTE_MS)
    if (m1 >= m2) return partialMinute(a, b)
    partialMinute(a, m1)
    push('minute', m1, m2)
    partialMinute(m2, b)
  }
  // What is left of a minute: whole seconds when the question has them (a burst lands in one or two
  // minutes, so its partial minute can hold a hundred thousand clicks), raw clicks for the rest.
  const partialMinute = (a: number, b: number) => {
    const mark = options.secondsFrom
    if (mark === undefined || mark >= b) return push('raw', a, b)
    const s1 = ceilTo(Math.max(a, mark), SECOND_MS)
    const s2 = floorTo(b, SECOND_MS)
    if (s1 >= s2) return push('raw', a, b)
    push('raw', a, s1)
    push('second', s1, s2)
    push('raw', s2, b)
  }
  const days = (a: number, b: number) => {
    const m1 = monthCeil(a)
    const m2 = options.monthsBefore === undefined ? m1 : Math.max(m1, monthFloor(Math.min(b, options.monthsBefore)))
    if (m1 >= m2) return weeks(a, b)
    weeks(a, m1)
    months(m1, m2)
    weeks(m2, b)
  }
  // Days outside whole months: whole weeks among them from week rows once summed (the days at both ends of
  // a year are up to 60 rows per link, their weeks a handful).
  const weeks = (a: number, b: number) => {
    const w1 = weekCeil(a)
    const w2 = options.weeksBefore === undefined ? w1 : Math.max(w1, weekFloor(Math.min(b, options.weeksBefore)))
    if (w1 >= w2) return push('day', a, b)
    push('day', a, w1)
    push('week', w1, w2)
    push('day', w2, b)
  }
  // Whole months: whole quarters among them from quarter rows once summed (a year reads 4-6 rows, not 12).
  const months = (a: number, b: number) => {
    const q1 = quarterCeil(a)
    const q2 = options.quartersBefore === undefined ? q1 : Math.max(q1, quarterFloor(Math.min(b, options.quartersBefore)))
    if (q1 >= q2) return push('month', a, b)
    push('month', a, q1)
    push('quarter', q1, q2)
    push('month', q2, b)
  }
  const h1 = ceilTo(from, HOUR_MS)
  const h2 = floorTo(to, HOUR_MS)
  if (h1 >= h2) {
    edge(from, to)
    return out
  }
  edge(from, h1)
  const d1 = ceilTo(h1, DAY_MS)
  const d2 = floorTo(h2, DAY_MS)
  if (d1 < d2) {
    push('hour', h1, d1)
    days(d1, d2)
    push('hour', d2, h2)
  } else {
    push('hour', h1, h2)
  }
  edge(h2, to)
  return out
}
