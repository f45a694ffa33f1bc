// Key restrictions enforced on every authenticated request, through HTTP (contract section 3, the order in
// src/modules/identity/auth.ts): unknown/revoked/expired -> 401; paused -> 403 key_paused; allowedIps -> 403
// ip_not_allowed; schedule -> 403 outside_schedule; monthlyCallCap -> 429 monthly_cap_exceeded; rate limit
// -> 429 rate_limited; permission -> 403 forbidden. Client addresses come from X-Forwarded-For, believed
// because LNK_TRUST_PROXY=1 (one trusted hop: the rightmost entry).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app'
import { ManualClock } from '../../src/platform/clock'
import { silentLogger } from '../../src/platform/log'
import { openRuntime, type Runtime } from '../../src/runtime'
import { body, bootstrapAccount, setup, type TestEnv } from '../helpers'
import { call, createKey, expectError, expectOk, outcome, type Target } from './_keys'

// Wednesday 14 January 2026, 12:00 UTC.
const START = Date.UTC(2026, 0, 14, 12, 0, 0)
const clock = new ManualClock(START)
let env: TestEnv
let admin: string
const extraRuntimes: Runtime[] = []

beforeAll(async () => {
  env = await setup({ clock, env: { LNK_TRUST_PROXY: '1' } })
  admin = (await bootstrapAccount(env.rt, 'Restrictions')).apiKey.key
})
afterAll(async () => {
  for (const rt of extraRuntimes) await rt.close()
  await env.cleanup()
})
// Each test starts at a fresh minute so the admin key's rate window never carries over.
let minute = 0
beforeEach(() => clock.set(START + ++minute * 3 * 60_000))

const me = (key: string, ip?: string, target: Target = env) => call(target, key, '/v1/me', { ip })
const patch = async (id: string, json: Record<string, unknown>) => expectOk(await call(env, admin, `/v1/api-keys/${id}`, { method: 'PATCH', json }))

describe('401 unauthorized: unknown, revoked, expired', () => {
  test('an unknown well-formed key is 401 unauthorized', async () => {
    await expectError(await me(`lnk_live_${'0'.repeat(32)}`), 401, 'unauthorized')
    await expectError(await me(`lnk_test_${'Z'.repeat(32)}`), 401, 'unauthorized')
  })

  test('a revoked key is 401, even when also paused and called from a wrong address', async () => {
    const k = await createKey(env, admin, { allowedIps: ['192.0.2.5'] })
    expect(await outcome(await me(k.key, '192.0.2.5'))).toBe('ok')
    await expectOk(await call(env, admin, `/v1/api-keys/${k.id}/pause`, { json: {} }))
    await expectOk(await call(env, admin, `/v1/api-keys/${k.id}/revoke`, { json: { reason: 'leaked' } }))
    const json = await expectError(await me(k.key, '203.0.113.9'), 401, 'unauthorized')
    expect(json.error.message).toContain('revoked')
    await expectError(await me(k.key, '192.0.2.5'), 401, 'unauthorized')
  })

  test('an expired key is 401 from its expiry instant on, even when paused', async () => {
    const k = await createKey(env, admin, { expiresAt: new Date(clock.now() + 60_000).toISOString() })
    clock.advance(59_999)
    expect(await outcome(await me(k.key))).toBe('ok')
    await expectOk(await call(env, admin, `/v1/api-keys/${k.id}/pause`, { json: { reason: 'x' } }))
    expect(await outcome(await me(k.key))).toBe('key_paused')
    clock.advance(1)
    const json = await expectError(await me(k.key), 401, 'unauthorized')
    expect(json.error.message).toContain('expired')
  })
})

