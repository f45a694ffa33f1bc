// Key management through HTTP (contract section 3): POST/GET/PATCH /v1/api-keys, pause, resume, revoke,
// rotate; every field of spec 2.7; validation of the restriction fields; secrets never shown twice.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { hashKey } from '../../src/modules/identity/keys'
import { body, bootstrapAccount, setup, type TestEnv } from '../helpers'
import { API_KEY_FIELDS, call, createKey, expectError, expectOk, outcome } from './_keys'

const START = Date.UTC(2026, 0, 14, 12, 0, 0)
const clock = new ManualClock(START)
let env: TestEnv
let acct: Awaited<ReturnType<typeof bootstrapAccount>>
let admin: string

beforeAll(async () => {
  env = await setup({ clock, env: { LNK_TRUST_PROXY: '1' } })
  acct = await bootstrapAccount(env.rt, 'Manage')
  admin = acct.apiKey.key
})
afterAll(() => env.cleanup())
let slot = 0
beforeEach(() => clock.set(START + ++slot * 3 * 60_000))

const iso = (ms: number) => new Date(ms).toISOString()
const get = async (id: string, key = admin) => expectOk(await call(env, key, `/v1/api-keys/${id}`))
const patch = (id: string, json: unknown, key = admin) => call(env, key, `/v1/api-keys/${id}`, { method: 'PATCH', json })
const action = (id: string, verb: string, json?: unknown, key = admin) => call(env, key, `/v1/api-keys/${id}/${verb}`, { method: 'POST', json })
const me = (key: string, ip?: string) => call(env, key, '/v1/me', { ip })

async function expectInvalid(res: Response, path: string) {
  const json = await expectError(res, 400, 'validation_failed')
  const paths: string[] = json.error.details.issues.map((i: { path: string }) => i.path)
  // An issue at the field, inside it, or (for a nullable object, whose union fails as a whole) at its parent.
  const ok = paths.some((p) => p === path || p.startsWith(`${path}.`) || (p !== '' && path.startsWith(`${p}.`)))
  expect({ path, ok, paths }).toMatchObject({ path, ok: true })
  return json
}

