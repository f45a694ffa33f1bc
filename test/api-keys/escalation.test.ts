// No privilege escalation through key management (contract section 3): a key never creates, widens or takes
// over a key beyond itself. Omitted settings inherit the caller's restrictions; test keys only touch test
// keys. All through HTTP, addresses via X-Forwarded-For with LNK_TRUST_PROXY=1.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { bootstrapAccount, setup, type TestEnv } from '../helpers'
import { call, createKey, expectError, expectOk, outcome } from './_keys'

const START = Date.UTC(2026, 0, 14, 12, 0, 0)
const clock = new ManualClock(START)
let env: TestEnv
let admin: string

beforeAll(async () => {
  env = await setup({ clock, env: { LNK_TRUST_PROXY: '1' } })
  admin = (await bootstrapAccount(env.rt, 'Escalation')).apiKey.key
})
afterAll(() => env.cleanup())
let slot = 0
beforeEach(() => clock.set(START + ++slot * 3 * 60_000))

const iso = (ms: number) => new Date(ms).toISOString()
const post = (key: string, json: Record<string, unknown>, ip?: string) => call(env, key, '/v1/api-keys', { json: { name: 'child', ...json }, ip })
const patch = (key: string, id: string, json: Record<string, unknown>, ip?: string) => call(env, key, `/v1/api-keys/${id}`, { method: 'PATCH', json, ip })
const act = (key: string, id: string, verb: string, ip?: string) => call(env, key, `/v1/api-keys/${id}/${verb}`, { method: 'POST', json: {}, ip })
const forbidden = async (res: Response) => expectError(res, 403, 'forbidden')

describe('permissions', () => {
  test('a links:read,api_keys:write key cannot create a key with * or links:write', async () => {
    const k = await createKey(env, admin, { permissions: ['links:read', 'api_keys:write'] })
    for (const permissions of [['*'], ['links:write'], ['links:read', 'links:write'], ['api_keys:read']]) {
      const json = await forbidden(await post(k.key, { permissions }))
      expect(json.error.details.notHeld.length).toBeGreaterThan(0)
    }
    expect((await createKey(env, k.key, { permissions: ['links:read'] })).permissions).toEqual(['links:read'])
    // Omitted: exactly the caller's own.
    expect((await createKey(env, k.key, {})).permissions).toEqual(['links:read', 'api_keys:write'])
  })

  test('nor PATCH a key, its own included, to * or links:write', async () => {
    const k = await createKey(env, admin, { permissions: ['links:read', 'api_keys:write', 'api_keys:read'] })
    const child = await createKey(env, k.key, { permissions: ['links:read'] })
    for (const permissions of [['*'], ['links:write'], ['links:read', 'webhooks:write']]) {
      await forbidden(await patch(k.key, child.id, { permissions }))
      await forbidden(await patch(k.key, k.id, { permissions }))
    }
    expect((await expectOk(await call(env, k.key, `/v1/api-keys/${child.id}`))).permissions).toEqual(['links:read'])
    expect((await expectOk(await call(env, k.key, `/v1/api-keys/${k.id}`))).permissions).toEqual(['links:read', 'api_keys:write', 'api_keys:read'])
    // Within its own permissions it may.
    expect((await expectOk(await patch(k.key, child.id, { permissions: ['links:read', 'api_keys:read'] }))).permissions).toEqual([
      'links:read',
      'api_keys:read',
    ])
  })

  test('a key with * may grant anything, including *', async () => {
    expect((await createKey(env, admin, { permissions: ['*'] })).permissions).toEqual(['*'])
  })
})

