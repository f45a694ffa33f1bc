// What an API fuzzer and a hostile client try, on every route the document lists (not only the ones a finding
// named): wrong methods on every path, fixed sub-paths that must not fall into {id} routes, bodies that are
// not objects, nested past reason or larger than the limit, and bodies in another encoding. Each must be a
// 4xx with the error envelope and a message that names what to change; never a 500, never an empty 413.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type RunningServer } from '../../src/server'
import { conformance } from '../conformance'
import { body, bootstrapAccount, setup, type TestEnv } from '../helpers'

const METHODS = ['get', 'put', 'post', 'delete', 'patch']
let env: TestEnv
let key: string
const doc = conformance().doc as any

beforeAll(async () => {
  env = await setup()
  key = (await bootstrapAccount(env.rt)).apiKey.key
})
afterAll(() => env.cleanup())

/** Every operation of the document under /v1, with its path as a request path (placeholders filled in). */
const apiPaths = Object.entries<any>(doc.paths)
  .filter(([, item]) => !item.servers)
  .map(([template, item]) => ({
    template,
    url: `/v1${template.replace(/\{[^}]+\}/g, 'x0')}`,
    methods: METHODS.filter((m) => item[m]),
  }))

const withBody = apiPaths.flatMap((p) =>
  p.methods.filter((m) => doc.paths[p.template][m].requestBody).map((method) => ({ ...p, method: method.toUpperCase() })),
)

function expectError(json: any, code: string) {
  expect(json.success).toBe(false)
  expect(json.error.code).toBe(code)
  expect(json.error.message.length).toBeGreaterThan(10)
}

describe('405 with Allow on every path, for every method it does not have', () => {
  test.each(apiPaths.map((p) => [p.template, p] as const))('%s', async (_, p) => {
    // The beacon also answers CORS preflights (OPTIONS), which the document leaves out.
    const preflight = p.template === '/conversions' ? ['OPTIONS'] : []
    const allowed = [...p.methods.map((m) => m.toUpperCase()), ...(p.methods.includes('get') ? ['HEAD'] : []), ...preflight].sort()
    for (const method of METHODS.filter((m) => !p.methods.includes(m))) {
      const res = await env.request(p.url, { method: method.toUpperCase(), key, json: method === 'get' ? undefined : {} })
      expect({ method, status: res.status, allow: res.headers.get('allow') }).toEqual({ method, status: 405, allow: allowed.join(', ') })
      expectError(await body(res), 'method_not_allowed')
    }
  })

  test('with or without a trailing slash (PUT /v1/links answered 404 before)', async () => {
    for (const url of ['/v1/links', '/v1/links/', '/v1/api-keys', '/v1/webhooks', '/v1/webhooks/']) {
      const res = await env.request(url, { method: 'PUT', key, json: {} })
      expect({ url, status: res.status }).toEqual({ url, status: 405 })
      expect(res.headers.get('allow')).toBe('GET, HEAD, POST')
    }
  })

  test('a fixed sub-path never falls into the {id} route beside it', async () => {
    for (const [url, methods, allow] of [
      ['/v1/links/bulk', ['GET', 'PUT', 'DELETE'], 'PATCH, POST'],
      ['/v1/links/upsert', ['GET', 'PATCH', 'DELETE'], 'PUT'],
    ] as const) {
      for (const method of methods) {
        const res = await env.request(url, { method, key, json: method === 'GET' ? undefined : {} })
        expect({ url, method, status: res.status, allow: res.headers.get('allow') }).toEqual({ url, method, status: 405, allow })
      }
    }
    for (const method of ['PATCH', 'DELETE']) {
      for (const url of ['/v1/webhooks/info', '/v1/webhooks/types']) {
        const res = await env.request(url, { method, key, json: {} })
        expect({ url, method, status: res.status, allow: res.headers.get('allow') }).toEqual({ url, method, status: 405, allow: 'GET, HEAD' })
      }
    }
  })
})

describe('bodies that are not a JSON object are 400 validation_failed on every route that takes one', () => {
  test.each(withBody.map((p) => [`${p.method} ${p.template}`, p] as const))('%s', async (_, p) => {
    for (const raw of ['"AAA"', '123', 'null', 'true', '[]', '[{"destinationUrl":"https://a.example"}]']) {
      const res = await env.request(p.url, { method: p.method, key, body: raw, headers: { 'content-type': 'application/json' } })
      const json = await body(res)
      expect({ raw, status: res.status, code: json.error?.code }).toEqual({ raw, status: 400, code: 'validation_failed' })
      expect(json.error.message).toContain('must be a JSON object')
    }
  })
})