describe('POST /v1/api-keys', () => {
  test('answers every field of spec 2.7 and the secret, once', async () => {
    const expiresAt = iso(clock.now() + 30 * 86_400_000)
    const settings = {
      name: '  CI deploy  ',
      mode: 'live',
      permissions: ['links:read', 'links:write'],
      allowedIps: ['192.0.2.0/24', '2001:db8:abcd::/48'],
      scopeFilters: { domains: ['Go.Example.com'], tags: ['ci'] },
      schedule: { timezone: 'Europe/Berlin', days: [5, 1, 3], startMinute: 480, endMinute: 1080 },
      monthlyCallCap: 10_000,
      rateLimitOverride: 120,
      expiresAt,
    }
    const res = await call(env, admin, '/v1/api-keys', { json: settings })
    const created = await expectOk(res, 201)
    expect(Object.keys(created).sort()).toEqual([...API_KEY_FIELDS, 'key'].sort())
    expect(created.key).toMatch(/^lnk_live_[0-9A-Za-z]{32}$/)
    expect(created).toEqual({
      id: expect.stringMatching(/^key_/),
      key: created.key,
      name: 'CI deploy',
      keyPrefix: created.key.slice(0, 12),
      mode: 'live',
      permissions: ['links:read', 'links:write'],
      allowedIps: ['192.0.2.0/24', '2001:db8:abcd::/48'],
      scopeFilters: { domains: ['go.example.com'], tags: ['ci'] },
      schedule: { timezone: 'Europe/Berlin', days: [1, 3, 5], startMinute: 480, endMinute: 1080 },
      monthlyCallCap: 10_000,
      rateLimitOverride: 120,
      expiresAt,
      lastUsedAt: null,
      lastUsedIp: null,
      pausedAt: null,
      pausedReason: null,
      revokedAt: null,
      revokedReason: null,
      rotating: false,
      graceHoursRemaining: 0,
      workspaceId: acct.workspace.id,
      createdAt: iso(clock.now()),
    })
    expect(created.keyPrefix).toHaveLength(12)
    // Read back: the same view, without the secret.
    const read = await get(created.id)
    const { key: _secret, ...view } = created
    expect(read).toEqual(view)
  })

  test('a key made with defaults: caller mode and permissions, no restrictions', async () => {
    const created = await createKey(env, admin, { name: 'plain' })
    expect(created).toMatchObject({
      mode: 'live',
      permissions: ['*'],
      allowedIps: [],
      scopeFilters: null,
      schedule: null,
      monthlyCallCap: null,
      rateLimitOverride: null,
      expiresAt: null,
    })
    expect(await outcome(await me(created.key))).toBe('ok')
    const testKey = await createKey(env, admin, { name: 'sandbox', mode: 'test' })
    expect(testKey.key).toMatch(/^lnk_test_[0-9A-Za-z]{32}$/)
    expect(testKey.keyPrefix).toBe(testKey.key.slice(0, 12))
  })

  test('allowedIps entries are validated one by one and normalised', async () => {
    for (const bad of [
      '192.0.2.256',
      '192.0.2.0/33',
      'not-an-ip',
      '2001:db8::/129',
      '2001:db8:::1',
      '192.0.2.1/',
      '192.0.2.0/24/1',
      '192.0.2.0/-1',
      '',
      'example.com',
    ]) {
      const json = await expectInvalid(await call(env, admin, '/v1/api-keys', { json: { name: 'x', allowedIps: ['192.0.2.1', bad] } }), 'allowedIps.1')
      expect(json.error.details.issues.map((i: { path: string }) => i.path)).not.toContain('allowedIps.0')
    }
    const ok = await createKey(env, admin, { allowedIps: [' 192.0.2.7 ', '192.0.2.7', '::1', '2001:DB8::/32', '::ffff:192.0.2.0/120', '0.0.0.0/0'] })
    expect(ok.allowedIps).toEqual(['192.0.2.7', '::1', '2001:DB8::/32', '::ffff:192.0.2.0/120', '0.0.0.0/0'])
  })

  test('schedule: time zone, days and minutes are validated', async () => {
    const base = { timezone: 'Europe/Berlin', days: [1], startMinute: 540, endMinute: 1020 }
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, timezone: 'Mars/Olympus_Mons' }, 'schedule.timezone'],
      [{ ...base, timezone: '' }, 'schedule.timezone'],
      [{ ...base, days: [] }, 'schedule.days'],
      [{ ...base, days: [7] }, 'schedule.days'],
      [{ ...base, days: [-1] }, 'schedule.days'],
      [{ ...base, days: [1.5] }, 'schedule.days'],
      [{ ...base, startMinute: 1440 }, 'schedule.startMinute'],
      [{ ...base, startMinute: -1 }, 'schedule.startMinute'],
      [{ ...base, endMinute: 1441 }, 'schedule.endMinute'],
      [{ ...base, endMinute: 10.5 }, 'schedule.endMinute'],
      [{ ...base, startMinute: 600, endMinute: 600 }, 'schedule'],
      [{ timezone: 'UTC', days: [1], startMinute: 0 }, 'schedule'],
    ]
    for (const [schedule, path] of cases) await expectInvalid(await call(env, admin, '/v1/api-keys', { json: { name: 'x', schedule } }), path)
    const ok = await createKey(env, admin, { schedule: { timezone: 'America/New_York', days: [6, 0, 6], startMinute: 1320, endMinute: 1440 } })
    expect(ok.schedule).toEqual({ timezone: 'America/New_York', days: [0, 6], startMinute: 1320, endMinute: 1440 })
  })

  test('scopeFilters: at least one domain or tag, or null', async () => {
    for (const scopeFilters of [{}, { domains: [] }, { tags: [] }, { domains: [], tags: [] }]) {
      await expectInvalid(await call(env, admin, '/v1/api-keys', { json: { name: 'x', scopeFilters } }), 'scopeFilters')
    }
    await expectInvalid(await call(env, admin, '/v1/api-keys', { json: { name: 'x', scopeFilters: { tags: 'ci' } } }), 'scopeFilters')
    const none = await createKey(env, admin, { scopeFilters: null })
    expect(none.scopeFilters).toBeNull()
    const tags = await createKey(env, admin, { scopeFilters: { tags: ['a', 'a', 'b'] } })
    expect(tags.scopeFilters).toEqual({ tags: ['a', 'b'] })
  })

  test('schedule and scopeFilters refuse unknown fields, like the body around them (they were dropped silently)', async () => {
    const schedule = { timezone: 'UTC', days: [1], startMinute: 0, endMinute: 60 }
    await expectInvalid(await call(env, admin, '/v1/api-keys', { json: { name: 'x', schedule: { ...schedule, timezones: 'Europe/Berlin' } } }), 'schedule')
    await expectInvalid(await call(env, admin, '/v1/api-keys', { json: { name: 'x', scopeFilters: { domains: ['go.example'], tag: 'ci' } } }), 'scopeFilters')
    const k = await createKey(env, admin, {})
    await expectInvalid(await patch(k.id, { scopeFilters: { tags: ['ci'], domain: 'go.example' } }), 'scopeFilters')
    expect(await get(k.id)).toMatchObject({ schedule: null, scopeFilters: null })
  })

  test('the other fields are validated too', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ name: 'x', mode: 'prod' }, 'mode'],
      [{ name: 'x', permissions: [] }, 'permissions'],
      [{ name: 'x', permissions: ['links:admin'] }, 'permissions'],
      [{ name: 'x', monthlyCallCap: 0 }, 'monthlyCallCap'],
      [{ name: 'x', monthlyCallCap: 1.5 }, 'monthlyCallCap'],
      [{ name: 'x', rateLimitOverride: 0 }, 'rateLimitOverride'],
      [{ name: 'x', expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ name: 'x', expiresAt: iso(clock.now() - 1000) }, 'expiresAt'],
      [{ name: 'x', secret: 'mine' }, 'secret'],
    ]
    for (const [json, path] of cases) await expectInvalid(await call(env, admin, '/v1/api-keys', { json }), path)
    await expectInvalid(await call(env, admin, '/v1/api-keys', { json: {} }), 'name')
  })
})