describe('test keys', () => {
  test('a test key cannot create live keys', async () => {
    const t = await createKey(env, admin, { mode: 'test' })
    const json = await forbidden(await post(t.key, { mode: 'live' }))
    expect(json.error.message).toContain('test')
    const made = await createKey(env, t.key, {})
    expect(made.mode).toBe('test')
    expect(made.key).toMatch(/^lnk_test_/)
  })

  test('a live key does not exist for a test key: read, patch, pause, resume, revoke, rotate are 404', async () => {
    const t = await createKey(env, admin, { mode: 'test' })
    const live = await createKey(env, admin, { mode: 'live' })
    const missing = (res: Response) => expectError(res, 404, 'not_found')
    await missing(await call(env, t.key, `/v1/api-keys/${live.id}`))
    await missing(await patch(t.key, live.id, { name: 'taken' }))
    for (const verb of ['pause', 'resume', 'revoke', 'rotate']) await missing(await act(t.key, live.id, verb))
    const untouched = await expectOk(await call(env, admin, `/v1/api-keys/${live.id}`))
    expect(untouched).toMatchObject({ name: 'k', pausedAt: null, revokedAt: null, rotating: false, keyPrefix: live.keyPrefix })
    expect(await outcome(await call(env, live.key, '/v1/me'))).toBe('ok')
    // It manages test keys.
    const sibling = await createKey(env, admin, { mode: 'test' })
    expect(await expectOk(await act(t.key, sibling.id, 'pause'))).toMatchObject({ pausedAt: iso(clock.now()) })
    expect((await expectOk(await act(t.key, sibling.id, 'rotate'))).key).toMatch(/^lnk_test_/)
  })
})

describe('address ranges', () => {
  const IP = '192.0.2.10'
  async function limitedKey() {
    return createKey(env, admin, { allowedIps: ['192.0.2.0/24', '2001:db8:abcd::/48'] })
  }

  test('a key with allowedIps cannot create a key without them or with a wider or other range', async () => {
    const k = await limitedKey()
    for (const allowedIps of [
      [],
      ['192.0.0.0/16'],
      ['0.0.0.0/0'],
      ['198.51.100.1'],
      ['192.0.2.0/24', '203.0.113.0/24'],
      ['2001:db8::/32'],
      ['2001:db8:abce::1'],
      ['::/0'],
    ]) {
      const json = await forbidden(await post(k.key, { allowedIps }, IP))
      expect(json.error.details.allowedIps).toEqual(['192.0.2.0/24', '2001:db8:abcd::/48'])
    }
  })

  test('narrower ranges are fine, in both families and as mapped addresses', async () => {
    const k = await limitedKey()
    for (const allowedIps of [['192.0.2.128/25'], ['192.0.2.5'], ['::ffff:192.0.2.5'], ['2001:db8:abcd:12::/64', '192.0.2.0/24'], ['2001:db8:abcd::1']]) {
      expect((await createKey(env, k.key, { allowedIps }, IP)).allowedIps).toEqual(allowedIps)
    }
  })

  test('omitted, allowedIps are inherited and enforced', async () => {
    const k = await limitedKey()
    const child = await createKey(env, k.key, {}, IP)
    expect(child.allowedIps).toEqual(['192.0.2.0/24', '2001:db8:abcd::/48'])
    expect(await outcome(await call(env, child.key, '/v1/me', { ip: '198.51.100.1' }))).toBe('ip_not_allowed')
    expect(await outcome(await call(env, child.key, '/v1/me', { ip: '2001:db8:abcd::99' }))).toBe('ok')
  })

  test('nor can it PATCH a key to no or wider ranges (its own included)', async () => {
    const k = await limitedKey()
    const child = await createKey(env, k.key, { allowedIps: ['192.0.2.5'] }, IP)
    await forbidden(await patch(k.key, child.id, { allowedIps: [] }, IP))
    await forbidden(await patch(k.key, child.id, { allowedIps: ['203.0.113.0/24'] }, IP))
    await forbidden(await patch(k.key, k.id, { allowedIps: [] }, IP))
    expect((await expectOk(await patch(k.key, child.id, { allowedIps: ['192.0.2.6'] }, IP))).allowedIps).toEqual(['192.0.2.6'])
  })
})