describe('403 key_paused', () => {
  test('a paused key is refused before its address is checked; resumed, it works again', async () => {
    const k = await createKey(env, admin, { allowedIps: ['192.0.2.0/24'] })
    await expectOk(await call(env, admin, `/v1/api-keys/${k.id}/pause`, { json: { reason: 'holiday' } }))
    // Wrong address and paused: the pause wins.
    const json = await expectError(await me(k.key, '203.0.113.1'), 403, 'key_paused')
    expect(json.error.message).toContain('holiday')
    await expectError(await me(k.key, '192.0.2.1'), 403, 'key_paused')
    await expectOk(await call(env, admin, `/v1/api-keys/${k.id}/resume`, { method: 'POST' }))
    expect(await outcome(await me(k.key, '192.0.2.1'))).toBe('ok')
    expect(await outcome(await me(k.key, '203.0.113.1'))).toBe('ip_not_allowed')
  })
})

describe('403 ip_not_allowed', () => {
  async function table(allowedIps: string[], cases: Record<string, 'ok' | 'ip_not_allowed'>) {
    const k = await createKey(env, admin, { allowedIps })
    const got: Record<string, string> = {}
    for (const ip of Object.keys(cases)) got[ip] = await outcome(await me(k.key, ip))
    expect(got).toEqual(cases)
    return k
  }

  test('a single IPv4 address', async () => {
    await table(['192.0.2.5'], {
      '192.0.2.5': 'ok',
      '192.0.2.4': 'ip_not_allowed',
      '192.0.2.6': 'ip_not_allowed',
      '198.51.100.5': 'ip_not_allowed',
      '2001:db8::5': 'ip_not_allowed',
    })
  })

  test('IPv4 CIDRs, edges included', async () => {
    await table(['198.51.100.0/24', '203.0.113.128/25'], {
      '198.51.100.0': 'ok',
      '198.51.100.255': 'ok',
      '198.51.101.0': 'ip_not_allowed',
      '198.51.99.255': 'ip_not_allowed',
      '203.0.113.128': 'ok',
      '203.0.113.255': 'ok',
      '203.0.113.127': 'ip_not_allowed',
      '192.0.2.1': 'ip_not_allowed',
    })
  })

  test('IPv6 addresses and CIDRs, in any spelling', async () => {
    await table(['2001:db8:abcd::/48'], {
      '2001:db8:abcd::1': 'ok',
      '2001:db8:abcd:ffff:ffff:ffff:ffff:ffff': 'ok',
      '2001:DB8:ABCD:0:0:0:0:7': 'ok',
      '2001:db8:abce::1': 'ip_not_allowed',
      '2001:db8:abcc:ffff::1': 'ip_not_allowed',
      '2001:db8::1': 'ip_not_allowed',
      '192.0.2.1': 'ip_not_allowed',
    })
    await table(['2001:db8::1'], {
      '2001:db8::1': 'ok',
      '2001:0db8:0000:0000:0000:0000:0000:0001': 'ok',
      '2001:db8::2': 'ip_not_allowed',
      '2001:db8::1:0': 'ip_not_allowed',
    })
  })

  test('loopback in both families', async () => {
    await table(['127.0.0.1', '::1'], {
      '127.0.0.1': 'ok',
      '::1': 'ok',
      '0:0:0:0:0:0:0:1': 'ok',
      '::ffff:127.0.0.1': 'ok',
      '127.0.0.2': 'ip_not_allowed',
      '::2': 'ip_not_allowed',
    })
  })

  test('an IPv4-mapped IPv6 client matches an IPv4 entry, and a mapped entry matches the IPv4 client', async () => {
    await table(['192.0.2.5', '198.51.100.0/24'], {
      '::ffff:192.0.2.5': 'ok',
      '::FFFF:198.51.100.77': 'ok',
      '::ffff:192.0.2.6': 'ip_not_allowed',
      '::ffff:203.0.113.1': 'ip_not_allowed',
    })
    await table(['::ffff:192.0.2.0/120'], { '192.0.2.77': 'ok', '::ffff:192.0.2.78': 'ok', '192.0.3.1': 'ip_not_allowed' })
  })

  test('the refusal names the address; with no address at all the key is refused', async () => {
    const k = await createKey(env, admin, { allowedIps: ['192.0.2.5'] })
    const json = await expectError(await me(k.key, '203.0.113.9'), 403, 'ip_not_allowed')
    expect(json.error.details.ip).toBe('203.0.113.9')
    // app.handle() has no socket address: without X-Forwarded-For there is no client address to allow.
    await expectError(await me(k.key), 403, 'ip_not_allowed')
  })

  test('only the entry added by the one trusted proxy counts, not what the client wrote before it', async () => {
    const k = await createKey(env, admin, { allowedIps: ['192.0.2.5'] })
    // The client claims 192.0.2.5; the trusted proxy saw 203.0.113.9.
    await expectError(await me(k.key, '192.0.2.5, 203.0.113.9'), 403, 'ip_not_allowed')
    expect(await outcome(await me(k.key, '203.0.113.9, 192.0.2.5'))).toBe('ok')
  })

  test('an empty list means any address', async () => {
    const k = await createKey(env, admin, { allowedIps: [] })
    for (const ip of ['192.0.2.1', '2001:db8::9', undefined]) expect(await outcome(await me(k.key, ip))).toBe('ok')
  })

  test('a wrong address is refused before the schedule is looked at', async () => {
    // Only Sundays 00:00-00:01 in UTC: now (a Wednesday) is outside it.
    const k = await createKey(env, admin, { allowedIps: ['192.0.2.5'], schedule: { timezone: 'UTC', days: [0], startMinute: 0, endMinute: 1 } })
    await expectError(await me(k.key, '203.0.113.1'), 403, 'ip_not_allowed')
    await expectError(await me(k.key, '192.0.2.5'), 403, 'outside_schedule')
  })
})

