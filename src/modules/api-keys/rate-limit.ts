// Per-key request rate: a sliding window over the last minute, estimated from the current and previous
// fixed minutes (the previous one weighted by how much of it still lies inside the window). Fair to steady
// clients, exact at the boundary for bursts, and O(1) memory per key. It lives in memory: a restart opens
// a fresh window, which the contract allows.
export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the current fixed minute ends (RateLimit-Reset). */
  reset: number
  /** When refused: seconds after which a request would be admitted (Retry-After). */
  retryAfter: number
}

const WINDOW_MS = 60_000
/** Absorbs floating-point noise in the weighted estimate (a request exactly at the limit is admitted). */
const EPSILON = 1e-9

export class RateLimiter {
  private windows = new Map<string, { start: number; current: number; previous: number }>()

  take(key: string, limit: number, now: number): RateDecision {
    const start = now - (now % WINDOW_MS)
    let w = this.windows.get(key)
    if (!w || start - w.start >= 2 * WINDOW_MS) w = { start, current: 0, previous: 0 }
    else if (start !== w.start) w = { start, current: 0, previous: w.current }
    this.windows.set(key, w)
    const weight = 1 - (now - start) / WINDOW_MS
    const used = w.previous * weight + w.current
    const reset = Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000))
    if (used + 1 > limit + EPSILON) {
      // Refused requests are not counted, so the estimate only falls from here. When this minute's own
      // count leaves room, the request is admitted once the previous minute's share has decayed by the
      // excess (within this minute). Otherwise not before the next minute, in which this minute's count
      // becomes the decaying share: it must lose current + 1 - limit of it.
      const waitMs =
        w.current + 1 <= limit + EPSILON
          ? ((used + 1 - limit) / w.previous) * WINDOW_MS
          : start + WINDOW_MS - now + ((w.current + 1 - limit) / w.current) * WINDOW_MS
      return { allowed: false, limit, remaining: 0, reset, retryAfter: Math.max(1, Math.ceil(waitMs / 1000 - EPSILON)) }
    }
    w.current++
    if (this.windows.size > 100_000) this.prune(start)
    return { allowed: true, limit, remaining: Math.max(0, Math.floor(limit - used - 1)), reset, retryAfter: 0 }
  }

  private prune(start: number) {
    for (const [k, w] of this.windows) if (start - w.start >= 2 * WINDOW_MS) this.windows.delete(k)
  }
}