describe('scope filters', () => {
  test('a scoped key cannot create an unscoped key or one with other domains or tags; omitted, the scope is inherited', async () => {
    const k = await createKey(env, admin, { scopeFilters: { domains: ['go.example.com'], tags: ['team-a'] } })
    for (const scopeFilters of [
      null,
      { tags: ['team-a'] },
      { domains: ['go.example.com'] },
      { domains: ['other.example'], tags: ['team-a'] },
      { domains: ['go.example.com'], tags: ['team-a', 'team-b'] },
    ]) {
      await forbidden(await post(k.key, { scopeFilters }))
    }
    expect((await createKey(env, k.key, { scopeFilters: { domains: ['GO.example.com'], tags: ['team-a'] } })).scopeFilters).toEqual({
      domains: ['go.example.com'],
      tags: ['team-a'],
    })
    expect((await createKey(env, k.key, {})).scopeFilters).toEqual({ domains: ['go.example.com'], tags: ['team-a'] })
  })

  test('a tag-scoped key may narrow to fewer tags but never clear the scope by PATCH', async () => {
    const k = await createKey(env, admin, { scopeFilters: { tags: ['a', 'b'] } })
    const child = await createKey(env, k.key, { scopeFilters: { tags: ['a'] } })
    await forbidden(await patch(k.key, child.id, { scopeFilters: null }))
    await forbidden(await patch(k.key, child.id, { scopeFilters: { tags: ['c'] } }))
    await forbidden(await patch(k.key, k.id, { scopeFilters: null }))
    expect((await expectOk(await patch(k.key, child.id, { scopeFilters: { tags: ['b'] } }))).scopeFilters).toEqual({ tags: ['b'] })
  })
})

describe('schedule', () => {
  const ALWAYS = { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], startMinute: 0, endMinute: 1440 }
  test('a key with a schedule passes it on and cannot drop or change it', async () => {
    const k = await createKey(env, admin, { schedule: ALWAYS })
    expect((await createKey(env, k.key, {})).schedule).toEqual(ALWAYS)
    await forbidden(await post(k.key, { schedule: null }))
    await forbidden(await post(k.key, { schedule: { ...ALWAYS, timezone: 'Europe/Berlin' } }))
    await forbidden(await patch(k.key, k.id, { schedule: null }))
  })
})

describe('monthly cap', () => {
  test('a capped key cannot create an uncapped key or a bigger cap; omitted, the cap is inherited', async () => {
    const k = await createKey(env, admin, { monthlyCallCap: 100 })
    await forbidden(await post(k.key, { monthlyCallCap: null }))
    await forbidden(await post(k.key, { monthlyCallCap: 101 }))
    expect((await createKey(env, k.key, { monthlyCallCap: 100 })).monthlyCallCap).toBe(100)
    expect((await createKey(env, k.key, { monthlyCallCap: 5 })).monthlyCallCap).toBe(5)
    const inherited = await createKey(env, k.key, {})
    expect(inherited.monthlyCallCap).toBe(100)
    await forbidden(await patch(k.key, inherited.id, { monthlyCallCap: null }))
    await forbidden(await patch(k.key, inherited.id, { monthlyCallCap: 1000 }))
    await forbidden(await patch(k.key, k.id, { monthlyCallCap: 1000 }))
    expect((await expectOk(await patch(k.key, inherited.id, { monthlyCallCap: 50 }))).monthlyCallCap).toBe(50)
  })
})

describe('rate limit', () => {
  test('a key limited below the default cannot create a faster key, nor one with the default, and passes its limit on', async () => {
    const k = await createKey(env, admin, { rateLimitOverride: 30 })
    await forbidden(await post(k.key, { rateLimitOverride: 31 }))
    // null means the default 600 a minute: faster than 30.
    await forbidden(await post(k.key, { rateLimitOverride: null }))
    expect((await createKey(env, k.key, { rateLimitOverride: 10 })).rateLimitOverride).toBe(10)
    const inherited = await createKey(env, k.key, {})
    expect(inherited.rateLimitOverride).toBe(30)
    expect((await call(env, inherited.key, '/v1/me')).headers.get('ratelimit-limit')).toBe('30')
    await forbidden(await patch(k.key, inherited.id, { rateLimitOverride: null }))
    await forbidden(await patch(k.key, k.id, { rateLimitOverride: 600 }))
  })

  test('a key with the default may create keys up to the default', async () => {
    const k = await createKey(env, admin, {})
    await forbidden(await post(k.key, { rateLimitOverride: 601 }))
    expect((await createKey(env, k.key, { rateLimitOverride: 600 })).rateLimitOverride).toBe(600)
    expect((await createKey(env, k.key, {})).rateLimitOverride).toBeNull()
  })
})

