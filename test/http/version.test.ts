// Service-Version (contract section 2): dated versions, the current one answered, unknown ones refused.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { API_VERSIONS, CURRENT_VERSION } from '../../src/http/version'
import { conformance } from '../conformance'
import { body, bootstrapAccount, setup, type TestEnv } from '../helpers'

let env: TestEnv
let key: string
beforeAll(async () => {
  env = await setup()
  key = (await bootstrapAccount(env.rt)).apiKey.key
})
afterAll(() => env.cleanup())

test('without the header the current version is used and answered', async () => {
  const res = await env.request('/v1/me', { key })
  expect(res.status).toBe(200)
  expect(res.headers.get('service-version')).toBe(CURRENT_VERSION)
  expect(CURRENT_VERSION).toMatch(/^\d{4}-\d{2}-\d{2}$/)
})

test('a listed version is accepted and answered', async () => {
  for (const v of API_VERSIONS) {
    const res = await env.request('/v1/me', { key, headers: { 'service-version': v } })
    expect(res.status).toBe(200)
    expect(res.headers.get('service-version')).toBe(v)
  }
})

test('an unknown date or a malformed value is 400 unsupported_version, listing the versions', async () => {
  for (const v of ['2020-01-01', 'latest', '2026-13-45x']) {
    const res = await env.request('/v1/me', { key, headers: { 'service-version': v } })
    expect(res.status).toBe(400)
    const json = await body(res)
    expect(json.error.code).toBe('unsupported_version')
    expect(json.error.details.available).toEqual([...API_VERSIONS])
    expect(res.headers.get('service-version')).toBe(CURRENT_VERSION)
  }
})

test('the version is checked before authentication, on every /v1 route', async () => {
  const res = await env.request('/v1/api-keys', { headers: { 'service-version': '1999-01-01' } })
  expect(res.status).toBe(400)
  expect((await body(res)).error.code).toBe('unsupported_version')
})

test('routes outside /v1 ignore it', async () => {
  const res = await env.request('/healthz', { headers: { 'service-version': 'bogus' } })
  expect(res.status).toBe(200)
  expect(res.headers.get('service-version')).toBeNull()
})

test('an empty header is 400 like any value outside the enum the document states, on public routes too', async () => {
  const param = conformance().doc.components.parameters.ServiceVersion!
  expect(param.schema).toEqual({ type: 'string', enum: [...API_VERSIONS] })
  expect(param.schema.enum).not.toContain('')
  for (const path of ['/v1/me', '/v1/openapi.json', '/v1/templates']) {
    const res = await env.request(path, { key, headers: { 'service-version': '' } })
    expect(res.status).toBe(400)
    const json = await body(res)
    expect(json.error.code).toBe('unsupported_version')
    expect(json.error.message).toContain('Service-Version "" is empty')
    expect(json.error.details.available).toEqual(param.schema.enum)
  }
})
