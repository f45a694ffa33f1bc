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
    if (used + 1 > limit) {
      // Admitted again once the previous minute's share has decayed enough, or the next minute starts.
      const excess = used + 1 - limit
      const wait = w.previous > 0 ? Math.ceil(((excess / w.previous) * WINDOW_MS) / 1000) : reset
      return { allowed: false, limit, remaining: 0, reset, retryAfter: Math.max(1, Math.min(wait, 60)) }
    }
    w.current++
    if (this.windows.size > 100_000) this.prune(start)
    return { allowed: true, limit, remaining: Math.max(0, Math.floor(limit - used - 1)), reset, retryAfter: 0 }
  }

  private prune(start: number) {
    for (const [k, w] of this.windows) if (start - w.start >= 2 * WINDOW_MS) this.windows.delete(k)
  }
}
