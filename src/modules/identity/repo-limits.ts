// Shared limits (port-limits.ts) on either engine. Every decision is one statement whose conflicting row is
// locked and re-checked at its latest version (PostgreSQL) or runs under the one writer (SQLite), so requests
// on any number of nodes never count past a limit, and a captcha signature is spent by exactly one of them.
// Values are cast where PostgreSQL cannot tell a parameter's type from the statement (CAST is the same on
// SQLite, whose affinities the type names map to).
import { and, eq, gt, inArray, lte, sql } from 'drizzle-orm'
import { rows, type Engine } from '../../db/engine'
import type { LimitsRepo } from './port-limits'

// redirect/gates.ts takes the port's type from here.

const bigint = (value: number) => sql`CAST(${value} AS bigint)`
const float = (value: number) => sql`CAST(${value} AS double precision)`

export function createLimitsRepo(engine: Engine): LimitsRepo {
  const { db } = engine
  const { limitWindows, spentCaptchas } = engine.t
  const openWindow = async (name: string, now: number) => {
    const [row] = await db
      .select({ count: limitWindows.count, resetAt: limitWindows.expiresAt })
      .from(limitWindows)
      .where(and(eq(limitWindows.name, name), gt(limitWindows.expiresAt, now)))
    return row
  }
  return {
    async takeRate(t) {
      // The same arithmetic in the same order as the in-memory limiter, in double precision on both engines,
      // so both admit exactly the same requests.
      const previousCount = sql`(SELECT p.count FROM limit_windows p WHERE p.name = ${t.previousName})`
      const previous = sql`coalesce(${previousCount}, 0)`
      const weight = float(t.previousWeight)
      const ceiling = float(t.ceiling)
      const [row] = await db
        .insert(limitWindows)
        // The columns in the table's order: name, window_start, count, expires_at.
        .select(sql`SELECT CAST(${t.name} AS text), ${bigint(t.windowStart)}, 1, ${bigint(t.expiresAt)} WHERE ${previous} * ${weight} + 1 <= ${ceiling}`)
        .onConflictDoUpdate({
          target: limitWindows.name,
          set: { count: sql`${limitWindows.count} + 1` },
          setWhere: sql`(${previous} * ${weight} + ${limitWindows.count}) + 1 <= ${ceiling}`,
        })
        .returning({ count: limitWindows.count, previous: sql<number | string | null>`${previousCount}` })
      // bigint values read through sql`` arrive as strings from Bun's PostgreSQL client.
      if (row) return { taken: true, current: Number(row.count), previous: Number(row.previous ?? 0) }
      const counts = await db
        .select({ name: limitWindows.name, count: limitWindows.count })
        .from(limitWindows)
        .where(inArray(limitWindows.name, [t.name, t.previousName]))
      const countOf = (name: string) => Number(counts.find((c) => c.name === name)?.count ?? 0)
      return { taken: false, current: countOf(t.name), previous: countOf(t.previousName) }
    },
    async countAttempt(name, now, max, windowMs) {
      const ended = sql`${limitWindows.expiresAt} <= ${bigint(now)}`
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
          setWhere: sql`${ended} OR ${limitWindows.count} < ${bigint(max)}`,
        })
        .returning({ count: limitWindows.count, resetAt: limitWindows.expiresAt })
      if (row) return { counted: true, ...row }
      // Refused: the window is full and open. SQLite's single writer keeps it so until this read; on
      // PostgreSQL a full window ending meanwhile reads as one attempt away.
      return { counted: false, ...((await openWindow(name, now)) ?? { count: max, resetAt: now }) }
    },
    attempts: openWindow,
    async forgetAttempts(name) {
      await db.delete(limitWindows).where(eq(limitWindows.name, name))
    },
    async spendCaptcha(signature, expiresAt, now) {
      const spent = await db
        .insert(spentCaptchas)
        .values({ signature, expiresAt })
        .onConflictDoUpdate({ target: spentCaptchas.signature, set: { expiresAt }, setWhere: sql`${spentCaptchas.expiresAt} <= ${bigint(now)}` })
        .returning({ signature: spentCaptchas.signature })
      return spent.length === 1
    },
    prune: (now) =>
      engine.transaction(function* (tx) {
        const windows = yield* rows(tx.delete(limitWindows).where(lte(limitWindows.expiresAt, now)).returning({ name: limitWindows.name }))
        const spent = yield* rows(tx.delete(spentCaptchas).where(lte(spentCaptchas.expiresAt, now)).returning({ signature: spentCaptchas.signature }))
        return windows.length + spent.length
      }),
  }
}
