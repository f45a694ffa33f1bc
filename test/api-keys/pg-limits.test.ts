// Shared limits on PostgreSQL (issue 18): the limits repo (repo-limits.ts) on both engines on one script,
// the shared rate limiter against the in-memory one (the same decisions and headers, request by request,
// with the requests spread over two limiters as over two nodes), and concurrent requests from two limiters
// on separate connections stopping exactly at the limit.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import type { LimitsRepo } from '../../src/modules/identity/port-limits'
import { createLimitsRepo } from '../../src/modules/identity/repo-limits'
import { RateLimiter, SharedRateLimiter, type RateDecision } from '../../src/modules/identity/rate-limit'
import { openEngines, type Engines } from '../setup/engines'

// Minute boundaries are exact: 14 January 2026, 12:00:00.000 UTC.
const T0 = Date.UTC(2026, 0, 14, 12, 0, 0)
const MINUTE = 60_000

let engines: Engines

beforeAll(async () => {
  engines = await openEngines()
})
afterAll(async () => {
  await engines?.close()
})

describe('the limits repo on both engines', () => {
  test('rate windows, attempts, spent captchas and pruning answer the same', async () => {
    const script = async (repo: LimitsRepo, tag: string) => {
      const out: unknown[] = []
      const take = (minute: number, weight: number, ceiling: number) =>
        repo.takeRate({
          name: `${tag}|${minute}`,
          previousName: `${tag}|${minute - 1}`,
          windowStart: T0 + minute * MINUTE,
          expiresAt: T0 + (minute + 2) * MINUTE,
          previousWeight: weight,
          ceiling,
        })
      // Three fit under a ceiling of 3, the fourth is refused and not counted.
      for (let i = 0; i < 4; i++) out.push(await take(0, 1, 3 + 1e-9))
      // The next minute: the previous three weigh half (1.5), so one more fits under 3, not two.
      out.push(await take(1, 0.5, 3 + 1e-9), await take(1, 0.5, 3 + 1e-9))
      // Nothing counted when the previous window alone fills the ceiling, not even a first row.
      out.push(await take(2, 1, 1 + 1e-9))
      // Attempts: counted up to max, then refused with the window's end; an ended window restarts.
      for (let i = 0; i < 3; i++) out.push(await repo.countAttempt(`${tag}|pw`, T0 + i, 2, 1000))
      out.push(await repo.attempts(`${tag}|pw`, T0 + 5), await repo.attempts(`${tag}|pw`, T0 + 1000))
      out.push(await repo.countAttempt(`${tag}|pw`, T0 + 1000, 2, 1000))
      await repo.forgetAttempts(`${tag}|pw`)
      out.push(await repo.attempts(`${tag}|pw`, T0 + 1001))
      // Captchas: spent once; spendable again only after the mark expired.
      out.push(
        await repo.spendCaptcha(`${tag}|sig`, T0 + 100, T0),
        await repo.spendCaptcha(`${tag}|sig`, T0 + 200, T0 + 99),
        await repo.spendCaptcha(`${tag}|sig`, T0 + 300, T0 + 100),
      )
      // Pruned: minute 0's window (expired at minute 2) and the captcha mark of T0 + 300; minute 1's stays.
      out.push(await repo.prune(T0 + 2 * MINUTE), await repo.prune(T0 + 2 * MINUTE))
      out.push(await take(1, 0.5, 10))
      return out
    }
    const onSqlite = await script(createLimitsRepo(sqliteEngine(engines.sqlite.db)), 'a')
    expect(await script(createLimitsRepo(pgEngine(engines.pg)), 'a')).toEqual(onSqlite)
    expect(onSqlite).toEqual([
      { taken: true, current: 1, previous: 0 },
      { taken: true, current: 2, previous: 0 },
      { taken: true, current: 3, previous: 0 },
      { taken: false, current: 3, previous: 0 },
      { taken: true, current: 1, previous: 3 },
      { taken: false, current: 1, previous: 3 },
      { taken: false, current: 0, previous: 1 },
      { counted: true, count: 1, resetAt: T0 + 1000 },
      { counted: true, count: 2, resetAt: T0 + 1000 },
      { counted: false, count: 2, resetAt: T0 + 1000 },
      { count: 2, resetAt: T0 + 1000 },
      undefined,
      { counted: true, count: 1, resetAt: T0 + 2000 },
      undefined,
      true,
      false,
      true,
      2,
      0,
      { taken: true, current: 2, previous: 0 },
    ])
  })
})

describe('request rates across nodes', () => {
  /** Two limiters on the database, as two nodes have: nothing is shared between them but the tables. */
  const nodes = (scope: string) => [
    new SharedRateLimiter(createLimitsRepo(pgEngine(engines.pg)), scope),
    new SharedRateLimiter(createLimitsRepo(pgEngine(engines.pg)), scope),
  ]

  test('requests alternated over two nodes get the decisions one in-memory limiter gives, header for header', async () => {
    const memory = new RateLimiter()
    const [a, b] = nodes('same')
    // Bursts, pauses and minute boundaries: a limit of 4, requests at these offsets (ms) from T0.
    const times = [
      0, 1, 2, 3, 4, 5, 20_000, 59_999, 60_000, 61_000, 75_000, 90_000, 90_001, 100_000, 119_999, 120_000, 150_000, 179_000, 240_000, 250_000, 300_000, 400_000,
    ]
    const shared: RateDecision[] = []
    const local: RateDecision[] = []
    for (const [i, t] of times.entries()) {
      shared.push(await (i % 2 === 0 ? a! : b!).take('key_1', 4, T0 + t))
      local.push(memory.take('key_1', 4, T0 + t))
    }
    expect(shared).toEqual(local)
    // The script does exercise both answers, with a Retry-After on each refusal.
    expect(shared.filter((d) => d.allowed).length).toBeGreaterThan(4)
    expect(shared.filter((d) => !d.allowed).every((d) => d.retryAfter > 0 && d.reset === d.retryAfter)).toBe(true)
    expect(shared.some((d) => !d.allowed)).toBe(true)
  })

  test('a concurrent burst from both nodes admits exactly the limit, each admitted request seeing one fewer left', async () => {
    const [a, b] = nodes('burst')
    const now = T0 + 10 * MINUTE
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a! : b!).take('key_2', 7, now)))
    const allowed = decisions.filter((d) => d.allowed)
    expect(allowed.length).toBe(7)
    expect(allowed.map((d) => d.remaining).sort()).toEqual([0, 1, 2, 3, 4, 5, 6])
    for (const d of decisions.filter((d) => !d.allowed)) expect(d).toEqual({ allowed: false, limit: 7, remaining: 0, reset: 69, retryAfter: 69 })
  })

  test('limiters of different scopes and keys count apart', async () => {
    const [api] = nodes('api')
    const [beacon] = nodes('beacon')
    const now = T0 + 20 * MINUTE
    expect((await api!.take('k', 1, now)).allowed).toBe(true)
    expect((await beacon!.take('k', 1, now)).allowed).toBe(true)
    expect((await api!.take('other', 1, now)).allowed).toBe(true)
    expect((await api!.take('k', 1, now)).allowed).toBe(false)
  })
})