describe('GET /v1/api-keys', () => {
  test('never shows a secret or a hash; keyPrefix is the first 12 characters', async () => {
    const a = await createKey(env, admin, { name: 'a' })
    const b = await createKey(env, admin, { name: 'b', mode: 'test' })
    const rotated = await expectOk(await action(b.id, 'rotate', {}))
    const res = await call(env, admin, '/v1/api-keys?mode=all')
    const text = await res.text()
    for (const secret of [admin, a.key, b.key, rotated.key]) {
      expect(text).not.toContain(secret)
      expect(text).not.toContain(hashKey(secret))
    }
    expect(text).not.toMatch(/keyHash|"key"/i)
    const list = JSON.parse(text).data as Array<Record<string, unknown>>
    for (const k of list) expect(Object.keys(k).sort()).toEqual(API_KEY_FIELDS)
    const byId = Object.fromEntries(list.map((k) => [k.id, k]))
    expect(byId[acct.apiKey.id]!.keyPrefix).toBe(admin.slice(0, 12))
    expect(byId[a.id]!.keyPrefix).toBe(a.key.slice(0, 12))
    expect(byId[b.id]!.keyPrefix).toBe(rotated.key.slice(0, 12))
    expect(byId[b.id]!.rotating).toBe(true)
    // Single reads never show it either.
    const single = await (await call(env, admin, `/v1/api-keys/${a.id}`)).text()
    expect(single).not.toContain(a.key)
    expect(single).not.toContain(hashKey(a.key))
  })

  test("another workspace's keys are not listed and are 404 on every route", async () => {
    const other = await bootstrapAccount(env.rt, 'Other Manage')
    const theirs = await createKey(env, other.apiKey.key, { name: 'theirs' })
    const ids = (await expectOk(await call(env, admin, '/v1/api-keys'))).map((k: { id: string }) => k.id)
    expect(ids).not.toContain(theirs.id)
    await expectError(await call(env, admin, `/v1/api-keys/${theirs.id}`), 404, 'not_found')
    await expectError(await patch(theirs.id, { name: 'mine now' }), 404, 'not_found')
    for (const verb of ['pause', 'resume', 'revoke', 'rotate']) await expectError(await action(theirs.id, verb, {}), 404, 'not_found')
    await expectError(await call(env, admin, '/v1/api-keys/key_doesnotexist'), 404, 'not_found')
    // Untouched.
    const still = await get(theirs.id, other.apiKey.key)
    expect(still).toMatchObject({ name: 'theirs', pausedAt: null, revokedAt: null, rotating: false })
    expect(await outcome(await me(theirs.key))).toBe('ok')
  })
})