describe('X-Forwarded-For without LNK_TRUST_PROXY', () => {
  test('the header is ignored: a key with allowedIps is refused through app.handle, lastUsedIp is not taken from it', async () => {
    const plain = await setup({ clock })
    try {
      const acct = await bootstrapAccount(plain.rt, 'No Proxy')
      const limited = await createKey(plain, acct.apiKey.key, { allowedIps: ['192.0.2.5'] })
      const json = await expectError(await me(limited.key, '192.0.2.5', plain), 403, 'ip_not_allowed')
      expect(json.error.details.ip).toBeNull()
      const open = await createKey(plain, acct.apiKey.key, {})
      expect(await outcome(await me(open.key, '192.0.2.5', plain))).toBe('ok')
      const view = await expectOk(await call(plain, acct.apiKey.key, `/v1/api-keys/${open.id}`))
      expect(view.lastUsedAt).toBe(new Date(clock.now()).toISOString())
      expect(view.lastUsedIp).toBeNull()
    } finally {
      await plain.cleanup()
    }
  })
})

describe('403 outside_schedule', () => {
  // Friday 22:00 to 02:00 local time; the part after midnight belongs to Friday.
  const FRIDAY_NIGHT = { days: [5], startMinute: 22 * 60, endMinute: 2 * 60 }

  async function at(key: string, utc: number) {
    clock.set(utc)
    return outcome(await me(key))
  }

  test('Europe/Berlin (UTC+1 in January), window across midnight', async () => {
    const k = await createKey(env, admin, { schedule: { timezone: 'Europe/Berlin', ...FRIDAY_NIGHT } })
    const cases = {
      'Fri 16 Jan 21:59 CET': [Date.UTC(2026, 0, 16, 20, 59), 'outside_schedule'],
      'Fri 16 Jan 22:00 CET': [Date.UTC(2026, 0, 16, 21, 0), 'ok'],
      'Fri 16 Jan 23:30 CET': [Date.UTC(2026, 0, 16, 22, 30), 'ok'],
      'Sat 17 Jan 00:00 CET': [Date.UTC(2026, 0, 16, 23, 0), 'ok'],
      'Sat 17 Jan 01:30 CET': [Date.UTC(2026, 0, 17, 0, 30), 'ok'],
      'Sat 17 Jan 01:59 CET': [Date.UTC(2026, 0, 17, 0, 59), 'ok'],
      'Sat 17 Jan 02:00 CET': [Date.UTC(2026, 0, 17, 1, 0), 'outside_schedule'],
      'Sat 17 Jan 23:30 CET': [Date.UTC(2026, 0, 17, 22, 30), 'outside_schedule'],
      'Sun 18 Jan 01:30 CET': [Date.UTC(2026, 0, 18, 0, 30), 'outside_schedule'],
      'Thu 15 Jan 23:30 CET': [Date.UTC(2026, 0, 15, 22, 30), 'outside_schedule'],
      'Fri 16 Jan 01:30 CET (belongs to Thursday)': [Date.UTC(2026, 0, 16, 0, 30), 'outside_schedule'],
      // 21:30 UTC is 22:30 CET (inside), while a UTC reading would say 21:30 (outside): the zone is honoured.
      'Fri 16 Jan 22:30 CET = 21:30 UTC': [Date.UTC(2026, 0, 16, 21, 30), 'ok'],
    } as const
    const got: Record<string, string> = {}
    for (const [name, [utc]] of Object.entries(cases)) got[name] = await at(k.key, utc)
    expect(got).toEqual(Object.fromEntries(Object.entries(cases).map(([n, [, want]]) => [n, want])))
  })

  test('America/New_York (UTC-5): Friday 23:30 local is Saturday in UTC and still allowed', async () => {
    const k = await createKey(env, admin, { schedule: { timezone: 'America/New_York', ...FRIDAY_NIGHT } })
    const got = {
      fri2330: await at(k.key, Date.UTC(2026, 0, 17, 4, 30)),
      sat0130: await at(k.key, Date.UTC(2026, 0, 17, 6, 30)),
      sat0200: await at(k.key, Date.UTC(2026, 0, 17, 7, 0)),
      fri2159: await at(k.key, Date.UTC(2026, 0, 17, 2, 59)),
      fri2200: await at(k.key, Date.UTC(2026, 0, 17, 3, 0)),
    }
    expect(got).toEqual({ fri2330: 'ok', sat0130: 'ok', sat0200: 'outside_schedule', fri2159: 'outside_schedule', fri2200: 'ok' })
  })

  test('the refusal says when the key works', async () => {
    const k = await createKey(env, admin, { schedule: { timezone: 'Europe/Berlin', ...FRIDAY_NIGHT } })
    clock.set(Date.UTC(2026, 0, 16, 20, 59))
    const json = await expectError(await me(k.key), 403, 'outside_schedule')
    expect(json.error.message).toContain('22:00-02:00')
    expect(json.error.message).toContain('Europe/Berlin')
    expect(json.error.details.schedule).toEqual({ timezone: 'Europe/Berlin', days: [5], startMinute: 1320, endMinute: 120 })
  })

  test('spring forward in Berlin (29 March 2026): the night of Saturday 28th is an hour shorter', async () => {
    const k = await createKey(env, admin, { schedule: { timezone: 'Europe/Berlin', days: [6], startMinute: 22 * 60, endMinute: 2 * 60 } })
    const got = {
      'Sat 21:59 CET': await at(k.key, Date.UTC(2026, 2, 28, 20, 59)),
      'Sat 22:00 CET': await at(k.key, Date.UTC(2026, 2, 28, 21, 0)),
      'Sun 01:59 CET': await at(k.key, Date.UTC(2026, 2, 29, 0, 59)),
      // 01:00 UTC: clocks jump from 02:00 CET to 03:00 CEST.
      'Sun 03:00 CEST': await at(k.key, Date.UTC(2026, 2, 29, 1, 0)),
      'Sun 01:30 CET': await at(k.key, Date.UTC(2026, 2, 29, 0, 30)),
    }
    expect(got).toEqual({
      'Sat 21:59 CET': 'outside_schedule',
      'Sat 22:00 CET': 'ok',
      'Sun 01:59 CET': 'ok',
      'Sun 03:00 CEST': 'outside_schedule',
      'Sun 01:30 CET': 'ok',
    })
  })

  test('a day window follows the offset change: 09:00-17:00 Berlin before and after 29 March', async () => {
    const k = await createKey(env, admin, { schedule: { timezone: 'Europe/Berlin', days: [0, 1, 2, 3, 4, 5, 6], startMinute: 9 * 60, endMinute: 17 * 60 } })
    const got = {
      // Saturday 28 March, CET (UTC+1)
      '07:30 UTC = 08:30 CET': await at(k.key, Date.UTC(2026, 2, 28, 7, 30)),
      '08:00 UTC = 09:00 CET': await at(k.key, Date.UTC(2026, 2, 28, 8, 0)),
      '15:30 UTC = 16:30 CET': await at(k.key, Date.UTC(2026, 2, 28, 15, 30)),
      // Monday 30 March, CEST (UTC+2)
      '07:30 UTC = 09:30 CEST': await at(k.key, Date.UTC(2026, 2, 30, 7, 30)),
      '06:59 UTC = 08:59 CEST': await at(k.key, Date.UTC(2026, 2, 30, 6, 59)),
      '15:00 UTC = 17:00 CEST': await at(k.key, Date.UTC(2026, 2, 30, 15, 0)),
    }
    expect(got).toEqual({
      '07:30 UTC = 08:30 CET': 'outside_schedule',
      '08:00 UTC = 09:00 CET': 'ok',
      '15:30 UTC = 16:30 CET': 'ok',
      '07:30 UTC = 09:30 CEST': 'ok',
      '06:59 UTC = 08:59 CEST': 'outside_schedule',
      '15:00 UTC = 17:00 CEST': 'outside_schedule',
    })
  })

  test('fall back in New York (1 November 2026): 01:30 happens twice and both are inside Saturday night', async () => {
    const k = await createKey(env, admin, { schedule: { timezone: 'America/New_York', days: [6], startMinute: 22 * 60, endMinute: 2 * 60 } })
    const got = {
      'Sun 01:30 EDT': await at(k.key, Date.UTC(2026, 10, 1, 5, 30)),
      'Sun 01:30 EST': await at(k.key, Date.UTC(2026, 10, 1, 6, 30)),
      'Sun 02:00 EST': await at(k.key, Date.UTC(2026, 10, 1, 7, 0)),
      'Sat 22:00 EDT': await at(k.key, Date.UTC(2026, 10, 1, 2, 0)),
      'Sat 21:59 EDT': await at(k.key, Date.UTC(2026, 10, 1, 1, 59)),
    }
    expect(got).toEqual({
      'Sun 01:30 EDT': 'ok',
      'Sun 01:30 EST': 'ok',
      'Sun 02:00 EST': 'outside_schedule',
      'Sat 22:00 EDT': 'ok',
      'Sat 21:59 EDT': 'outside_schedule',
    })
  })

  test('outside the schedule is refused before the monthly cap', async () => {
    const k = await createKey(env, admin, { monthlyCallCap: 1, schedule: { timezone: 'Europe/Berlin', ...FRIDAY_NIGHT } })
    expect(await at(k.key, Date.UTC(2026, 0, 16, 22, 30))).toBe('ok')
    expect(await at(k.key, Date.UTC(2026, 0, 16, 22, 31))).toBe('monthly_cap_exceeded')
    expect(await at(k.key, Date.UTC(2026, 0, 17, 1, 0))).toBe('outside_schedule')
  })
})

