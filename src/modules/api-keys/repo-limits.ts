// Limits several nodes share through the database (issue 18): request rates, the password throttle and spent
// captcha solutions. The port comes first, then its SQLite implementation. A server on SQLite is one process
// and keeps these limits in memory (rate-limit.ts, redirect/gates.ts), so this twin serves the comparison
// with the PostgreSQL one (repo-limits-pg.ts); each decision is one statement on both.
import { and, eq, gt, lte, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { limitWindows, spentCaptchas } from '../../db/schema'

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

// --- SQLite ------------------------------------------------------------------------------------------

export function createLimitsRepo(db: Db): LimitsRepo {
  const countOf = (name: string) => db.select({ count: limitWindows.count }).from(limitWindows).where(eq(limitWindows.name, name)).get()?.count ?? 0
  const openWindow = (name: string, now: number) =>
    db
      .select({ count: limitWindows.count, resetAt: limitWindows.expiresAt })
      .from(limitWindows)
      .where(and(eq(limitWindows.name, name), gt(limitWindows.expiresAt, now)))
      .get()
  return {
    async takeRate(t) {
      const previous = sql`coalesce((SELECT p.count FROM limit_windows p WHERE p.name = ${t.previousName}), 0)`
      const [row] = db.all<{ count: number }>(sql`INSERT INTO limit_windows AS w (name, window_start, count, expires_at)
        SELECT ${t.name}, ${t.windowStart}, 1, ${t.expiresAt} WHERE ${previous} * ${t.previousWeight} + 1 <= ${t.ceiling}
        ON CONFLICT (name) DO UPDATE SET count = w.count + 1 WHERE (${previous} * ${t.previousWeight} + w.count) + 1 <= ${t.ceiling}
        RETURNING count`)
      return { taken: row !== undefined, current: row?.count ?? countOf(t.name), previous: countOf(t.previousName) }
    },
    async countAttempt(name, now, max, windowMs) {
      const ended = sql`${limitWindows.expiresAt} <= ${now}`
      const [row] = db
        .insert(limitWindows)
        .values({ name, windowStart: now, count: 1, expiresAt: now + windowMs })
        .onConflictDoUpdate({
          target: limitWindows.name,
          set: {
            windowStart: sql`CASE WHEN ${ended} THEN excluded.window_start ELSE ${limitWindows.windowStart} END`,
            count: sql`CASE WHEN ${ended} THEN 1 ELSE ${limitWindows.count} + 1 END`,
            expiresAt: sql`CASE WHEN ${ended} THEN excluded.expires_at ELSE ${limitWindows.expiresAt} END`,
          },
          setWhere: sql`${ended} OR ${limitWindows.count} < ${max}`,
        })
        .returning({ count: limitWindows.count, resetAt: limitWindows.expiresAt })
        .all()
      if (row) return { counted: true, ...row }
      // Refused: the window is full and open (SQLite's single writer keeps it so until this read).
      return { counted: false, ...openWindow(name, now)! }
    },
    async attempts(name, now) {
      return openWindow(name, now)
    },
    async forgetAttempts(name) {
      db.delete(limitWindows).where(eq(limitWindows.name, name)).run()
    },
    async spendCaptcha(signature, expiresAt, now) {
      const rows = db
        .insert(spentCaptchas)
        .values({ signature, expiresAt })
        .onConflictDoUpdate({ target: spentCaptchas.signature, set: { expiresAt }, setWhere: sql`${spentCaptchas.expiresAt} <= ${now}` })
        .returning({ signature: spentCaptchas.signature })
        .all()
      return rows.length === 1
    },
    async prune(now) {
      return db.transaction((tx) => {
        const windows = tx.delete(limitWindows).where(lte(limitWindows.expiresAt, now)).returning({ name: limitWindows.name }).all()
        const spent = tx.delete(spentCaptchas).where(lte(spentCaptchas.expiresAt, now)).returning({ signature: spentCaptchas.signature }).all()
        return windows.length + spent.length
      })
    },
  }
}
