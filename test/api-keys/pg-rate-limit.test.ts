// Per-key rate limits through HTTP on PostgreSQL with two nodes on one database (issue 18): a key's limit
// holds across both, requests alternated between them with a fixed clock, with the headers and the 429
// envelope one node gives; and the monthly cap counts across both too. The windows' rows are pruned by the
// identity module's periodic job once no window reads them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PRUNE_LIMITS } from '../../src/modules/identity/limits-prune'
import { ManualClock } from '../../src/platform/clock'
import { bootstrapAccount, setupPg, type PgTestEnv } from '../helpers'
import { call, createKey, expectError, outcome } from './_keys'

// Minute boundaries are exact: 14 January 2026, 12:00:00.000 UTC.
const START = Date.UTC(2026, 0, 14, 12, 0, 0)
const clock = new ManualClock(START)
let a: PgTestEnv
let b: PgTestEnv
let admin: string

beforeAll(async () => {
  a = await setupPg({ clock })
  b = await setupPg({ clock, database: a.database })
  admin = (await bootstrapAccount(a.rt, 'Rates')).apiKey.key
}, 30_000)
afterAll(async () => {
  await b?.cleanup()
  await a?.cleanup()
})

const headers = (res: Response) => ({
  limit: res.headers.get('ratelimit-limit'),
  remaining: res.headers.get('ratelimit-remaining'),
  reset: res.headers.get('ratelimit-reset'),
  retryAfter: res.headers.get('retry-after'),
})

describe('rate limits across nodes', () => {
  test('a limit of 5 a minute: 5 requests alternated over both nodes pass, the sixth gets 429 with Retry-After on either', async () => {
    clock.set(START + 10 * 60_000)
    const k = await createKey(a, admin, { rateLimitOverride: 5 })
    const seen = []
    for (let i = 0; i < 5; i++) {
      const res = await call(i % 2 === 0 ? a : b, k.key, '/v1/me')
      expect(await outcome(res)).toBe('ok')
      seen.push(headers(res))
    }
    // One fewer left on each, whichever node answered; with some left, Reset is when the whole allowance is back.
    expect(seen.map((h) => h.remaining)).toEqual(['4', '3', '2', '1', '0'])
    expect(seen.map((h) => h.reset)).toEqual(['120', '120', '120', '120', '72'])
    for (const node of [b, a]) {
      const refused = await call(node, k.key, '/v1/me')
      const json = await expectError(refused, 429, 'rate_limited')
      expect(json.error.details.limit).toBe(5)
      // The five leave the window as the next minute goes on: a fifth of it (12 s) frees one.
      expect(headers(refused)).toEqual({ limit: '5', remaining: '0', reset: '72', retryAfter: '72' })
    }
    // At Retry-After, one more is admitted, on either node.
    clock.advance(72_000)
    expect(await outcome(await call(b, k.key, '/v1/me'))).toBe('ok')
    expect(await outcome(await call(a, k.key, '/v1/me'))).toBe('rate_limited')
  })

  test('a concurrent burst on both nodes admits exactly the limit', async () => {
    clock.set(START + 20 * 60_000)
    const k = await createKey(a, admin, { rateLimitOverride: 8 })
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => call(i % 2 === 0 ? a : b, k.key, '/v1/me')))
    expect(responses.filter((r) => r.status === 200).length).toBe(8)
    expect(responses.filter((r) => r.status === 429).length).toBe(22)
  })

  test('the monthly cap holds across nodes too', async () => {
    clock.set(START + 30 * 60_000)
    const k = await createKey(a, admin, { monthlyCallCap: 3 })
    const outcomes = []
    for (let i = 0; i < 5; i++) outcomes.push(await outcome(await call(i % 2 === 0 ? b : a, k.key, '/v1/me')))
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'monthly_cap_exceeded', 'monthly_cap_exceeded'])
  })
})

describe('pruning', () => {
  test('the periodic job deletes the windows no request reads any more, and only those', async () => {
    clock.set(START + 40 * 60_000)
    const k = await createKey(a, admin, { rateLimitOverride: 100 })
    expect(await outcome(await call(b, k.key, '/v1/me'))).toBe('ok')
    const store = a.rt.store
    if (store.engine !== 'pg') throw new Error('a PostgreSQL runtime was expected')
    // Storage itself: the rows the job leaves.
    const rows = async () => Number((await store.sql`SELECT count(*) AS n FROM limit_windows`)[0].n)
    const prune = a.rt.modules.identity.jobs!.find((j) => j.type === PRUNE_LIMITS)!
    expect(a.rt.modules.identity.periodic!.map((t) => t.jobType)).toEqual([PRUNE_LIMITS])
    const before = await rows()
    // One minute on, this minute's window is still the previous one; the earlier tests' windows have expired.
    clock.advance(60_000)
    await prune.run(undefined, {} as Parameters<typeof prune.run>[1])
    expect(await rows()).toBe(2)
    expect(before).toBeGreaterThan(2)
    clock.advance(60_000)
    await prune.run(undefined, {} as Parameters<typeof prune.run>[1])
    expect(await rows()).toBe(0)
  })
})
