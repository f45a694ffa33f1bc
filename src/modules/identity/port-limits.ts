// Limits several nodes share through the database (issue 18): request rates, the password throttle and spent
// captcha solutions, as the services and the gates ask for them (repo-limits.ts answers on either engine). A
// server on SQLite is one process and keeps these limits in memory (rate-limit.ts, redirect/gates.ts), so
// there the repo serves the comparison with PostgreSQL.

/** One event counted in a fixed window while a sliding estimate over it and the window before allows it. */
export interface RateTake {
  /** The counter of this window (a new window is a new name). */
  name: string
  /** The counter of the window before it. */
  previousName: string
  windowStart: number
  expiresAt: number
  /** The share of the previous window's count the estimate takes now. */
  previousWeight: number
  /** The event is counted when previous × previousWeight + current + 1 ≤ ceiling. */
  ceiling: number
}

/** The counts of both windows after the decision (this window's includes the event when it was counted). */
export interface RateCounts {
  taken: boolean
  current: number
  previous: number
}

/** The attempts of a window opened by its first attempt. */
export interface AttemptWindow {
  count: number
  resetAt: number
}

export interface LimitsRepo {
  /** Counts the event when the estimate allows it, in one statement, so nodes together never pass it. */
  takeRate(take: RateTake): Promise<RateCounts>
  /**
   * Counts one attempt in `name`'s window unless it already holds `max`; an ended window (or none) restarts
   * at `now` for `windowMs`. Answers whether it counted, and the window as it is now.
   */
  countAttempt(name: string, now: number, max: number, windowMs: number): Promise<AttemptWindow & { counted: boolean }>
  /** The window still open at `now`, if any. */
  attempts(name: string, now: number): Promise<AttemptWindow | undefined>
  forgetAttempts(name: string): Promise<void>
  /** True when the signature was not spent (or its mark had expired): it is spent now, until `expiresAt`. */
  spendCaptcha(signature: string, expiresAt: number, now: number): Promise<boolean>
  /** Deletes what expired by `now`; answers how many rows went. */
  prune(now: number): Promise<number>
}
