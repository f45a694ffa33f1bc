// Short links on a workspace's custom domain: found by the hostname whatever port or trailing dot the proxy
// passes, kept apart from the shared pool's and other domains' links, and the domain owner's fallbacks for
// `/`, unknown slugs and used-up links with {DOMAIN} and {ORIGINAL_PATH} filled in. Also: the loopback
// aliases of a `localhost` pool, dropping a domain's cached links on `domain.changed`, and the proxied-TLS
// evidence (sawHttps) a local Caddy gives.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { recordSocketAddress } from '../../src/http/request-context'
import type { ServedDomain } from '../../src/modules/domains/served'
import { ManualClock } from '../../src/platform/clock'
import type { TestEnv } from '../helpers'
import { account, nextIp, redirectEnv, UA, type Api } from './_redirect'

const DOMAIN = 'go.customer.test'

function onHost(env: TestEnv, host: string, path: string, init: RequestInit & { peer?: string } = {}) {
  const request = new Request(`http://${host}${path}`, {
    redirect: 'manual',
    ...init,
    headers: { 'user-agent': UA.chrome, 'x-forwarded-for': nextIp(), ...init.headers },
  })
  if (init.peer) recordSocketAddress(request, init.peer)
  return env.app.handle(request)
}

function serve(env: TestEnv, api: Api, domain: string, urls: Partial<Pick<ServedDomain, 'rootRedirectUrl' | 'notFoundUrl' | 'expiredUrl'>> = {}) {
  env.rt.modules.domains.served.set({
    id: `dom_${domain}`,
    domain,
    workspaceId: api.workspaceId,
    rootRedirectUrl: null,
    notFoundUrl: null,
    expiredUrl: null,
    acceptsNewLinks: true,
    ...urls,
  })
}

async function expectPage(res: Response, status: number, heading: string) {
  expect({ status: res.status, type: res.headers.get('content-type'), location: res.headers.get('location') }).toEqual({
    status,
    type: 'text/html; charset=utf-8',
    location: null,
  })
  expect(await res.text()).toContain(heading)
}

const NOT_FOUND = '<h1>Link not found</h1>'

function expectFallback(res: Response, status: number, location: string) {
  expect({ status: res.status, location: res.headers.get('location'), cache: res.headers.get('cache-control') }).toEqual({
    status,
    location,
    cache: 'private, no-store',
  })
}

