// The checker every test's responses go through (test/conformance.ts) must catch what a client would trip
// on; these cases show that it can fail.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { conformance } from '../conformance'
import { body, bootstrapAccount, setup, type TestEnv } from '../helpers'

const json = (status: number, value: unknown, type = 'application/json') => new Response(JSON.stringify(value), { status, headers: { 'content-type': type } })
let env: TestEnv
let link: Record<string, unknown>

beforeAll(async () => {
  env = await setup()
  const key = (await bootstrapAccount(env.rt)).apiKey.key
  link = (await body(await env.request('/v1/links', { method: 'POST', key, json: { destinationUrl: 'https://a.example/' } }))).data
})
afterAll(() => env.cleanup())

describe('the OpenAPI conformance check', () => {
  const check = (method: string, path: string, res: Response) => conformance().check(method, `http://localhost:8080${path}`, res)

  test('passes a body that matches the operation', async () => {
    await check('GET', '/v1/links/x', json(200, { success: true, data: link }))
    await check('GET', '/v1/no-such-route', json(404, { success: false, error: { code: 'not_found', message: 'No route' } }))
  })

  test('refuses a field of the wrong type, an unknown status, an undeclared media type and an error without the envelope', async () => {
    await expect(check('GET', '/v1/links/x', json(200, { success: true, data: { ...link, redirectStatus: '301' } }))).rejects.toThrow(/redirectStatus/)
    await expect(check('GET', '/v1/links/x', json(202, { success: true, data: link }))).rejects.toThrow(/status 202 is not among/)
    await expect(check('GET', '/v1/links/x', json(200, { success: true, data: link }, 'text/html'))).rejects.toThrow(/content type "text\/html"/)
    await expect(check('GET', '/v1/links/x', json(429, { error: 'slow down' }))).rejects.toThrow(/does not match/)
    await expect(check('GET', '/v1/links/x', json(200, { success: true, data: { ...link, createdAt: 'yesterday' } }))).rejects.toThrow(/date-time/)
  })

  test('a fixed path is matched before a templated one', async () => {
    // /links/bulk answers BulkResponse, not a Link: a Link-shaped body must fail there.
    await expect(check('POST', '/v1/links/bulk', json(200, { success: true, data: link }))).rejects.toThrow(/does not match/)
  })

  test('reads each path under its own server: the routes outside /v1 at the origin, the API under /v1', async () => {
    const c = conformance()
    expect(c.doc.paths['/healthz']!.servers).toEqual([{ url: 'http://localhost:8080' }])
    expect(c.find('/healthz')?.template).toBe('/healthz')
    expect(c.find('/.well-known/lnk/abc')?.template).toBe('/.well-known/lnk/{token}')
    expect(c.find('/v1/links/abc')?.template).toBe('/links/{id}')
    // Where a client that ignored the path's server would call: no operation there.
    expect(c.find('/v1/healthz')).toBeUndefined()
    expect(c.find('/v1/internal/tls/ask')).toBeUndefined()
    expect(c.find('/links/abc')).toBeUndefined()
    await expect(check('GET', '/healthz', json(200, { status: 'down' }))).rejects.toThrow(/does not match/)
    await check('GET', '/healthz', json(200, { status: 'ok' }))
    // /v1/healthz is the router's 404, which must be the envelope.
    await check('GET', '/v1/healthz', json(404, { success: false, error: { code: 'not_found', message: 'No route' } }))
    await expect(check('GET', '/v1/healthz', json(200, { status: 'ok' }))).rejects.toThrow(/no operation/)
  })

  test('leaves short links and pages alone', async () => {
    await check('GET', '/abc', new Response('<html></html>', { status: 404, headers: { 'content-type': 'text/html' } }))
  })
})