describe('deep nesting is a 400, never a 500, on every route that takes a body', () => {
  let deep = '"x"'
  for (let i = 0; i < 10_000; i++) deep = `[${deep}]`
  test.each(withBody.map((p) => [`${p.method} ${p.template}`, p] as const))('%s', async (_, p) => {
    for (const raw of [`{"tags":${deep}}`, `{"events":${deep}}`, `{"a":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`]) {
      const res = await env.request(p.url, { method: p.method, key, body: raw, headers: { 'content-type': 'application/json' } })
      const json = await body(res)
      expect({ status: res.status, code: json.error?.code }).toEqual({ status: 400, code: 'validation_failed' })
      expect(json.error.message).toContain('nests deeper than')
    }
  })

  test('a body nested as deep as real ones are is still read', async () => {
    const res = await env.request('/v1/links', { method: 'POST', key, json: { destinationUrl: 'https://deep.example', tags: ['a', 'b'] } })
    expect(res.status).toBe(201)
  })
})

describe('bodies in another encoding are refused with a message naming JSON', () => {
  test.each([
    ['application/x-www-form-urlencoded', 'name=x'],
    ['multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--b--\r\n'],
    ['text/plain', '{"name":"x"}'],
    ['application/xml', '<name>x</name>'],
  ])('%s', async (type, raw) => {
    const res = await env.request('/v1/api-keys', { method: 'POST', key, body: raw, headers: { 'content-type': type } })
    const json = await body(res)
    expect(res.status).toBe(400)
    expectError(json, 'invalid_request')
    expect(json.error.message).toContain('application/json')
  })
})

describe('validation messages a person can act on', () => {
  test('a bad enum lists the allowed values by name', async () => {
    const card = await body(await env.request('/v1/links', { method: 'POST', key, json: { destinationUrl: 'https://a.example', twitterCard: 'big' } }))
    expect(card.error.details.issues).toEqual([{ path: 'twitterCard', message: 'must be one of: "summary", "summary_large_image", "player", null' }])
    const status = await body(await env.request('/v1/links', { method: 'POST', key, json: { destinationUrl: 'https://a.example', redirectStatus: '301' } }))
    expect(status.error.details.issues).toEqual([{ path: 'redirectStatus', message: 'must be one of: 301, 302, 307, 308' }])
    const permission = await body(await env.request('/v1/api-keys', { method: 'POST', key, json: { name: 'k', permissions: ['links:reed'] } }))
    const issue = permission.error.details.issues.find((i: any) => i.path === 'permissions.0')
    expect(issue.message).toStartWith('must be one of: "*", "links:read", "links:write"')
    expect(issue.message).not.toContain("'string'")
  })

  test('a query value out of range names its parameter', async () => {
    for (const [url, name] of [
      ['/v1/links?perPage=101', 'perPage'],
      ['/v1/links?page=0', 'page'],
      ['/v1/links?page=1&perPage=abc', 'perPage'],
      ['/v1/analytics/top-links?limit=500', 'limit'],
    ] as const) {
      const json = await body(await env.request(url, { key }))
      expect({ url, code: json.error.code, location: json.error.details.location, path: json.error.details.issues[0].path }).toEqual({
        url,
        code: 'validation_failed',
        location: 'query',
        path: name,
      })
      expect(json.error.message).toContain(name)
    }
  })
})

describe('oversized bodies through the real listener', () => {
  let server: RunningServer
  let live: TestEnv
  let liveKey: string
  beforeAll(async () => {
    live = await setup({ env: { LNK_PORT: '0', LNK_HOST: '127.0.0.1' } })
    liveKey = (await bootstrapAccount(live.rt)).apiKey.key
    server = startServer(live.rt)
  })
  afterAll(async () => {
    await server.shutdown('test over')
    await live.cleanup()
  })

  const big = JSON.stringify({ destinationUrl: 'https://a.example', title: 'x'.repeat(2 * 1024 * 1024) })
  for (const path of ['/v1/links', '/v1/links/bulk', '/v1/webhooks', '/v1/api-keys', '/v1/conversions']) {
    test(`2 MiB on POST ${path} is 413 payload_too_large with the envelope`, async () => {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
        body: big,
      })
      expect(res.status).toBe(413)
      await conformance().check('POST', `${server.url}${path}`, res)
      expectError(await res.json(), 'payload_too_large')
    })
  }

  test('a chunked body (no Content-Length) past the limit is cut off with the envelope too', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
    let sent = 0
    const stream = new ReadableStream({
      pull(controller) {
        // 64 MiB at most: far past the 1 MiB limit, bounded whatever the server does.
        if (sent++ >= 1024) controller.close()
        else controller.enqueue(chunk)
      },
    })
    const res = await fetch(`${server.url}/v1/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit)
    expect(res.status).toBe(413)
    expectError(await res.json(), 'payload_too_large')
    expect(sent).toBeLessThan(1024)
  })
})
