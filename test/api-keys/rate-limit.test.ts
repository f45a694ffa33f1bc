// Per-key rate limits through HTTP (contract section 2): default 600 a minute, rateLimitOverride replaces
// it, 429 rate_limited with Retry-After, RateLimit-Limit/-Remaining/-Reset on every authenticated response,
// and a window that slides rather than resetting at a fixed boundary. Retry-After and RateLimit-Reset name
// the same instant on a 429, and that instant is exact (the clock is a ManualClock).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { bootstrapAccount, setup, type TestEnv } from '../helpers'
import { call, createKey, expectError, outcome } from './_keys'

// Minute boundaries are exact: 14 January 2026, 12:00:00.000 UTC.
const START = Date.UTC(2026, 0, 14, 12, 0, 0)
const clock = new ManualClock(START)
let env: TestEnv
let admin: string

beforeAll(async () => {
  env = await setup({ clock, env: { LNK_TRUST_PROXY: '1' } })
  admin = (await bootstrapAccount(env.rt, 'Rates')).apiKey.key
})
afterAll(() => env.cleanup())
let slot = 0
beforeEach(() => clock.set(START + ++slot * 10 * 60_000))

const me = (key: string) => call(env, key, '/v1/me')
const limits = (res: Response) => ({
  limit: res.headers.get('ratelimit-limit'),
  remaining: res.headers.get('ratelimit-remaining'),
  reset: res.headers.get('ratelimit-reset'),
})

describe('429 rate_limited', () => {
  test('rateLimitOverride 5 and a concurrent burst of 20: exactly 5 succeed, 15 get 429 with Retry-After', async () => {
    const k = await createKey(env, admin, { rateLimitOverride: 5 })
    const responses = await Promise.all(Array.from({ length: 20 }, () => me(k.key)))
    const ok = responses.filter((r) => r.status === 200)
    const refused = responses.filter((r) => r.status === 429)
    expect(ok.length).toBe(5)
    expect(refused.length).toBe(15)
    for (const res of refused) {
      await expectError(res, 429, 'rate_limited')
      const retryAfter = Number(res.headers.get('retry-after'))
      // The 5 admitted calls leave the window only during the next minute: a fifth of it (12 s) must pass
      // for one of them to slide out, so 60 + 12 s. RateLimit-Reset names the same instant.
      expect(retryAfter).toBe(72)
      expect(limits(res)).toEqual({ limit: '5', remaining: '0', reset: '72' })
    }
    // Each admitted request saw one fewer left. With some left, Reset is when the whole allowance is back
    // (these calls slide out of the window by the end of the next minute); with none, when the next call is
    // admitted, as the 429s say.
    expect(ok.map((r) => [Number(r.headers.get('ratelimit-remaining')), Number(r.headers.get('ratelimit-reset'))]).sort()).toEqual([
      [0, 72],
      [1, 120],
      [2, 120],
      [3, 120],
      [4, 120],
    ])
    for (const res of ok) expect(res.headers.get('ratelimit-limit')).toBe('5')
  })

  test('Retry-After is exact: one second earlier the key is still refused, at Retry-After it is admitted', async () => {
    const k = await createKey(env, admin, { rateLimitOverride: 3 })
    const retryAfterNow = async () => {
      const res = await me(k.key)
      const json = await expectError(res, 429, 'rate_limited')
      expect(json.error.details.limit).toBe(3)
      expect(res.headers.get('ratelimit-reset')).toBe(res.headers.get('retry-after'))
      return Number(res.headers.get('retry-after'))
    }
    // Three calls at the start of a minute fill it; 20 s later the window holds them all. They leave it
    // only as the next minute goes on (a third of the way through it, one of three has slid out).
    for (let i = 0; i < 3; i++) expect(await outcome(await me(k.key))).toBe('ok')
    clock.advance(20_000)
    const wait = await retryAfterNow()
    expect(wait).toBe(40 + 20)
    clock.advance((wait - 1) * 1000)
    expect(await retryAfterNow()).toBe(1)
    clock.advance(1_000)
    expect(await outcome(await me(k.key))).toBe('ok')
    // Now refused because of the previous minute's share: it must decay by one more call's worth (20 s).
    const again = await retryAfterNow()
    expect(again).toBe(20)
    clock.advance((again - 1) * 1000)
    expect(await outcome(await me(k.key))).toBe('rate_limited')
    clock.advance(1_000)
    expect(await outcome(await me(k.key))).toBe('ok')
  })

  test('the default is 600 a minute', async () => {
    const k = await createKey(env, admin, {})
    const first = await me(k.key)
    expect(limits(first)).toEqual({ limit: '600', remaining: '599', reset: '120' })
    const rest = await Promise.all(Array.from({ length: 600 }, () => me(k.key).then(outcome)))
    expect(rest.filter((r) => r === 'ok').length).toBe(599)
    expect(rest.filter((r) => r === 'rate_limited').length).toBe(1)
  })

  test('each key has its own window', async () => {
    const a = await createKey(env, admin, { rateLimitOverride: 2 })
    const b = await createKey(env, admin, { rateLimitOverride: 2 })
    expect([await outcome(await me(a.key)), await outcome(await me(a.key)), await outcome(await me(a.key))]).toEqual(['ok', 'ok', 'rate_limited'])
    expect([await outcome(await me(b.key)), await outcome(await me(b.key))]).toEqual(['ok', 'ok'])
  })

  test('changing rateLimitOverride by PATCH takes effect on the next request', async () => {
    const k = await createKey(env, admin, { rateLimitOverride: 2 })
    expect([await outcome(await me(k.key)), await outcome(await me(k.key)), await outcome(await me(k.key))]).toEqual(['ok', 'ok', 'rate_limited'])
    expect((await call(env, admin, `/v1/api-keys/${k.id}`, { method: 'PATCH', json: { rateLimitOverride: 4 } })).status).toBe(200)
    const res = await me(k.key)
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit-limit')).toBe('4')
    expect(await outcome(await me(k.key))).toBe('ok')
    expect(await outcome(await me(k.key))).toBe('rate_limited')
    expect((await call(env, admin, `/v1/api-keys/${k.id}`, { method: 'PATCH', json: { rateLimitOverride: null } })).status).toBe(200)
    expect((await me(k.key)).headers.get('ratelimit-limit')).toBe('600')
  })
})