describe('links on a custom domain', () => {
  let env: TestEnv
  let api: Api
  const clock = new ManualClock(Date.UTC(2026, 2, 1))
  beforeAll(async () => {
    env = await redirectEnv({ clock })
    api = await account(env)
    serve(env, api, DOMAIN)
    serve(env, api, 'other.customer.test', { notFoundUrl: 'https://other.customer.test.example/missing' })
  })
  afterAll(() => env.cleanup())

  test('answer on the hostname, with any port, a trailing dot or upper case as a proxy passes it', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/custom', domain: DOMAIN })
    expect(link.domain).toBe(DOMAIN)
    expect(link.shortUrl).toBe(`http://${DOMAIN}/${link.slug}`)
    for (const host of [DOMAIN, `${DOMAIN}:8443`, `${DOMAIN}.`, `${DOMAIN}.:8443`, 'GO.Customer.TEST']) {
      const res = await onHost(env, host, `/${link.slug}`)
      expect({ host, status: res.status, location: res.headers.get('location') }).toEqual({ host, status: 302, location: 'https://example.com/custom' })
    }
    // The Host header counts, not the URL's (a proxy may pass its own address in the request line).
    const proxied = await onHost(env, '127.0.0.1:8080', `/${link.slug}`, { headers: { host: `${DOMAIN}:443` } })
    expect(proxied.headers.get('location')).toBe('https://example.com/custom')
  })

  test('a custom domain link answers nowhere else, and shared-pool links not on the custom domain', async () => {
    const custom = await api.make({ destinationUrl: 'https://example.com/only-custom', domain: DOMAIN })
    const shared = await api.make({ destinationUrl: 'https://example.com/only-shared' })
    await expectPage(await onHost(env, 'localhost:8080', `/${custom.slug}`), 404, NOT_FOUND)
    // On another custom domain it is that domain's unknown slug: its own notFoundUrl.
    expectFallback(await onHost(env, 'other.customer.test', `/${custom.slug}`), 302, 'https://other.customer.test.example/missing')
    await expectPage(await onHost(env, DOMAIN, `/${shared.slug}`), 404, NOT_FOUND)
    expect((await onHost(env, 'localhost:8080', `/${shared.slug}`)).headers.get('location')).toBe('https://example.com/only-shared')
  })

  test('the public stats page works as on the shared pool', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/stats', domain: DOMAIN, publicStatsEnabled: true, title: 'Custom stats' })
    const res = await onHost(env, DOMAIN, `/${link.slug}+`)
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain(`http://${DOMAIN}/${link.slug}`)
    expect(html).toContain('Custom stats')
    const hidden = await api.make({ domain: DOMAIN })
    await expectPage(await onHost(env, DOMAIN, `/${hidden.slug}+`), 404, NOT_FOUND)
  })

  test('without fallback URLs: the domain page at /, the 404 page for unknown slugs and other paths, 410 for used-up links', async () => {
    const root = await onHost(env, DOMAIN, '/')
    await expectPage(root, 200, `<h1>${DOMAIN}</h1>`)
    expect(root.headers.get('content-security-policy')).toContain("default-src 'none'")
    await expectPage(await onHost(env, `${DOMAIN}:8443`, '/?utm=x'), 200, `<h1>${DOMAIN}</h1>`)
    for (const path of ['/no-such-slug', '/no-such-slug+', '/deep/path', '/p', '/qr/abc', '/favicon.ico', '/robots.txt']) {
      await expectPage(await onHost(env, DOMAIN, path), 404, NOT_FOUND)
    }
    const inactive = await api.make({ domain: DOMAIN })
    expect((await api.patch(inactive.id, { isActive: false })).status).toBe(200)
    await expectPage(await onHost(env, DOMAIN, `/${inactive.slug}`), 404, NOT_FOUND)

    const limited = await api.make({ domain: DOMAIN, clickLimit: 1 })
    expect((await onHost(env, DOMAIN, `/${limited.slug}`)).status).toBe(302)
    await expectPage(await onHost(env, DOMAIN, `/${limited.slug}`), 410, 'This link has reached its click limit.')
    const expiring = await api.make({ domain: DOMAIN, expiresAt: new Date(clock.now() + 60_000).toISOString() })
    clock.advance(120_000)
    await expectPage(await onHost(env, DOMAIN, `/${expiring.slug}`), 410, 'This link has expired.')
  })

  test("the service's own paths stay the API's on a custom domain", async () => {
    const health = await onHost(env, DOMAIN, '/healthz')
    expect({ status: health.status, type: health.headers.get('content-type') }).toEqual({ status: 200, type: expect.stringContaining('application/json') })
    const me = await onHost(env, DOMAIN, '/v1/me')
    expect({ status: me.status, type: me.headers.get('content-type') }).toEqual({ status: 401, type: expect.stringContaining('application/json') })
    expect((await onHost(env, DOMAIN, '/v1/links', { headers: { authorization: `Bearer ${api.key}` } })).status).toBe(200)
    for (const path of ['/.well-known/lnk/some-token', '/internal/tls/ask?domain=x', '/readyz', '/metrics']) {
      expect(env.rt.modules.redirect.handle(new Request(`http://${DOMAIN}${path}`))).toBeNull()
    }
    // A method no page answers: the 404 page, not a redirect.
    await expectPage(await onHost(env, DOMAIN, '/anything', { method: 'DELETE' }), 404, NOT_FOUND)
  })

  test('a domain no longer served stops answering at once; served again, it answers', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/live-set', domain: DOMAIN })
    const served = env.rt.modules.domains.served
    const kept = served.get(DOMAIN)!
    served.delete(DOMAIN)
    try {
      await expectPage(await onHost(env, DOMAIN, `/${link.slug}`), 404, NOT_FOUND)
      // Not a custom domain any more: its other paths are the API's again.
      expect((await onHost(env, DOMAIN, '/')).headers.get('content-type')).toContain('application/json')
    } finally {
      served.set(kept)
    }
    expect((await onHost(env, DOMAIN, `/${link.slug}`)).headers.get('location')).toBe('https://example.com/live-set')
  })
})