describe('429 monthly_cap_exceeded', () => {
  test('cap N: N calls succeed, call N+1 is 429 with Retry-After to the next UTC month', async () => {
    const k = await createKey(env, admin, { monthlyCallCap: 3 })
    clock.set(Date.UTC(2026, 0, 14, 12, 0, 0))
    for (let i = 1; i <= 3; i++) {
      const res = await me(k.key)
      expect(res.status).toBe(200)
      expect((await body(res)).data.usage).toEqual({ month: '2026-01', apiCalls: i, monthlyCallCap: 3 })
    }
    const res = await me(k.key)
    const json = await expectError(res, 429, 'monthly_cap_exceeded')
    // 14 Jan 12:00 to 1 Feb 00:00 UTC: 17.5 days.
    expect(res.headers.get('retry-after')).toBe(String(17 * 86_400 + 12 * 3_600))
    expect(json.error.details.monthlyCallCap).toBe(3)
    // Near the turn of the month Retry-After shrinks to the remaining seconds, rounded up.
    clock.set(Date.UTC(2026, 0, 31, 23, 59, 58, 500))
    const late = await me(k.key)
    await expectError(late, 429, 'monthly_cap_exceeded')
    expect(late.headers.get('retry-after')).toBe('2')
  })

  test('a cap of 1 is exactly one call', async () => {
    const k = await createKey(env, admin, { monthlyCallCap: 1 })
    expect(await outcome(await me(k.key))).toBe('ok')
    expect(await outcome(await me(k.key))).toBe('monthly_cap_exceeded')
  })

  test('refused calls are not counted: raising the cap by 2 admits exactly 2 more', async () => {
    const k = await createKey(env, admin, { monthlyCallCap: 2 })
    const results: string[] = []
    for (let i = 0; i < 7; i++) results.push(await outcome(await me(k.key)))
    expect(results).toEqual(['ok', 'ok', ...Array(5).fill('monthly_cap_exceeded')])
    await patch(k.id, { monthlyCallCap: 4 })
    const more: string[] = []
    for (let i = 0; i < 4; i++) more.push(await outcome(await me(k.key)))
    expect(more).toEqual(['ok', 'ok', 'monthly_cap_exceeded', 'monthly_cap_exceeded'])
  })

  test('a concurrent burst never passes the cap', async () => {
    const k = await createKey(env, admin, { monthlyCallCap: 7 })
    const results = await Promise.all(Array.from({ length: 20 }, () => me(k.key).then(outcome)))
    expect(results.filter((r) => r === 'ok').length).toBe(7)
    expect(results.filter((r) => r === 'monthly_cap_exceeded').length).toBe(13)
  })

  test('a new UTC month resets the count', async () => {
    clock.set(Date.UTC(2026, 0, 31, 23, 59, 59, 999))
    const k = await createKey(env, admin, { monthlyCallCap: 2 })
    expect([await outcome(await me(k.key)), await outcome(await me(k.key)), await outcome(await me(k.key))]).toEqual(['ok', 'ok', 'monthly_cap_exceeded'])
    clock.set(Date.UTC(2026, 1, 1, 0, 0, 0))
    const res = await me(k.key)
    expect(res.status).toBe(200)
    expect((await body(res)).data.usage).toEqual({ month: '2026-02', apiCalls: 1, monthlyCallCap: 2 })
    expect(await outcome(await me(k.key))).toBe('ok')
    expect(await outcome(await me(k.key))).toBe('monthly_cap_exceeded')
  })

  test('the count survives a restart: a second runtime on the same data dir continues it', async () => {
    clock.set(Date.UTC(2026, 2, 10, 9, 0))
    const k = await createKey(env, admin, { monthlyCallCap: 4 })
    expect([await outcome(await me(k.key)), await outcome(await me(k.key))]).toEqual(['ok', 'ok'])

    const rt = await openRuntime(env.config, { clock, log: silentLogger })
    extraRuntimes.push(rt)
    const app = createApp(rt)
    const second: Target = {
      request: (path, init = {}) => {
        const headers = new Headers(init.headers)
        if (init.key) headers.set('authorization', `Bearer ${init.key}`)
        return app.handle(new Request(`http://localhost:8080${path}`, { ...init, headers }))
      },
    }
    const third = await me(k.key, undefined, second)
    expect(third.status).toBe(200)
    expect((await body(third)).data.usage).toEqual({ month: '2026-03', apiCalls: 3, monthlyCallCap: 4 })
    expect(await outcome(await me(k.key, undefined, second))).toBe('ok')
    expect(await outcome(await me(k.key, undefined, second))).toBe('monthly_cap_exceeded')
    // And the first runtime sees the same count.
    expect(await outcome(await me(k.key))).toBe('monthly_cap_exceeded')
    clock.set(Date.UTC(2026, 3, 1, 0, 0))
    const april = await me(k.key, undefined, second)
    expect((await body(april)).data.usage).toEqual({ month: '2026-04', apiCalls: 1, monthlyCallCap: 4 })
  })

  test('the cap comes before the rate limit', async () => {
    const k = await createKey(env, admin, { monthlyCallCap: 2, rateLimitOverride: 2 })
    const results: string[] = []
    for (let i = 0; i < 4; i++) results.push(await outcome(await me(k.key)))
    expect(results).toEqual(['ok', 'ok', 'monthly_cap_exceeded', 'monthly_cap_exceeded'])
  })

  test('a capped key without the permission gets forbidden until the cap is used up, then the cap error', async () => {
    const k = await createKey(env, admin, { monthlyCallCap: 2, permissions: ['links:read'] })
    const results: string[] = []
    for (let i = 0; i < 4; i++) results.push(await outcome(await call(env, k.key, '/v1/api-keys')))
    expect(results).toEqual(['forbidden', 'forbidden', 'monthly_cap_exceeded', 'monthly_cap_exceeded'])
  })

  test('a workspace the key may not act in is refused before the cap is counted', async () => {
    const other = await bootstrapAccount(env.rt, 'Elsewhere')
    const k = await createKey(env, admin, { monthlyCallCap: 1 })
    const foreign = { 'x-workspace-id': other.workspace.id }
    for (let i = 0; i < 3; i++) await expectError(await call(env, k.key, '/v1/me', { headers: foreign }), 403, 'forbidden')
    expect(await outcome(await me(k.key))).toBe('ok')
    expect(await outcome(await me(k.key))).toBe('monthly_cap_exceeded')
  })
})

