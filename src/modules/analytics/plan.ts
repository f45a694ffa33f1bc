// How a time range is read: whole UTC days from day rollups, whole hours around them from hour rollups,
// and raw clicks only for the partial hour at either end (a range can start at any millisecond).
import { DAY_MS, HOUR_MS } from '../../platform/time'

export type Grain = 'hour' | 'day'

export interface Segment {
  source: Grain | 'raw'
  from: number
  to: number
}

const floorTo = (t: number, unit: number) => t - (((t % unit) + unit) % unit)
const ceilTo = (t: number, unit: number) => {
  const f = floorTo(t, unit)
  return f === t ? t : f + unit
}

/**
 * The segments covering [from, to) exactly, in time order; empty when from >= to. No click is later than
 * `now`, so a range reaching past it is read to the end of the current hour: its rollup row already holds
 * every click of that hour, and the raw clicks of a busy hour are never scanned for "until now".
 */
export function planRange(from: number, to: number, now = Number.POSITIVE_INFINITY): Segment[] {
  if (from >= to) return []
  if (to >= now) to = Math.max(to, ceilTo(now, HOUR_MS))
  const h1 = ceilTo(from, HOUR_MS)
  const h2 = floorTo(to, HOUR_MS)
  if (h1 >= h2) return [{ source: 'raw', from, to }]
  const out: Segment[] = []
  if (from < h1) out.push({ source: 'raw', from, to: h1 })
  const d1 = ceilTo(h1, DAY_MS)
  const d2 = floorTo(h2, DAY_MS)
  if (d1 < d2) {
    if (h1 < d1) out.push({ source: 'hour', from: h1, to: d1 })
    out.push({ source: 'day', from: d1, to: d2 })
    if (d2 < h2) out.push({ source: 'hour', from: d2, to: h2 })
  } else {
    out.push({ source: 'hour', from: h1, to: h2 })
  }
  if (h2 < to) out.push({ source: 'raw', from: h2, to })
  return out
}