describe('expiry', () => {
  test('a key with expiresAt cannot create a key that outlives it; omitted, the expiry is inherited', async () => {
    const expiresAt = iso(clock.now() + 7 * 86_400_000)
    const k = await createKey(env, admin, { expiresAt })
    await forbidden(await post(k.key, { expiresAt: null }))
    await forbidden(await post(k.key, { expiresAt: iso(clock.now() + 7 * 86_400_000 + 1) }))
    expect((await createKey(env, k.key, { expiresAt })).expiresAt).toBe(expiresAt)
    const sooner = iso(clock.now() + 86_400_000)
    expect((await createKey(env, k.key, { expiresAt: sooner })).expiresAt).toBe(sooner)
    const inherited = await createKey(env, k.key, {})
    expect(inherited.expiresAt).toBe(expiresAt)
    await forbidden(await patch(k.key, inherited.id, { expiresAt: null }))
    await forbidden(await patch(k.key, k.id, { expiresAt: iso(clock.now() + 30 * 86_400_000) }))
    // The inherited expiry is enforced.
    clock.set(Date.parse(expiresAt))
    expect(await outcome(await call(env, inherited.key, '/v1/me'))).toBe('unauthorized')
  })
})

describe('every restriction at once', () => {
  test('omitted settings inherit all of the caller restrictions together', async () => {
    const expiresAt = iso(clock.now() + 86_400_000)
    const schedule = { timezone: 'Europe/Berlin', days: [0, 1, 2, 3, 4, 5, 6], startMinute: 0, endMinute: 1440 }
    const k = await createKey(env, admin, {
      permissions: ['links:read', 'api_keys:write', 'api_keys:read'],
      allowedIps: ['198.51.100.0/24'],
      scopeFilters: { tags: ['t'] },
      schedule,
      monthlyCallCap: 20,
      rateLimitOverride: 20,
      expiresAt,
    })
    const child = await createKey(env, k.key, { name: 'heir' }, '198.51.100.3')
    expect(child).toMatchObject({
      permissions: ['links:read', 'api_keys:write', 'api_keys:read'],
      allowedIps: ['198.51.100.0/24'],
      scopeFilters: { tags: ['t'] },
      schedule,
      monthlyCallCap: 20,
      rateLimitOverride: 20,
      expiresAt,
    })
  })
})

describe('managing keys wider than the caller', () => {
  // A narrow key must not take over a wider one: rotating it would hand the narrow key the wider key's new
  // secret, and changing it would let the narrow key act on keys it could never have created.
  test('a links:read,api_keys:write key cannot rotate, patch, pause or revoke a * key', async () => {
    const narrow = await createKey(env, admin, { permissions: ['links:read', 'api_keys:write'] })
    const wide = await createKey(env, admin, { name: 'wide', permissions: ['*'] })
    await forbidden(await act(narrow.key, wide.id, 'rotate'))
    await forbidden(await patch(narrow.key, wide.id, { name: 'renamed' }))
    await forbidden(await patch(narrow.key, wide.id, { permissions: ['links:read'] }))
    for (const verb of ['pause', 'resume', 'revoke']) await forbidden(await act(narrow.key, wide.id, verb))
    const untouched = await expectOk(await call(env, admin, `/v1/api-keys/${wide.id}`))
    expect(untouched).toMatchObject({ name: 'wide', permissions: ['*'], pausedAt: null, revokedAt: null, rotating: false, keyPrefix: wide.keyPrefix })
    expect(await outcome(await call(env, wide.key, '/v1/me'))).toBe('ok')
  })

  test('nor a key without the restrictions the caller has', async () => {
    const restricted = await createKey(env, admin, { allowedIps: ['192.0.2.0/24'] })
    const capped = await createKey(env, admin, { monthlyCallCap: 100 })
    const free = await createKey(env, admin, {})
    await forbidden(await act(restricted.key, free.id, 'rotate', '192.0.2.1'))
    await forbidden(await act(capped.key, free.id, 'rotate'))
    // Its own children, and itself, it may manage.
    const child = await createKey(env, restricted.key, {}, '192.0.2.1')
    expect((await expectOk(await act(restricted.key, child.id, 'rotate', '192.0.2.1'))).key).toMatch(/^lnk_live_/)
    expect((await expectOk(await act(capped.key, capped.id, 'rotate'))).rotating).toBe(true)
  })
})
