// How a time range is read: whole UTC months (when summed, see maintenance.ts) and days from month and day
// rollups, whole hours around them from hour rollups, whole minutes of a partial hour from a workspace's
// minute rollups when the question has them, and raw clicks only for what is left at either end (a range can
// start at any millisecond).
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../platform/time'

export type Grain = 'minute' | 'hour' | 'day' | 'month'

export interface Segment {
  source: Grain | 'raw'
  from: number
  to: number
}

/** Which finer and coarser rollups a question may read besides hours and days. */
export interface PlanOptions {
  /** Minute rollups hold every click from this instant on (the workspace's own; absent: none). */
  minutesFrom?: number
  /** Month rollups hold every whole UTC month ending at or before this instant (absent: none). */
  monthsBefore?: number
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
  const edge = (a: number, b: number) => {
    const m1 = ceilTo(a, MINUTE_MS)
    const m2 = floorTo(b, MINUTE_MS)
    if (options.minutesFrom === undefined || a < options.minutesFrom || m1 >= m2) return push('raw', a, b)
    push('raw', a, m1)
    push('minute', m1, m2)
    push('raw', m2, b)
  }
  const days = (a: number, b: number) => {
    const m1 = monthCeil(a)
    const m2 = options.monthsBefore === undefined ? m1 : Math.max(m1, monthFloor(Math.min(b, options.monthsBefore)))
    if (m1 >= m2) return push('day', a, b)
    push('day', a, m1)
    push('month', m1, m2)
    push('day', m2, b)
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