describe('modes: a test key works in the sandbox', () => {
  test("lists show the caller's mode unless mode asks for test or all; a test key may only list test keys", async () => {
    const live = await createKey(env, admin, { name: 'live one' })
    const sandbox = await createKey(env, admin, { name: 'sandbox one', mode: 'test' })
    const ids = async (key: string, query = '') =>
      (await expectOk(await call(env, key, `/v1/api-keys${query}`))).map((k: { id: string; mode: string }) => `${k.mode} ${k.id}`)
    const liveList = await ids(admin)
    expect(liveList).toContain(`live ${live.id}`)
    expect(liveList).not.toContain(`test ${sandbox.id}`)
    expect(liveList.every((e: string) => e.startsWith('live '))).toBe(true)
    expect(await ids(admin, '?mode=live')).toEqual(liveList)
    const testList = await ids(admin, '?mode=test')
    expect(testList).toContain(`test ${sandbox.id}`)
    expect(testList.every((e: string) => e.startsWith('test '))).toBe(true)
    expect((await ids(admin, '?mode=all')).sort()).toEqual([...liveList, ...testList].sort())

    // The test key's own list: test keys only, by default and with mode=test.
    expect(await ids(sandbox.key)).toEqual(testList)
    expect(await ids(sandbox.key, '?mode=test')).toEqual(testList)
    for (const mode of ['live', 'all']) {
      const json = await expectError(await call(env, sandbox.key, `/v1/api-keys?mode=${mode}`), 403, 'forbidden')
      expect(json.error.message).toContain('mode=test')
      expect(json.error.message).toContain(`mode=${mode} needs a live key`)
      expect(json.error.details).toEqual({ mode, keyMode: 'test' })
    }
    await expectError(await call(env, admin, '/v1/api-keys?mode=sandbox'), 400, 'validation_failed')
  })

  test('a live key still reads and changes a test key by id', async () => {
    const sandbox = await createKey(env, admin, { mode: 'test' })
    expect(await get(sandbox.id)).toMatchObject({ id: sandbox.id, mode: 'test' })
    expect(await expectOk(await patch(sandbox.id, { name: 'renamed' }))).toMatchObject({ name: 'renamed', mode: 'test' })
    expect(await expectOk(await action(sandbox.id, 'pause'))).toMatchObject({ pausedReason: null, mode: 'test' })
  })
})