describe('RateLimit headers', () => {
  test('on every authenticated response, Remaining decreasing, Reset counting down to when the allowance is whole again', async () => {
    const k = await createKey(env, admin, { rateLimitOverride: 10, permissions: ['links:read', 'api_keys:read'] })
    const seen: Array<ReturnType<typeof limits> & { status: number }> = []
    const record = async (res: Response) => {
      seen.push({ status: res.status, ...limits(res) })
      await res.arrayBuffer()
    }
    await record(await me(k.key)) // 200
    clock.advance(15_000)
    await record(await call(env, k.key, '/v1/api-keys', { json: { name: 'x' } })) // 403 forbidden
    await record(await call(env, k.key, '/v1/api-keys/key_doesnotexist')) // 404
    clock.advance(15_500)
    await record(await call(env, k.key, '/v1/links?perPage=abc')) // 400 validation
    await record(await call(env, k.key, '/v1/api-keys')) // 200
    // This minute's calls count in the window until the end of the next minute (30.5 s in: 89.5 s, rounded up).
    expect(seen).toEqual([
      { status: 200, limit: '10', remaining: '9', reset: '120' },
      { status: 403, limit: '10', remaining: '8', reset: '105' },
      { status: 404, limit: '10', remaining: '7', reset: '105' },
      { status: 400, limit: '10', remaining: '6', reset: '90' },
      { status: 200, limit: '10', remaining: '5', reset: '90' },
    ])
  })

  test('a 429 says one instant twice: Retry-After = RateLimit-Reset; at it the key is admitted, a second earlier not', async () => {
    const k = await createKey(env, admin, { rateLimitOverride: 5 })
    // Five calls a second into the minute: the window holds them until the next minute has shed a fifth
    // of them (12 s in), 59 + 12 = 71 s from now. A fixed-minute Reset would have said 59.
    clock.advance(1_000)
    const admitted = []
    for (let i = 0; i < 5; i++) admitted.push(await me(k.key))
    expect(admitted.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    // The call that used the last of the allowance already says when the next one is admitted.
    expect(limits(admitted[4]!)).toEqual({ limit: '5', remaining: '0', reset: '71' })
    const refused = await me(k.key)
    await expectError(refused, 429, 'rate_limited')
    expect(refused.headers.get('retry-after')).toBe('71')
    expect(limits(refused)).toEqual({ limit: '5', remaining: '0', reset: '71' })
    clock.advance(70_000)
    const almost = await me(k.key)
    await expectError(almost, 429, 'rate_limited')
    expect([almost.headers.get('retry-after'), almost.headers.get('ratelimit-reset')]).toEqual(['1', '1'])
    clock.advance(1_000)
    expect(await outcome(await me(k.key))).toBe('ok')
  })

  test('with calls left, Reset is when the whole allowance is back: a second before it, not all of it is', async () => {
    // Two keys used alike, one probed a second before Reset, the other at Reset.
    const early = await createKey(env, admin, { rateLimitOverride: 4 })
    const onTime = await createKey(env, admin, { rateLimitOverride: 4 })
    clock.advance(20_000)
    for (const k of [early, onTime]) {
      await me(k.key)
      expect(limits(await me(k.key))).toEqual({ limit: '4', remaining: '2', reset: '100' })
    }
    const burst = async (key: string) => {
      const results: string[] = []
      for (let i = 0; i < 5; i++) results.push(await outcome(await me(key)))
      return results
    }
    clock.advance(99_000)
    // The two calls still weigh 2/60 in the window: three fit, not four.
    expect(await burst(early.key)).toEqual(['ok', 'ok', 'ok', 'rate_limited', 'rate_limited'])
    clock.advance(1_000)
    expect(await burst(onTime.key)).toEqual(['ok', 'ok', 'ok', 'ok', 'rate_limited'])
  })

  test('Retry-After holds to the second in any state the window can be in (seeded random call patterns)', async () => {
    let seed = 7
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    for (let round = 0; round < 12; round++) {
      const k = await createKey(env, admin, { rateLimitOverride: 1 + rand(7) })
      for (let step = 0; step < 6; step++) {
        clock.advance(rand(95_000))
        let refused: Response | undefined
        for (let i = 0; i < 9 && !refused; i++) {
          const res = await me(k.key)
          if (res.status === 429) refused = res
          else await res.arrayBuffer()
        }
        if (!refused) continue
        await refused.arrayBuffer()
        const wait = Number(refused.headers.get('retry-after'))
        expect(refused.headers.get('ratelimit-reset')).toBe(String(wait))
        clock.advance((wait - 1) * 1000)
        expect(await outcome(await me(k.key))).toBe('rate_limited')
        clock.advance(1000)
        expect(await outcome(await me(k.key))).toBe('ok')
      }
    }
  })

  test('not on requests that never authenticated a key', async () => {
    const res = await call(env, `lnk_live_${'9'.repeat(32)}`, '/v1/me')
    await expectError(res, 401, 'unauthorized')
    expect(res.headers.get('ratelimit-limit')).toBeNull()
  })
})

describe('the window slides', () => {
  test('a burst at the end of a minute is not forgotten when the next minute starts', async () => {
    const k = await createKey(env, admin, { rateLimitOverride: 5 })
    clock.advance(59_000)
    const burst = await Promise.all(Array.from({ length: 5 }, () => me(k.key).then(outcome)))
    expect(burst).toEqual(Array(5).fill('ok'))
    // A fixed window would start afresh here and admit 5 more.
    clock.advance(1_000)
    const next = await Promise.all(Array.from({ length: 5 }, () => me(k.key).then(outcome)))
    expect(next.filter((r) => r === 'ok').length).toBeLessThanOrEqual(1)
    // Two quiet minutes later the whole allowance is back.
    clock.advance(120_000)
    const later = await Promise.all(Array.from({ length: 6 }, () => me(k.key).then(outcome)))
    expect(later.filter((r) => r === 'ok').length).toBe(5)
  })

  test('a full window empties gradually as the clock moves on', async () => {
    const k = await createKey(env, admin, { rateLimitOverride: 6 })
    const admitted: number[] = []
    const burst = async () => {
      let n = 0
      for (let i = 0; i < 8; i++) if ((await outcome(await me(k.key))) === 'ok') n++
      return n
    }
    admitted.push(await burst()) // t = 0: the whole allowance
    clock.advance(30_000)
    admitted.push(await burst()) // same minute: nothing
    clock.advance(60_000)
    admitted.push(await burst()) // half of the first minute has slid out of the window
    expect(admitted[0]).toBe(6)
    expect(admitted[1]).toBe(0)
    expect(admitted[2]).toBeGreaterThanOrEqual(1)
    expect(admitted[2]).toBeLessThan(6)
  })

  test('a steady client below the limit is never refused', async () => {
    const k = await createKey(env, admin, { rateLimitOverride: 5 })
    const results: string[] = []
    // 3 a minute for 5 minutes.
    for (let i = 0; i < 15; i++) {
      results.push(await outcome(await me(k.key)))
      clock.advance(20_000)
    }
    expect(results).toEqual(Array(15).fill('ok'))
  })
})
