// Idempotency-Key on POST (contract section 2), through POST /v1/api-keys.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { IDEMPOTENCY_TTL_MS } from '../../src/http/idempotency'
import { body, bootstrapAccount, setup, type TestEnv } from '../helpers'

const clock = new ManualClock(Date.UTC(2026, 10, 22, 9, 0, 0))
let env: TestEnv
let key: string
beforeAll(async () => {
  env = await setup({ clock })
  key = (await bootstrapAccount(env.rt)).apiKey.key
})
afterAll(() => env.cleanup())

const countKeys = async () => (await env.rt.modules.identity.repo.listKeys()).length
const create = (idem: string | null, json: unknown, k = key) =>
  env.request('/v1/api-keys', { method: 'POST', key: k, json, headers: idem ? { 'idempotency-key': idem } : {} })

test('the same key and body replays the stored answer without doing the work again', async () => {
  const before = await countKeys()
  const first = await create('create-1', { name: 'ci', permissions: ['links:read'] })
  expect(first.status).toBe(201)
  expect(first.headers.get('idempotent-replayed')).toBeNull()
  const firstJson = await body(first)
  const again = await create('create-1', { permissions: ['links:read'], name: 'ci' })
  expect(again.status).toBe(201)
  expect(again.headers.get('idempotent-replayed')).toBe('true')
  expect(await body(again)).toEqual(firstJson)
  expect(await countKeys()).toBe(before + 1)
})

test('the same key with another body is 409 conflict', async () => {
  await create('create-2', { name: 'a' })
  const res = await create('create-2', { name: 'b' })
  expect(res.status).toBe(409)
  expect((await body(res)).error.code).toBe('conflict')
})

test('without the header every POST does the work', async () => {
  const before = await countKeys()
  await create(null, { name: 'x' })
  await create(null, { name: 'x' })
  expect(await countKeys()).toBe(before + 2)
})

test('failed requests are not stored: the same key may be retried', async () => {
  const bad = await create('create-3', { name: 'x', permissions: [] })
  expect(bad.status).toBe(400)
  const good = await create('create-3', { name: 'x' })
  expect(good.status).toBe(201)
  expect(good.headers.get('idempotent-replayed')).toBeNull()
})

test('keys are scoped per API key', async () => {
  const other = (await bootstrapAccount(env.rt)).apiKey.key
  const a = await create('shared', { name: 'same' })
  const b = await create('shared', { name: 'same' }, other)
  expect(b.headers.get('idempotent-replayed')).toBeNull()
  expect((await body(a)).data.id).not.toBe((await body(b)).data.id)
})

test('after 24 hours the key is free again', async () => {
  const first = await body(await create('create-4', { name: 'x' }))
  clock.advance(IDEMPOTENCY_TTL_MS + 1)
  const later = await create('create-4', { name: 'x' })
  expect(later.headers.get('idempotent-replayed')).toBeNull()
  expect((await body(later)).data.id).not.toBe(first.data.id)
})

test('a concurrent duplicate while the first is in flight is 409, never a second execution', async () => {
  const before = await countKeys()
  const results = await Promise.all(Array.from({ length: 5 }, () => create('burst', { name: 'burst' })))
  const statuses = results.map((r) => r.status).sort()
  expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1)
  expect(statuses.every((s) => s === 201 || s === 409)).toBe(true)
  expect(await countKeys()).toBe(before + 1)
})

test('a malformed Idempotency-Key is 400', async () => {
  const res = await create('has space', { name: 'x' })
  expect(res.status).toBe(400)
  expect((await body(res)).error.code).toBe('invalid_request')
})