describe("a custom domain's fallback URLs", () => {
  let env: TestEnv
  let api: Api
  beforeAll(async () => {
    env = await redirectEnv()
    api = await account(env)
    serve(env, api, DOMAIN, {
      rootRedirectUrl: 'https://www.customer.test/?from={DOMAIN}&path={ORIGINAL_PATH}',
      notFoundUrl: 'https://www.customer.test/missing/{ORIGINAL_PATH}?on={DOMAIN}',
      // As a URL parser stores it: the braces of the path escaped.
      expiredUrl: 'https://www.customer.test/gone/%7BORIGINAL_PATH%7D',
    })
  })
  afterAll(() => env.cleanup())

  test('/ → rootRedirectUrl (301), with {ORIGINAL_PATH} empty', async () => {
    expectFallback(await onHost(env, DOMAIN, '/'), 301, `https://www.customer.test/?from=${DOMAIN}&path=`)
    expectFallback(await onHost(env, `${DOMAIN}.:8443`, '/?q=1'), 301, `https://www.customer.test/?from=${DOMAIN}&path=`)
    expectFallback(await onHost(env, DOMAIN, '/', { method: 'HEAD' }), 301, `https://www.customer.test/?from=${DOMAIN}&path=`)
  })

  test('unknown slugs and other paths → notFoundUrl (302), the path percent-encoded but for its slashes', async () => {
    expectFallback(await onHost(env, DOMAIN, '/no-such-slug?x=1'), 302, `https://www.customer.test/missing/no-such-slug?on=${DOMAIN}`)
    expectFallback(await onHost(env, DOMAIN, '/no-such-slug+'), 302, `https://www.customer.test/missing/no-such-slug%2B?on=${DOMAIN}`)
    // Sent as a browser sends it (spaces and non-ASCII escaped); decoded once, encoded once: never twice.
    const odd = await onHost(env, DOMAIN, '/docs/a b/caf\u00e9/x&y=z/%3F')
    expectFallback(odd, 302, `https://www.customer.test/missing/docs/a%20b/caf%C3%A9/x%26y%3Dz/%3F?on=${DOMAIN}`)
    // Characters that could break out of the path: quoted, never a new host or scheme.
    expectFallback(await onHost(env, DOMAIN, '/@evil.example/%2F%2Fx'), 302, `https://www.customer.test/missing/%40evil.example///x?on=${DOMAIN}`)
    const inactive = await api.make({ domain: DOMAIN })
    await api.patch(inactive.id, { isActive: false })
    expectFallback(await onHost(env, DOMAIN, `/${inactive.slug}`), 302, `https://www.customer.test/missing/${inactive.slug}?on=${DOMAIN}`)
    expectFallback(
      await onHost(env, DOMAIN, `/${inactive.slug}`, {
        method: 'POST',
        body: 'gate=consent',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      302,
      `https://www.customer.test/missing/${inactive.slug}?on=${DOMAIN}`,
    )
  })

  test('used-up links → expiredUrl (302), unless the link has a fallbackUrl of its own', async () => {
    const limited = await api.make({ domain: DOMAIN, clickLimit: 1 })
    expect((await onHost(env, DOMAIN, `/${limited.slug}`)).status).toBe(302)
    expectFallback(await onHost(env, DOMAIN, `/${limited.slug}`), 302, `https://www.customer.test/gone/${limited.slug}`)
    const ipLimited = await api.make({ domain: DOMAIN, uniqueIpLimit: 1 })
    expect((await onHost(env, DOMAIN, `/${ipLimited.slug}`)).status).toBe(302)
    expectFallback(await onHost(env, DOMAIN, `/${ipLimited.slug}`), 302, `https://www.customer.test/gone/${ipLimited.slug}`)
    const own = await api.make({ domain: DOMAIN, clickLimit: 1, fallbackUrl: 'https://example.com/own-fallback' })
    await onHost(env, DOMAIN, `/${own.slug}`)
    const res = await onHost(env, DOMAIN, `/${own.slug}`)
    expect({ status: res.status, location: res.headers.get('location') }).toEqual({ status: 302, location: 'https://example.com/own-fallback' })
  })

  test('the shared pool keeps its own pages', async () => {
    await expectPage(await onHost(env, 'localhost:8080', '/no-such-slug'), 404, NOT_FOUND)
    const limited = await api.make({ clickLimit: 1 })
    await onHost(env, 'localhost:8080', `/${limited.slug}`)
    await expectPage(await onHost(env, 'localhost:8080', `/${limited.slug}`), 410, 'This link has reached its click limit.')
  })
})

describe('domain.changed', () => {
  let env: TestEnv
  let api: Api
  beforeAll(async () => {
    env = await redirectEnv()
    api = await account(env)
    serve(env, api, DOMAIN)
  })
  afterAll(() => env.cleanup())

  test("drops every cached link of the domain, and only that domain's", async () => {
    const [a, b] = [
      await api.make({ domain: DOMAIN, destinationUrl: 'https://example.com/a' }),
      await api.make({ domain: DOMAIN, destinationUrl: 'https://example.com/b' }),
    ]
    const shared = await api.make({ destinationUrl: 'https://example.com/shared' })
    for (const [host, link] of [
      [DOMAIN, a],
      [DOMAIN, b],
      ['localhost:8080', shared],
    ] as const)
      expect((await onHost(env, host, `/${link.slug}`)).status).toBe(302)
    // Archived behind the cache's back, as the domains area archives a domain's links in its own transaction.
    const repo = env.rt.modules.links.repo
    const now = env.rt.clock.now()
    for (const link of [a, b, shared]) {
      await repo.update(
        link.id,
        { isActive: false, isArchived: true },
        (row) => ({ type: 'link.updated', workspaceId: row.workspaceId, mode: 'live', data: { id: row.id } }),
        now,
      )
    }
    // Still cached until told.
    expect((await onHost(env, DOMAIN, `/${a.slug}`)).status).toBe(302)
    env.rt.bus.emit('domain.changed', { domain: DOMAIN })
    for (const link of [a, b]) await expectPage(await onHost(env, DOMAIN, `/${link.slug}`), 404, NOT_FOUND)
    // Another domain's links stay as cached.
    expect((await onHost(env, 'localhost:8080', `/${shared.slug}`)).status).toBe(302)
  })
})

describe('loopback aliases of a localhost pool', () => {
  test('with the default configuration, 127.0.0.1:PORT and [::1]:PORT answer the short links of localhost:PORT', async () => {
    const env = await redirectEnv()
    try {
      const api = await account(env)
      const link = await api.make({ destinationUrl: 'https://example.com/alias' })
      expect(link.domain).toBe('localhost:8080')
      for (const host of ['127.0.0.1:8080', '[::1]:8080']) {
        const res = await onHost(env, host, `/${link.slug}`)
        expect({ host, status: res.status, location: res.headers.get('location') }).toEqual({ host, status: 302, location: 'https://example.com/alias' })
        await expectPage(await onHost(env, host, '/no-such-slug'), 404, NOT_FOUND)
      }
      // Another port is another host.
      await expectPage(await onHost(env, '127.0.0.1:9090', `/${link.slug}`), 404, NOT_FOUND)
    } finally {
      await env.cleanup()
    }
  })

  test('a localhost pool domain without a port: the bare loopback addresses', async () => {
    const env = await redirectEnv({ env: { LNK_BASE_URL: 'http://localhost' } })
    try {
      const api = await account(env)
      const link = await api.make({ destinationUrl: 'https://example.com/bare' })
      expect(link.domain).toBe('localhost')
      for (const host of ['127.0.0.1', '[::1]']) expect((await onHost(env, host, `/${link.slug}`)).headers.get('location')).toBe('https://example.com/bare')
    } finally {
      await env.cleanup()
    }
  })

  test('not when LNK_SHORT_DOMAINS names other hosts', async () => {
    const env = await redirectEnv({ env: { LNK_SHORT_DOMAINS: 'go.example' } })
    try {
      const api = await account(env)
      const link = await api.make({ destinationUrl: 'https://example.com/pool' })
      for (const host of ['127.0.0.1:8080', '[::1]:8080']) await expectPage(await onHost(env, host, `/${link.slug}`), 404, NOT_FOUND)
      expect((await onHost(env, 'go.example', `/${link.slug}`)).headers.get('location')).toBe('https://example.com/pool')
    } finally {
      await env.cleanup()
    }
  })
})

describe('sawHttps', () => {
  /** Runs `visits` against a served domain and answers the hostnames sawHttps was told. */
  async function seen(tlsMode: 'caddy' | 'external', visits: (env: TestEnv, slug: string) => Promise<unknown>) {
    const env = await redirectEnv({ env: { LNK_TLS_MODE: tlsMode } })
    try {
      const api = await account(env)
      serve(env, api, DOMAIN)
      const link = await api.make({ domain: DOMAIN })
      const served = env.rt.modules.domains.served
      const told: string[] = []
      const original = served.sawHttps.bind(served)
      served.sawHttps = (hostname: string) => {
        told.push(hostname)
        original(hostname)
      }
      await visits(env, link.slug)
      return told
    } finally {
      await env.cleanup()
    }
  }
  const https = { 'x-forwarded-proto': 'https' }

  test('caddy mode: a request on a served domain from a loopback peer with X-Forwarded-Proto https', async () => {
    const told = await seen('caddy', async (env, slug) => {
      await onHost(env, DOMAIN, `/${slug}`, { peer: '127.0.0.1', headers: https })
      await onHost(env, `${DOMAIN}:443`, '/', { peer: '::1', headers: https })
      await onHost(env, DOMAIN, '/no-such-slug', { peer: '::ffff:127.0.0.1', headers: https })
    })
    expect(told).toEqual([DOMAIN, DOMAIN, DOMAIN])
  })

  test('caddy mode: not from another peer, without the header, over plain HTTP, or on the shared pool', async () => {
    const told = await seen('caddy', async (env, slug) => {
      await onHost(env, DOMAIN, `/${slug}`, { peer: '203.0.113.9', headers: https })
      await onHost(env, DOMAIN, `/${slug}`, { headers: https })
      await onHost(env, DOMAIN, `/${slug}`, { peer: '127.0.0.1' })
      await onHost(env, DOMAIN, `/${slug}`, { peer: '127.0.0.1', headers: { 'x-forwarded-proto': 'http' } })
      await onHost(env, 'localhost:8080', '/no-such-slug', { peer: '127.0.0.1', headers: https })
      await onHost(env, 'unknown.example', '/no-such-slug', { peer: '127.0.0.1', headers: https })
    })
    expect(told).toEqual([])
  })

  test('external mode: never', async () => {
    const told = await seen('external', async (env, slug) => {
      await onHost(env, DOMAIN, `/${slug}`, { peer: '127.0.0.1', headers: https })
      await onHost(env, DOMAIN, '/', { peer: '127.0.0.1', headers: https })
    })
    expect(told).toEqual([])
  })
})
