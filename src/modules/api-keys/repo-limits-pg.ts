// Shared limits on PostgreSQL: the LimitsRepo port (repo-limits.ts) for several nodes at once. Every decision
// is one statement whose conflicting row is locked and re-checked at its latest version, so requests on any
// number of nodes never count past a limit, and a captcha signature is spent by exactly one of them.
import { sql } from 'drizzle-orm'
import type { PgDb } from '../../db/pg/client'
import { limitWindows, spentCaptchas } from '../../db/pg/schema.generated'
import type { LimitsRepo } from './repo-limits'

/** bigint columns arrive as strings from Bun's client. */
type Counts = { count: string | number; previous: string | number | null }
type Window = { count: string | number; resetAt: string | number }

const windowOf = (row: Window) => ({ count: Number(row.count), resetAt: Number(row.resetAt) })

export function createLimitsRepoPg(db: PgDb): LimitsRepo {
  const counts = async (name: string, previousName: string) => {
    const rows = (await db.execute(sql`SELECT
        (SELECT count FROM limit_windows WHERE name = ${name}) AS count,
        (SELECT count FROM limit_windows WHERE name = ${previousName}) AS previous`)) as unknown as Counts[]
    return { current: Number(rows[0]?.count ?? 0), previous: Number(rows[0]?.previous ?? 0) }
  }
  const openWindow = async (name: string, now: number) => {
    const [row] = (await db.execute(sql`SELECT count, expires_at AS "resetAt" FROM limit_windows WHERE name = ${name} AND expires_at > ${now}::bigint`)) as unknown as Window[]
    return row && windowOf(row)
  }
  return {
    async takeRate(t) {
      // The same arithmetic in the same order as the in-memory limiter, in double precision on both sides,
      // so both engines admit exactly the same requests.
      const previous = sql`coalesce((SELECT p.count FROM limit_windows p WHERE p.name = ${t.previousName}), 0)`
      const weight = sql`${t.previousWeight}::float8`
      const ceiling = sql`${t.ceiling}::float8`
      const [row] = (await db.execute(sql`INSERT INTO limit_windows AS w (name, window_start, count, expires_at)
        SELECT ${t.name}::text, ${t.windowStart}::bigint, 1, ${t.expiresAt}::bigint WHERE ${previous} * ${weight} + 1 <= ${ceiling}
        ON CONFLICT (name) DO UPDATE SET count = w.count + 1 WHERE (${previous} * ${weight} + w.count) + 1 <= ${ceiling}
        RETURNING w.count, (SELECT p.count FROM limit_windows p WHERE p.name = ${t.previousName}) AS previous`)) as unknown as Counts[]
      if (row) return { taken: true, current: Number(row.count), previous: Number(row.previous ?? 0) }
      return { taken: false, ...(await counts(t.name, t.previousName)) }
    },
    async countAttempt(name, now, max, windowMs) {
      const ended = sql`${limitWindows.expiresAt} <= ${now}::bigint`
      const [row] = await db
        .insert(limitWindows)
        .values({ name, windowStart: now, count: 1, expiresAt: now + windowMs })
        .onConflictDoUpdate({
          target: limitWindows.name,
          set: {
            windowStart: sql`CASE WHEN ${ended} THEN excluded.window_start ELSE ${limitWindows.windowStart} END`,
            count: sql`CASE WHEN ${ended} THEN 1 ELSE ${limitWindows.count} + 1 END`,
            expiresAt: sql`CASE WHEN ${ended} THEN excluded.expires_at ELSE ${limitWindows.expiresAt} END`,
          },
          setWhere: sql`${ended} OR ${limitWindows.count} < ${max}::bigint`,
        })
        .returning({ count: limitWindows.count, resetAt: limitWindows.expiresAt })
      if (row) return { counted: true, ...row }
      // Refused: the window is full and open (a full window ending meanwhile reads as one attempt away).
      return { counted: false, ...((await openWindow(name, now)) ?? { count: max, resetAt: now }) }
    },
    attempts: openWindow,
    async forgetAttempts(name) {
      await db.execute(sql`DELETE FROM limit_windows WHERE name = ${name}`)
    },
    async spendCaptcha(signature, expiresAt, now) {
      const rows = await db
        .insert(spentCaptchas)
        .values({ signature, expiresAt })
        .onConflictDoUpdate({ target: spentCaptchas.signature, set: { expiresAt }, setWhere: sql`${spentCaptchas.expiresAt} <= ${now}::bigint` })
        .returning({ signature: spentCaptchas.signature })
      return rows.length === 1
    },
    async prune(now) {
      const [row] = (await db.execute(sql`WITH w AS (DELETE FROM limit_windows WHERE expires_at <= ${now}::bigint RETURNING 1),
        s AS (DELETE FROM spent_captchas WHERE expires_at <= ${now}::bigint RETURNING 1)
        SELECT (SELECT count(*) FROM w) + (SELECT count(*) FROM s) AS removed`)) as unknown as { removed: string | number }[]
      return Number(row?.removed ?? 0)
    },
  }
}
