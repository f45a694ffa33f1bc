// POST/GET /v1/api-keys: the secret shown once, no privilege escalation, test keys stay test.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { body, bootstrapAccount, makeKey, setup, type TestEnv } from '../helpers'

let env: TestEnv
let acct: Awaited<ReturnType<typeof bootstrapAccount>>
beforeAll(async () => {
  env = await setup()
  acct = await bootstrapAccount(env.rt)
})
afterAll(() => env.cleanup())

test('a new key works at once and its secret never appears again', async () => {
  const res = await env.request('/v1/api-keys', {
    method: 'POST',
    key: acct.apiKey.key,
    json: { name: 'deploy', permissions: ['links:read', 'api_keys:read'] },
  })
  expect(res.status).toBe(201)
  const created = (await body(res)).data
  expect(created.key).toMatch(/^lnk_live_[0-9A-Za-z]{32}$/)
  expect(created.keyPrefix).toBe(created.key.slice(0, 12))
  expect(created).toMatchObject({ name: 'deploy', mode: 'live', permissions: ['links:read', 'api_keys:read'], rotating: false, graceHoursRemaining: 0 })
  expect((await env.request('/v1/me', { key: created.key })).status).toBe(200)
  const list = await (await env.request('/v1/api-keys', { key: created.key })).text()
  expect(list).not.toContain(created.key)
  expect(JSON.parse(list).data.map((k: any) => k.id)).toContain(created.id)
})

test('a key cannot grant what it does not hold', async () => {
  const limited = await makeKey(env.rt, acct.workspace.slug, 'api_keys:write,links:read')
  for (const permissions of [['*'], ['links:write'], ['links:read', 'webhooks:write']]) {
    const res = await env.request('/v1/api-keys', { method: 'POST', key: limited.key, json: { name: 'x', permissions } })
    expect(res.status).toBe(403)
    expect((await body(res)).error.code).toBe('forbidden')
  }
  const ok = await env.request('/v1/api-keys', { method: 'POST', key: limited.key, json: { name: 'x', permissions: ['links:read'] } })
  expect(ok.status).toBe(201)
  // Omitted permissions inherit the caller's, never more.
  const inherited = await body(await env.request('/v1/api-keys', { method: 'POST', key: limited.key, json: { name: 'y' } }))
  expect(inherited.data.permissions).toEqual(['api_keys:write', 'links:read'])
})

test('a test key only makes test keys, and defaults to test', async () => {
  const testKey = await makeKey(env.rt, acct.workspace.slug, '*', 'test')
  const refused = await env.request('/v1/api-keys', { method: 'POST', key: testKey.key, json: { name: 'x', mode: 'live' } })
  expect(refused.status).toBe(403)
  const made = await body(await env.request('/v1/api-keys', { method: 'POST', key: testKey.key, json: { name: 'x' } }))
  expect(made.data.mode).toBe('test')
  expect(made.data.key).toMatch(/^lnk_test_/)
})

test('expiresAt must lie in the future', async () => {
  const res = await env.request('/v1/api-keys', { method: 'POST', key: acct.apiKey.key, json: { name: 'x', expiresAt: '2001-01-01T00:00:00.000Z' } })
  expect(res.status).toBe(400)
  expect((await body(res)).error.code).toBe('validation_failed')
  const future = new Date(Date.now() + 86_400_000).toISOString()
  const ok = await body(await env.request('/v1/api-keys', { method: 'POST', key: acct.apiKey.key, json: { name: 'x', expiresAt: future } }))
  expect(ok.data.expiresAt).toBe(future)
})
