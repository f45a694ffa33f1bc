// Which host a slug path is answered on: the short hosts (the shared pool here; custom domains, a live set,
// in custom-domains.test.ts), the API host (its own paths and 404s stay the API's), and any other host,
// which gets the same HTML 404 page an unknown slug gets, never the API's JSON.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { TestEnv } from '../helpers'
import { account, redirectEnv, UA, type Api } from './_redirect'

const onHost = (env: TestEnv, host: string, path: string, init: RequestInit = {}) =>
  env.app.handle(new Request(`http://${host}${path}`, { redirect: 'manual', ...init, headers: { 'user-agent': UA.chrome, ...init.headers } }))

async function expectNotFoundPage(res: Response) {
  expect(res.status).toBe(404)
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
  expect(res.headers.get('location')).toBeNull()
  expect(await res.text()).toContain('<h1>Link not found</h1>')
}

describe('a host that is neither a short host nor the API host', () => {
  let env: TestEnv
  let api: Api
  beforeAll(async () => {
    env = await redirectEnv()
    api = await account(env)
  })
  afterAll(() => env.cleanup())

  test('a slug path gets the HTML 404 page, even the slug of a link that exists on a short host', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/on-the-short-host' })
    for (const path of ['/no-such-slug', `/${link.slug}`, `/${link.slug}+`]) {
      await expectNotFoundPage(await onHost(env, 'unknown.example', path))
    }
    await expectNotFoundPage(
      await onHost(env, 'unknown.example', `/${link.slug}`, {
        method: 'POST',
        body: 'gate=consent',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
    )
    const head = await onHost(env, 'unknown.example', `/${link.slug}`, { method: 'HEAD' })
    expect({ status: head.status, type: head.headers.get('content-type') }).toEqual({ status: 404, type: 'text/html; charset=utf-8' })
    // The same request on the short host is the link's redirect.
    expect((await onHost(env, 'localhost:8080', `/${link.slug}`)).headers.get('location')).toBe('https://example.com/on-the-short-host')
  })

  test("the API's own paths still reach the API on any host", async () => {
    const health = await onHost(env, 'unknown.example', '/healthz')
    expect(health.status).toBe(200)
    expect(health.headers.get('content-type')).toContain('application/json')
    const me = await onHost(env, 'unknown.example', '/v1/me')
    expect(me.status).toBe(401)
    expect(me.headers.get('content-type')).toContain('application/json')
    const listed = await onHost(env, 'unknown.example', '/v1/links', { headers: { authorization: `Bearer ${api.key}` } })
    expect(listed.status).toBe(200)
  })
})

describe('an API host that is not a short host', () => {
  let env: TestEnv
  let api: Api
  beforeAll(async () => {
    env = await redirectEnv({ env: { LNK_SHORT_DOMAINS: 'go.example' } })
    api = await account(env)
  })
  afterAll(() => env.cleanup())

  test("slug paths on the API host are the API's (JSON 404); on the short host, links; elsewhere, the page", async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/go' })
    expect(link.domain).toBe('go.example')
    const onApi = await onHost(env, 'localhost:8080', `/${link.slug}`)
    expect(onApi.status).toBe(404)
    expect(onApi.headers.get('content-type')).toContain('application/json')
    expect((await onHost(env, 'go.example', `/${link.slug}`)).headers.get('location')).toBe('https://example.com/go')
    await expectNotFoundPage(await onHost(env, 'other.example', `/${link.slug}`))
  })
})