describe('403 forbidden', () => {
  test('a missing permission is 403 forbidden naming it, after every other check', async () => {
    const k = await createKey(env, admin, { permissions: ['links:read'], allowedIps: ['192.0.2.0/24'] })
    const json = await expectError(await call(env, k.key, '/v1/api-keys', { ip: '192.0.2.10' }), 403, 'forbidden')
    expect(json.error.details.required).toBe('api_keys:read')
    await expectError(await call(env, k.key, '/v1/api-keys', { json: { name: 'x' }, ip: '192.0.2.10' }), 403, 'forbidden')
    // From a wrong address the address is refused first.
    await expectError(await call(env, k.key, '/v1/api-keys', { ip: '198.51.100.1' }), 403, 'ip_not_allowed')
    const reader = await createKey(env, admin, { permissions: ['api_keys:read'] })
    expect(await outcome(await call(env, reader.key, '/v1/api-keys'))).toBe('ok')
    await expectError(await call(env, reader.key, '/v1/api-keys', { json: { name: 'x' } }), 403, 'forbidden')
  })

  test('a rate-limited key without the permission gets rate_limited once the window is full', async () => {
    const k = await createKey(env, admin, { permissions: ['links:read'], rateLimitOverride: 2 })
    const results: string[] = []
    for (let i = 0; i < 4; i++) results.push(await outcome(await call(env, k.key, '/v1/api-keys')))
    expect(results).toEqual(['forbidden', 'forbidden', 'rate_limited', 'rate_limited'])
  })
})