describe('PATCH /v1/api-keys/{id}', () => {
  test('each settable field changes alone, and takes effect', async () => {
    const k = await createKey(env, admin, { name: 'before', permissions: ['links:read'] })
    const expiresAt = iso(clock.now() + 86_400_000)
    const steps: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ name: 'after' }, { name: 'after' }],
      [{ permissions: ['links:read', 'api_keys:read'] }, { permissions: ['links:read', 'api_keys:read'] }],
      [{ allowedIps: ['198.51.100.0/24'] }, { allowedIps: ['198.51.100.0/24'] }],
      [{ scopeFilters: { domains: ['Short.Example'] } }, { scopeFilters: { domains: ['short.example'] } }],
      [
        { schedule: { timezone: 'Asia/Tokyo', days: [2], startMinute: 60, endMinute: 120 } },
        { schedule: { timezone: 'Asia/Tokyo', days: [2], startMinute: 60, endMinute: 120 } },
      ],
      [{ monthlyCallCap: 50 }, { monthlyCallCap: 50 }],
      [{ rateLimitOverride: 7 }, { rateLimitOverride: 7 }],
      [{ expiresAt }, { expiresAt }],
    ]
    let expected = await get(k.id)
    for (const [json, change] of steps) {
      const res = await expectOk(await patch(k.id, json))
      expected = { ...expected, ...change }
      expect(res).toEqual(expected)
      expect(await get(k.id)).toEqual(expected)
    }
    // The key now lives by its new settings: wrong address, then (from a right one) outside its schedule.
    expect(await outcome(await me(k.key, '192.0.2.1'))).toBe('ip_not_allowed')
    expect(await outcome(await me(k.key, '198.51.100.1'))).toBe('outside_schedule')
  })

  test('null clears every nullable setting; [] clears allowedIps', async () => {
    const k = await createKey(env, admin, {
      allowedIps: ['192.0.2.0/24'],
      scopeFilters: { tags: ['x'] },
      schedule: { timezone: 'UTC', days: [0], startMinute: 0, endMinute: 1 },
      monthlyCallCap: 1,
      rateLimitOverride: 1,
      expiresAt: iso(clock.now() + 60_000),
    })
    expect(await outcome(await me(k.key, '198.51.100.1'))).toBe('ip_not_allowed')
    for (const field of ['scopeFilters', 'schedule', 'monthlyCallCap', 'rateLimitOverride', 'expiresAt']) {
      const res = await expectOk(await patch(k.id, { [field]: null }))
      expect(res[field]).toBeNull()
    }
    const cleared = await expectOk(await patch(k.id, { allowedIps: [] }))
    expect(cleared).toMatchObject({ allowedIps: [], scopeFilters: null, schedule: null, monthlyCallCap: null, rateLimitOverride: null, expiresAt: null })
    // Now unrestricted: any address, any time, past the old expiry, past the old cap and rate.
    clock.advance(120_000)
    for (const ip of ['198.51.100.1', '2001:db8::1', '192.0.2.1']) expect(await outcome(await me(k.key, ip))).toBe('ok')
  })

  test('the same validation as on create; an empty or unknown body is refused', async () => {
    const k = await createKey(env, admin, {})
    await expectInvalid(await patch(k.id, { allowedIps: ['192.0.2.0/40'] }), 'allowedIps.0')
    await expectInvalid(await patch(k.id, { schedule: { timezone: 'Nowhere/Land', days: [1], startMinute: 0, endMinute: 60 } }), 'schedule.timezone')
    await expectInvalid(await patch(k.id, { scopeFilters: {} }), 'scopeFilters')
    await expectInvalid(await patch(k.id, { name: ' ' }), 'name')
    await expectInvalid(await patch(k.id, { mode: 'test' }), 'mode')
    await expectError(await patch(k.id, {}), 400, 'validation_failed')
    // Nothing changed.
    expect(await get(k.id)).toMatchObject({ allowedIps: [], schedule: null, scopeFilters: null, name: 'k', mode: 'live' })
  })
})

