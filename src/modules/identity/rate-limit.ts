// Per-key request rate: a sliding window over the last minute, estimated from the current and previous
// fixed minutes (the previous one weighted by how much of it still lies inside the window). Fair to steady
// clients, exact at the boundary for bursts, and O(1) memory per key. On SQLite (one process) it lives in
// memory: a restart opens a fresh window, which the contract allows. On PostgreSQL the two minutes' counts
// live in the database (repo-limits.ts), so a limit holds across every node serving the key.
//
// The estimate changes continuously, so the times it answers are exact: a refused request is admitted
// Retry-After seconds later and not a second earlier (unless other requests used the room meanwhile).
import { engineOf, onEngine, type Store } from '../../db/store'
import { MINUTE_MS } from '../../platform/time'
import type { LimitsRepo } from './port-limits'
import { createLimitsRepo } from './repo-limits'

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /**
   * RateLimit-Reset, in seconds. With requests left: until the whole allowance is back (every request the
   * window counts has slid out of it). With none left: until the next request is admitted, the instant
   * Retry-After names on a refusal. A fixed minute's end would be wrong either way: the window still counts
   * this minute's requests during the next one.
   */
  reset: number
  /** When refused: seconds after which a request is admitted (Retry-After); the same as reset. */
  retryAfter: number
}

interface Window {
  start: number
  current: number
  previous: number
}

const WINDOW_MS = MINUTE_MS
/** Absorbs floating-point noise in the weighted estimate (a request exactly at the limit is admitted). */
const EPSILON = 1e-9

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000 - EPSILON))

/** Requests the window counts at `now` (a fraction: the previous minute's share decays). */
const used = (w: Window, now: number) => w.previous * (1 - (now - w.start) / WINDOW_MS) + w.current

const admits = (w: Window, limit: number, now: number) => used(w, now) + 1 <= limit + EPSILON

/**
 * Milliseconds from `now` until a request would be admitted, when it would not be now. Refused requests are
 * not counted, so the estimate only falls from here. When this minute's own count leaves room, the request
 * is admitted once the previous minute's share has decayed by the excess (within this minute). Otherwise
 * not before the next minute, in which this minute's count becomes the decaying share: it must lose
 * current + 1 - limit of it.
 */
function admittedAfterMs(w: Window, limit: number, now: number): number {
  if (w.current + 1 <= limit + EPSILON) return ((used(w, now) + 1 - limit) / w.previous) * WINDOW_MS
  return w.start + WINDOW_MS - now + ((w.current + 1 - limit) / w.current) * WINDOW_MS
}

/** The answer to a request the window admitted, once it is counted in `w`. */
function admitted(w: Window, limit: number, now: number): RateDecision {
  // Counted with the same tolerance as admission, so remaining is 0 exactly when the next request is refused.
  const remaining = Math.max(0, Math.floor(limit - used(w, now) + EPSILON))
  // This minute's requests (this one among them) leave the window at the end of the next minute.
  const reset = remaining > 0 ? seconds(w.start + 2 * WINDOW_MS - now) : seconds(admittedAfterMs(w, limit, now))
  return { allowed: true, limit, remaining, reset, retryAfter: 0 }
}

/** The answer to a request the window refused. */
function refused(w: Window, limit: number, now: number): RateDecision {
  // Counts read after a shared refusal may already admit (others' windows moved on): try again in a second.
  const wait = seconds(admits(w, limit, now) ? 0 : admittedAfterMs(w, limit, now))
  return { allowed: false, limit, remaining: 0, reset: wait, retryAfter: wait }
}

const minuteOf = (now: number) => now - (now % WINDOW_MS)

/** Takes one request of `key` against `limit` a minute: in memory, or (on PostgreSQL) in the database. */
export interface RateLimit {
  take(key: string, limit: number, now: number): RateDecision | Promise<RateDecision>
}

/** One process's windows, answered without awaiting. */
export class RateLimiter implements RateLimit {
  private windows = new Map<string, Window>()

  take(key: string, limit: number, now: number): RateDecision {
    const start = minuteOf(now)
    let w = this.windows.get(key)
    if (!w || start - w.start >= 2 * WINDOW_MS) w = { start, current: 0, previous: 0 }
    else if (start !== w.start) w = { start, current: 0, previous: w.current }
    this.windows.set(key, w)
    if (!admits(w, limit, now)) return refused(w, limit, now)
    w.current++
    if (this.windows.size > 100_000) this.prune(start)
    return admitted(w, limit, now)
  }

  private prune(start: number) {
    for (const [k, w] of this.windows) if (start - w.start >= 2 * WINDOW_MS) this.windows.delete(k)
  }
}

/**
 * The same windows kept in the database for every node: a request is counted by one conditional upsert that
 * applies admits() to the counts as they are when its row is locked, so nodes together admit exactly what
 * one process would. `scope` keeps one limiter's keys apart from another's.
 */
export class SharedRateLimiter implements RateLimit {
  constructor(
    private repo: Pick<LimitsRepo, 'takeRate'>,
    private scope: string,
  ) {}

  async take(key: string, limit: number, now: number): Promise<RateDecision> {
    const start = minuteOf(now)
    const name = (minute: number) => `rate|${this.scope}|${key}|${minute}`
    const counts = await this.repo.takeRate({
      name: name(start),
      previousName: name(start - WINDOW_MS),
      windowStart: start,
      // Read as the previous minute during the next one.
      expiresAt: start + 2 * WINDOW_MS,
      previousWeight: 1 - (now - start) / WINDOW_MS,
      ceiling: limit + EPSILON,
    })
    const w = { start, current: counts.current, previous: counts.previous }
    return counts.taken ? admitted(w, limit, now) : refused(w, limit, now)
  }
}

/** The rate limiter for the engine served from: in memory on SQLite, shared through PostgreSQL. */
export function rateLimitFor(store: Store, scope: string): RateLimit {
  return onEngine<RateLimit>(
    store,
    () => new RateLimiter(),
    (s) => new SharedRateLimiter(createLimitsRepo(engineOf(s)), scope),
  )
}
