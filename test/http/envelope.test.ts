// The envelope of spec 2.1 on every /v1 error path, X-Request-Id on every response, and request logs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createLogger } from '../../src/platform/log'
import { body, bootstrapAccount, rawRows, setup, type PgTestEnv, type TestEnv } from '../helpers'

let env: TestEnv
let key: string
const logLines: string[] = []

beforeAll(async () => {
  env = await setup({ log: createLogger('info', (line) => logLines.push(line)) })
  key = (await bootstrapAccount(env.rt)).apiKey.key
})
afterAll(() => env.cleanup())

function expectEnvelope(json: any, code: string) {
  expect(json.success).toBe(false)
  expect(json.error.code).toBe(code)
  expect(typeof json.error.message).toBe('string')
  expect(json.error.message.length).toBeGreaterThan(5)
  expect(json.data).toBeUndefined()
}

describe('error envelope', () => {
  test('unknown /v1 route is 404 not_found', async () => {
    const res = await env.request('/v1/no-such-thing', { key })
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toContain('application/json')
    expectEnvelope(await body(res), 'not_found')
  })

  test('wrong method is 405 method_not_allowed with Allow', async () => {
    const res = await env.request('/v1/me', { method: 'DELETE', key })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, HEAD')
    const json = await body(res)
    expectEnvelope(json, 'method_not_allowed')
    expect(json.error.details.allow).toEqual(['GET', 'HEAD'])
  })

  test('validation failure is 400 validation_failed with issues', async () => {
    const res = await env.request('/v1/api-keys', { method: 'POST', key, json: { name: '', permissions: ['nope'] } })
    expect(res.status).toBe(400)
    const json = await body(res)
    expectEnvelope(json, 'validation_failed')
    expect(json.error.details.location).toBe('body')
    const paths = json.error.details.issues.map((i: any) => i.path)
    expect(paths).toContain('name')
    expect(json.error.details.issues.every((i: any) => typeof i.message === 'string' && i.message)).toBe(true)
  })

  test('unknown body fields are refused, not ignored', async () => {
    const res = await env.request('/v1/api-keys', { method: 'POST', key, json: { name: 'x', colour: 'red' } })
    expect(res.status).toBe(400)
    expectEnvelope(await body(res), 'validation_failed')
  })

  test('malformed JSON is 400 invalid_request', async () => {
    const res = await env.request('/v1/api-keys', { method: 'POST', key, body: '{"name": ', headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(400)
    const json = await body(res)
    expectEnvelope(json, 'invalid_request')
    expect(json.error.message).toContain('Malformed JSON')
  })

  test('a body over the limit is 413 payload_too_large (Content-Length)', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(env.config.maxBodyBytes) })
    const res = await env.request('/v1/api-keys', { method: 'POST', key, body: big, headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(413)
    expectEnvelope(await body(res), 'payload_too_large')
  })

  test('a chunked body over the limit is 413 too', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
    let sent = 0
    const stream = new ReadableStream({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"'))
        if (sent > env.config.maxBodyBytes + chunk.length) {
          controller.enqueue(new TextEncoder().encode('"}'))
          controller.close()
          return
        }
        controller.enqueue(chunk)
        sent += chunk.length
      },
    })
    const req = new Request('http://localhost:8080/v1/api-keys', {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      duplex: 'half', // needed for streamed request bodies
    } as RequestInit)
    expect(req.headers.get('content-length')).toBeNull()
    const res = await env.app.handle(req)
    expect(res.status).toBe(413)
    expectEnvelope(await body(res), 'payload_too_large')
  })

  test('a crash is 500 internal_error naming the request id, and is logged', async () => {
    const crashEnv = await setup({ log: createLogger('error', (line) => logLines.push(line)) })
    const crashKey = (await bootstrapAccount(crashEnv.rt)).apiKey.key
    // Raw on purpose: a table taken away makes the request fail inside the database.
    await rawRows(crashEnv, 'DROP TABLE api_key_usage')
    const res = await crashEnv.request('/v1/me', { key: crashKey })
    await Bun.sleep(5)
    expect(res.status).toBe(500)
    const json = await body(res)
    expectEnvelope(json, 'internal_error')
    const id = res.headers.get('x-request-id')!
    expect(json.error.message).toContain(id)
    expect(json.error.message).not.toContain('api_key_usage')
    expect(logLines.some((l) => l.includes('unhandled error') && l.includes(id) && l.includes('api_key_usage'))).toBe(true)
    await crashEnv.cleanup()
  })
})

describe('request ids and logs', () => {
  test('every response carries X-Request-Id, success and error alike, outside /v1 too', async () => {
    const responses = [await env.request('/v1/me', { key }), await env.request('/v1/me'), await env.request('/healthz'), await env.request('/nowhere')]
    const ids = responses.map((r) => r.headers.get('x-request-id'))
    for (const id of ids) expect(id).toMatch(/^req_[0-9A-Za-z]{20}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  test('a sane incoming X-Request-Id is kept; a hostile one is replaced', async () => {
    const kept = await env.request('/v1/me', { key, headers: { 'x-request-id': 'trace-123.abc' } })
    expect(kept.headers.get('x-request-id')).toBe('trace-123.abc')
    const replaced = await env.request('/v1/me', { key, headers: { 'x-request-id': 'bad id\twith "quotes"' } })
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/)
  })

  test('one log line per request with method, path, status, ms and request id', async () => {
    logLines.length = 0
    const res = await env.request('/v1/me', { method: 'DELETE', key })
    await Bun.sleep(5) // Elysia runs after-response hooks once the response is handed over
    const id = res.headers.get('x-request-id')!
    const line = logLines.find((l) => l.includes(`request_id=${id}`))
    expect(line).toBeDefined()
    expect(line).toMatch(/ info request method=DELETE path=\/v1\/me status=405 ms=\d+(\.\d)? request_id=/)
  })

  test('metrics count requests by route pattern and status', async () => {
    await env.request('/v1/me', { key })
    await Bun.sleep(5)
    const text = await (await env.request('/metrics')).text()
    expect(text).toMatch(/lnk_http_requests_total\{method="GET",route="\/v1\/me",status="200"\} \d+/)
    expect(text).toMatch(/lnk_http_requests_total\{method="DELETE",route="unmatched",status="405"\} \d+/)
    expect(text).toContain('lnk_http_request_duration_seconds_bucket{method="GET",route="/v1/me",le="+Inf"}')
    expect(text).toMatch(/\nlnk_jobs_due \d+\n/)
  })
})

describe('operations endpoints', () => {
  test('/healthz and /readyz answer; /readyz is 503 when the database is gone', async () => {
    expect(await body(await env.request('/healthz'))).toEqual({ status: 'ok' })
    expect(await body(await env.request('/readyz'))).toEqual({ status: 'ready' })
    const other = await setup()
    // Its connections closed under it, on either engine (on PostgreSQL the pool's, at once).
    if (other.rt.store.engine === 'pg') await other.rt.store.sql.close({ timeout: 0 })
    else other.rt.db.close()
    const res = await other.request('/readyz')
    expect(res.status).toBe(503)
    expect((await body(res)).status).toBe('unavailable')
    // On PostgreSQL the runtime's close fails on the closed pool; what setup made still goes.
    await other.cleanup().catch(() => (other as PgTestEnv).database.drop())
  })
})