describe('pause and resume', () => {
  test('pause {reason} sets pausedAt and pausedReason; the key gets 403 key_paused; resume clears both', async () => {
    const k = await createKey(env, admin, {})
    const paused = await expectOk(await action(k.id, 'pause', { reason: '  suspicious traffic ' }))
    expect(paused).toMatchObject({ pausedAt: iso(clock.now()), pausedReason: 'suspicious traffic', revokedAt: null })
    expect(await get(k.id)).toMatchObject({ pausedAt: iso(clock.now()), pausedReason: 'suspicious traffic' })
    const json = await expectError(await me(k.key), 403, 'key_paused')
    expect(json.error.message).toContain('suspicious traffic')
    // Pausing again keeps the first pause.
    clock.advance(5_000)
    expect(await expectOk(await action(k.id, 'pause', { reason: 'other' }))).toMatchObject({ pausedAt: paused.pausedAt, pausedReason: 'suspicious traffic' })
    const resumed = await expectOk(await action(k.id, 'resume'))
    expect(resumed).toMatchObject({ pausedAt: null, pausedReason: null })
    expect(await outcome(await me(k.key))).toBe('ok')
    // Resuming an active key is a no-op; pausing without a body has no reason.
    expect(await expectOk(await action(k.id, 'resume'))).toMatchObject({ pausedAt: null })
    expect(await expectOk(await action(k.id, 'pause'))).toMatchObject({ pausedAt: iso(clock.now()), pausedReason: null })
    expect(await outcome(await me(k.key))).toBe('key_paused')
  })

  test('a paused key can still be managed by another key, and a key may pause itself', async () => {
    const k = await createKey(env, admin, { permissions: ['api_keys:read', 'api_keys:write'] })
    await expectOk(await action(k.id, 'pause', { reason: 'self' }, k.key))
    await expectError(await action(k.id, 'resume', undefined, k.key), 403, 'key_paused')
    await expectOk(await patch(k.id, { name: 'renamed while paused' }))
    await expectOk(await action(k.id, 'resume'))
    expect(await get(k.id, k.key)).toMatchObject({ name: 'renamed while paused', pausedAt: null })
  })
})

describe('the bodies of pause, resume, revoke and rotate', () => {
  const raw = (id: string, verb: string, text: string) =>
    env.request(`/v1/api-keys/${id}/${verb}`, { method: 'POST', key: admin, headers: { 'content-type': 'application/json' }, body: text })

  test("are optional; one that is sent must be an object of the action's own fields", async () => {
    for (const verb of ['pause', 'resume', 'revoke', 'rotate']) {
      const k = await createKey(env, admin, {})
      for (const text of ['"x"', '[]', '5', 'null', 'true']) await expectError(await raw(k.id, verb, text), 400, 'validation_failed')
      await expectError(await action(k.id, verb, { unknown: 1 }), 400, 'validation_failed')
      // Nothing happened so far.
      expect(await get(k.id)).toMatchObject({ pausedAt: null, revokedAt: null, rotating: false })
      expect((await action(k.id, verb, {})).status).toBe(200)
      expect((await action(k.id, verb)).status).toBe(200)
    }
  })

  test('the document marks them optional objects', async () => {
    const doc = await body(await env.request('/v1/openapi.json'))
    for (const verb of ['pause', 'resume', 'revoke', 'rotate']) {
      const requestBody = doc.paths[`/api-keys/{id}/${verb}`].post.requestBody
      expect({ verb, required: requestBody.required }).toEqual({ verb, required: false })
      expect(requestBody.content['application/json'].schema).toMatchObject({ type: 'object', additionalProperties: false })
    }
  })
})

describe('revoke', () => {
  test('revoke {reason} is final: 401 from then on; resume, rotate, patch and pause are 409 conflict', async () => {
    const k = await createKey(env, admin, {})
    await expectOk(await action(k.id, 'pause', { reason: 'first paused' }))
    const revoked = await expectOk(await action(k.id, 'revoke', { reason: 'leaked in a log' }))
    expect(revoked).toMatchObject({ revokedAt: iso(clock.now()), revokedReason: 'leaked in a log' })
    const json = await expectError(await me(k.key), 401, 'unauthorized')
    expect(json.error.message).toContain('revoked')
    await expectError(await action(k.id, 'resume'), 409, 'conflict')
    await expectError(await action(k.id, 'rotate', {}), 409, 'conflict')
    await expectError(await action(k.id, 'pause', {}), 409, 'conflict')
    await expectError(await patch(k.id, { name: 'revived' }), 409, 'conflict')
    await expectError(await patch(k.id, { expiresAt: null }), 409, 'conflict')
    // Revoking again changes nothing.
    clock.advance(1_000)
    expect(await expectOk(await action(k.id, 'revoke', { reason: 'again' }))).toMatchObject({ revokedAt: revoked.revokedAt, revokedReason: 'leaked in a log' })
    expect(await get(k.id)).toMatchObject({ name: 'k', revokedAt: revoked.revokedAt })
    expect(await outcome(await me(k.key))).toBe('unauthorized')
  })

  test('revoking during a rotation grace stops both secrets', async () => {
    const k = await createKey(env, admin, {})
    const rotated = await expectOk(await action(k.id, 'rotate', {}))
    expect(await outcome(await me(k.key))).toBe('ok')
    await expectOk(await action(k.id, 'revoke'))
    expect(await outcome(await me(k.key))).toBe('unauthorized')
    expect(await outcome(await me(rotated.key))).toBe('unauthorized')
    expect(await get(k.id)).toMatchObject({ rotating: false, graceHoursRemaining: 0 })
  })
})

describe('rotate', () => {
  test('default grace 24 h: both secrets work, rotating with graceHoursRemaining; past the grace only the new one', async () => {
    const k = await createKey(env, admin, { name: 'rotating one' })
    const rotated = await expectOk(await action(k.id, 'rotate'))
    expect(Object.keys(rotated).sort()).toEqual([...API_KEY_FIELDS, 'key'].sort())
    expect(rotated.key).toMatch(/^lnk_live_[0-9A-Za-z]{32}$/)
    expect(rotated.key).not.toBe(k.key)
    expect(rotated).toMatchObject({
      id: k.id,
      name: 'rotating one',
      keyPrefix: rotated.key.slice(0, 12),
      rotating: true,
      graceHoursRemaining: 24,
      createdAt: k.createdAt,
    })
    expect(await outcome(await me(k.key))).toBe('ok')
    expect(await outcome(await me(rotated.key))).toBe('ok')
    // Both secrets are the same key.
    const viaOld = await expectOk(await me(k.key))
    const viaNew = await expectOk(await me(rotated.key))
    expect(viaOld.apiKey.id).toBe(k.id)
    expect(viaNew.apiKey.id).toBe(k.id)

    clock.advance(23 * 3_600_000 + 30 * 60_000)
    expect(await get(k.id)).toMatchObject({ rotating: true, graceHoursRemaining: 1 })
    expect(await outcome(await me(k.key))).toBe('ok')
    clock.advance(30 * 60_000 - 1)
    expect(await outcome(await me(k.key))).toBe('ok')
    clock.advance(1)
    expect(await expectError(await me(k.key), 401, 'unauthorized'))
    expect(await outcome(await me(rotated.key))).toBe('ok')
    expect(await get(k.id)).toMatchObject({ rotating: false, graceHoursRemaining: 0 })
  })

  test('{graceHours: 0} stops the old secret at once', async () => {
    const k = await createKey(env, admin, {})
    const rotated = await expectOk(await action(k.id, 'rotate', { graceHours: 0 }))
    expect(rotated).toMatchObject({ rotating: false, graceHoursRemaining: 0 })
    await expectError(await me(k.key), 401, 'unauthorized')
    expect(await outcome(await me(rotated.key))).toBe('ok')
  })

  test('a custom grace; graceHours is validated', async () => {
    const k = await createKey(env, admin, {})
    expect(await expectOk(await action(k.id, 'rotate', { graceHours: 3 }))).toMatchObject({ rotating: true, graceHoursRemaining: 3 })
    for (const graceHours of [-1, 721, 1.5, 'soon']) await expectInvalid(await action(k.id, 'rotate', { graceHours }), 'graceHours')
    await expectInvalid(await action(k.id, 'rotate', { grace: false }), 'grace')
  })

  test('rotating again during a grace ends the oldest secret; the second one gets the new grace', async () => {
    const k = await createKey(env, admin, {})
    const second = await expectOk(await action(k.id, 'rotate', {}))
    const third = await expectOk(await action(k.id, 'rotate', { graceHours: 2 }))
    expect(await outcome(await me(k.key))).toBe('unauthorized')
    expect(await outcome(await me(second.key))).toBe('ok')
    expect(await outcome(await me(third.key))).toBe('ok')
    expect(third).toMatchObject({ rotating: true, graceHoursRemaining: 2 })
    clock.advance(2 * 3_600_000)
    expect(await outcome(await me(second.key))).toBe('unauthorized')
    expect(await outcome(await me(third.key))).toBe('ok')
  })

  test('a paused key stays paused across a rotation, under both secrets', async () => {
    const k = await createKey(env, admin, {})
    await expectOk(await action(k.id, 'pause', { reason: 'hold' }))
    const rotated = await expectOk(await action(k.id, 'rotate', {}))
    expect(rotated.pausedReason).toBe('hold')
    expect(await outcome(await me(k.key))).toBe('key_paused')
    expect(await outcome(await me(rotated.key))).toBe('key_paused')
  })
})

describe('lastUsedAt and lastUsedIp', () => {
  test('reflect use: when and from where the key was last used', async () => {
    const k = await createKey(env, admin, {})
    expect(await get(k.id)).toMatchObject({ lastUsedAt: null, lastUsedIp: null })
    const first = clock.now()
    expect(await outcome(await me(k.key, '192.0.2.44'))).toBe('ok')
    expect(await get(k.id)).toMatchObject({ lastUsedAt: iso(first), lastUsedIp: '192.0.2.44' })
    // A minute later, from elsewhere (IPv6 this time).
    clock.advance(60_000)
    expect(await outcome(await me(k.key, '2001:db8::44'))).toBe('ok')
    expect(await get(k.id)).toMatchObject({ lastUsedAt: iso(first + 60_000), lastUsedIp: '2001:db8::44' })
    // Refused calls are not uses.
    await expectOk(await action(k.id, 'pause'))
    clock.advance(60_000)
    expect(await outcome(await me(k.key, '198.51.100.44'))).toBe('key_paused')
    expect(await get(k.id)).toMatchObject({ lastUsedAt: iso(first + 60_000), lastUsedIp: '2001:db8::44' })
  })

  test('reads are current even between the once-a-minute writes', async () => {
    const k = await createKey(env, admin, {})
    const first = clock.now()
    expect(await outcome(await me(k.key, '192.0.2.45'))).toBe('ok')
    clock.advance(10_000)
    expect(await outcome(await me(k.key, '198.51.100.45'))).toBe('ok')
    const view = await get(k.id)
    expect(view).toMatchObject({ lastUsedAt: iso(first + 10_000), lastUsedIp: '198.51.100.45' })
    const listed = (await expectOk(await call(env, admin, '/v1/api-keys'))).find((x: { id: string }) => x.id === k.id)
    expect(listed).toMatchObject({ lastUsedAt: iso(first + 10_000), lastUsedIp: '198.51.100.45' })
  })

  test('a mapped IPv4 client is recorded as its IPv4 address', async () => {
    const k = await createKey(env, admin, {})
    expect(await outcome(await me(k.key, '::ffff:192.0.2.46'))).toBe('ok')
    expect((await get(k.id)).lastUsedIp).toBe('192.0.2.46')
  })
})
