// Custom domains through HTTP against a loopback DNS server: adding (normalisation, refusals), the records
// answered, verification and its throttle, DNS states, transient errors, fallbacks, deletion, permissions.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { body, makeKey } from '../helpers'
import { CNAME_TARGET, domainsEnv, OUR_IPS, type DomainsEnv } from './_domains'

let env: DomainsEnv
beforeAll(async () => {
  env = await domainsEnv()
})
afterAll(() => env.close())

const issuesOf = async (res: Response) => {
  const payload = await body(res)
  return {
    status: res.status,
    code: payload.error?.code,
    paths: (payload.error?.details?.issues ?? []).map((i: { path: string }) => i.path),
    message: payload.error?.message as string,
  }
}

describe('adding a domain', () => {
  test('answers the TXT proof and a CNAME for a subdomain; the hostname is normalised', async () => {
    const d = await env.add('  Go.Normalised.TEST. ')
    expect(d).toMatchObject({
      domain: 'go.normalised.test',
      unicodeDomain: 'go.normalised.test',
      verificationStatus: 'pending',
      dnsStatus: 'unknown',
      sslStatus: 'unmanaged',
      served: false,
    })
    expect(d.id).toMatch(/^dom_/)
    expect(d.records).toEqual([
      { type: 'TXT', name: '_lnk-challenge.go.normalised.test', value: expect.stringMatching(/^lnk-verify=[A-Za-z0-9]{32}$/), seen: null, ok: null },
      { type: 'CNAME', name: 'go.normalised.test', value: CNAME_TARGET, seen: null, ok: null },
    ])
    expect(d.lastCheckedAt).toBeNull()
    expect(Date.parse(d.nextCheckAt) - Date.parse(d.createdAt)).toBe(60_000)
    const listed = (await body(await env.api('/domains'))).data
    expect(listed.map((x: { id: string }) => x.id)).toContain(d.id)
  })

  test('an apex gets A and AAAA records; an internationalised name is stored as punycode', async () => {
    const apex = await env.add('bücher-apex.test')
    expect(apex.domain).toBe('xn--bcher-apex-9db.test')
    expect(apex.unicodeDomain).toBe('bücher-apex.test')
    expect(apex.records.slice(1)).toEqual([
      { type: 'A', name: 'xn--bcher-apex-9db.test', value: OUR_IPS[0], seen: null, ok: null },
      { type: 'AAAA', name: 'xn--bcher-apex-9db.test', value: OUR_IPS[1], seen: null, ok: null },
    ])
  })

  test('refuses ports, IP literals, single labels, URLs, the shared pool and the API host, naming the field', async () => {
    for (const domain of [
      'go.example.test:8443',
      '192.0.2.1',
      '[2001:db8::1]',
      'localhost',
      'https://go.example.test/x',
      'sho.rt',
      'SHO.RT',
      'go..example.test',
      '-bad.example.test',
      'example.123',
    ]) {
      const r = await issuesOf(await env.api('/domains', { method: 'POST', json: { domain } }))
      expect({ domain, status: r.status, code: r.code, paths: r.paths }).toEqual({ domain, status: 400, code: 'validation_failed', paths: ['domain'] })
    }
    const apiHost = await issuesOf(await env.api('/domains', { method: 'POST', json: { domain: 'localhost' } }))
    expect(apiHost.message).toContain('two labels')
  })

  test('the same domain twice in a workspace is 409 domain_taken; bad fallback URLs are named', async () => {
    await env.add('twice.example.test')
    const again = await env.api('/domains', { method: 'POST', json: { domain: 'TWICE.example.test' } })
    expect(again.status).toBe(409)
    expect((await body(again)).error.code).toBe('domain_taken')
    const bad = await issuesOf(
      await env.api('/domains', { method: 'POST', json: { domain: 'fallbacks.example.test', notFoundUrl: 'ftp://x.example/', expiredUrl: 'not a url' } }),
    )
    expect(bad).toMatchObject({ status: 400, code: 'validation_failed', paths: ['notFoundUrl', 'expiredUrl'] })
  })
})

describe('verifying', () => {
  test('pending until the TXT is seen; then verified, ok and served; expected and seen per record', async () => {
    const d = await env.add('verify.example.test')
    const first = await env.verify(d.id)
    expect(first.status).toBe(200)
    const before = (await body(first)).data
    expect(before).toMatchObject({ verificationStatus: 'pending', dnsStatus: 'misconfigured', served: false })
    expect(before.records.map((r: { seen: string[]; ok: boolean }) => [r.seen, r.ok])).toEqual([
      [[], false],
      [[], false],
    ])

    // At most one check per 10 s.
    const throttled = await env.verify(d.id)
    expect(throttled.status).toBe(429)
    expect(throttled.headers.get('retry-after')).toBe('10')
    expect((await body(throttled)).error.code).toBe('verify_throttled')

    env.point(d)
    env.clock.advance(10_000)
    const after = (await body(await env.verify(d.id))).data
    expect(after).toMatchObject({ verificationStatus: 'verified', dnsStatus: 'ok', served: true, failureReason: null })
    expect(after.records.map((r: { ok: boolean }) => r.ok)).toEqual([true, true])
    expect(after.verifiedAt).toBe(after.lastCheckedAt)
    expect(Date.parse(after.nextCheckAt) - Date.parse(after.lastCheckedAt)).toBe(86_400_000)
    expect(env.rt.modules.domains.served.get('verify.example.test')).toMatchObject({ id: d.id, acceptsNewLinks: true })

    // Links may now be made on it; the redirect answers there.
    const link = await env.api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/landing', domain: 'Verify.Example.Test' } })
    expect(link.status).toBe(201)
    const made = (await body(link)).data
    expect(made).toMatchObject({ domain: 'verify.example.test', shortUrl: `http://verify.example.test/${made.slug}` })
    const visit = await env.app.handle(
      new Request(`http://verify.example.test/${made.slug}`, { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36' } }),
    )
    expect(visit.status).toBe(302)
    expect(visit.headers.get('location')).toBe('https://example.com/landing')
  })

  test('an A record among our addresses is ok; ours mixed with others is conflicting; none of ours misconfigured', async () => {
    const d = await env.add('addresses.example.test')
    env.dns.set(`_lnk-challenge.${d.domain}`, 'TXT', [d.records[0].value])
    const cases: Array<[string[], string]> = [
      [[OUR_IPS[0]!], 'ok'],
      [[OUR_IPS[0]!, '198.51.100.7'], 'conflicting'],
      [['198.51.100.7'], 'misconfigured'],
    ]
    for (const [ips, status] of cases) {
      env.dns.set(d.domain, 'A', ips)
      env.clock.advance(10_000)
      expect({ ips, status: (await body(await env.verify(d.id))).data.dnsStatus }).toEqual({ ips, status })
    }
  })

  test('transient DNS errors change nothing: a pending domain stays pending with its last DNS status', async () => {
    const d = await env.add('flaky.example.test')
    for (const name of [`_lnk-challenge.${d.domain}`, d.domain]) env.dns.fail(name, 'servfail')
    const checked = (await body(await env.verify(d.id))).data
    expect(checked).toMatchObject({ verificationStatus: 'pending', dnsStatus: 'unknown', failureReason: null })
    expect(checked.records.map((r: { seen: unknown; ok: unknown }) => [r.seen, r.ok])).toEqual([
      [null, null],
      [null, null],
    ])
    for (const name of [`_lnk-challenge.${d.domain}`, d.domain]) env.dns.fail(name, null)
  })

  test('a domain not verified cannot carry links; another workspace cannot use a verified one', async () => {
    const d = await env.add('not-yet.example.test')
    const refused = await issuesOf(await env.api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/', domain: d.domain } }))
    expect(refused).toMatchObject({ status: 400, code: 'validation_failed', paths: ['domain'] })
    const other = await env.api('/links', {
      method: 'POST',
      key: (await otherAccount()).key,
      json: { destinationUrl: 'https://example.com/', domain: 'verify.example.test' },
    })
    expect(other.status).toBe(400)
  })
})

async function otherAccount() {
  const { bootstrapAccount } = await import('../helpers')
  const account = await bootstrapAccount(env.rt)
  return { key: account.apiKey.key as string, workspaceId: account.workspace.id as string }
}

describe('fallbacks, changes and deletion', () => {
  test('PATCH sets and clears fallbacks; the served set follows', async () => {
    const d = await env.add('patch.example.test')
    env.point(d)
    await env.verify(d.id)
    const res = await env.api(`/domains/${d.id}`, {
      method: 'PATCH',
      json: { rootRedirectUrl: 'https://example.com/home', notFoundUrl: 'https://example.com/missing?from={DOMAIN}&path={ORIGINAL_PATH}' },
    })
    expect(res.status).toBe(200)
    expect((await body(res)).data).toMatchObject({
      rootRedirectUrl: 'https://example.com/home',
      notFoundUrl: 'https://example.com/missing?from={DOMAIN}&path={ORIGINAL_PATH}',
      expiredUrl: null,
    })
    expect(env.rt.modules.domains.served.get(d.domain)?.rootRedirectUrl).toBe('https://example.com/home')
    const cleared = (await body(await env.api(`/domains/${d.id}`, { method: 'PATCH', json: { rootRedirectUrl: null } }))).data
    expect(cleared.rootRedirectUrl).toBeNull()
    expect(cleared.notFoundUrl).toContain('{DOMAIN}')
    const bad = await issuesOf(await env.api(`/domains/${d.id}`, { method: 'PATCH', json: { expiredUrl: 'javascript:alert(1)' } }))
    expect(bad).toMatchObject({ status: 400, paths: ['expiredUrl'] })
    const unknownField = await env.api(`/domains/${d.id}`, { method: 'PATCH', json: { domain: 'other.example.test' } })
    expect(unknownField.status).toBe(400)
  })

  test('the fallbacks set over HTTP answer on the domain: /, an unknown slug and a used-up link', async () => {
    const d = await env.add('fallback-live.example.test', {
      rootRedirectUrl: 'https://example.com/home',
      notFoundUrl: 'https://example.com/404?d={DOMAIN}&p={ORIGINAL_PATH}',
    })
    env.point(d)
    await env.verify(d.id)
    const visit = (path: string) =>
      env.app.handle(new Request(`http://fallback-live.example.test${path}`, { headers: { 'user-agent': 'Mozilla/5.0 Chrome/120.0' } }))
    const root = await visit('/')
    expect({ status: root.status, location: root.headers.get('location') }).toEqual({ status: 301, location: 'https://example.com/home' })
    const unknown = await visit('/no-such-slug')
    expect({ status: unknown.status, location: unknown.headers.get('location') }).toEqual({
      status: 302,
      location: 'https://example.com/404?d=fallback-live.example.test&p=no-such-slug',
    })
    const once = (
      await body(await env.api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/once', domain: d.domain, clickLimit: 1 } }))
    ).data
    expect((await visit(`/${once.slug}`)).status).toBe(302)
    expect((await visit(`/${once.slug}`)).status).toBe(410)
    await env.api(`/domains/${d.id}`, { method: 'PATCH', json: { expiredUrl: 'https://example.com/over/{ORIGINAL_PATH}' } })
    const over = await visit(`/${once.slug}`)
    expect({ status: over.status, location: over.headers.get('location') }).toEqual({ status: 302, location: `https://example.com/over/${once.slug}` })
  })

  test('DELETE with links is 409 domain_has_links; archiveLinks=true archives them and stops serving', async () => {
    const d = await env.add('delete.example.test')
    env.point(d)
    await env.verify(d.id)
    const link = (await body(await env.api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/x', domain: d.domain } }))).data
    const refused = await env.api(`/domains/${d.id}`, { method: 'DELETE' })
    expect(refused.status).toBe(409)
    expect((await body(refused)).error).toMatchObject({ code: 'domain_has_links', details: { domain: d.domain, links: 1 } })
    expect(env.rt.modules.domains.served.get(d.domain)).toBeDefined()

    const deleted = await env.api(`/domains/${d.id}?archiveLinks=true`, { method: 'DELETE' })
    expect(deleted.status).toBe(200)
    expect((await body(deleted)).data).toEqual({ id: d.id, deleted: true, archivedLinks: 1 })
    expect(env.rt.modules.domains.served.get(d.domain)).toBeUndefined()
    expect((await body(await env.api(`/links/${link.id}`))).data.isArchived).toBe(true)
    expect((await env.api(`/domains/${d.id}`)).status).toBe(404)
    const visit = await env.app.handle(new Request(`http://delete.example.test/${link.slug}`))
    expect(visit.status).toBe(404)
    expect(visit.headers.get('content-type')).toContain('text/html')
  })

  test('a domain without links is deleted at once', async () => {
    const d = await env.add('empty.example.test')
    const res = await env.api(`/domains/${d.id}`, { method: 'DELETE' })
    expect((await body(res)).data).toEqual({ id: d.id, deleted: true, archivedLinks: 0 })
  })
})

describe('permissions, test keys and scope filters', () => {
  test('domains:read reads but cannot write; a test key reads but cannot change domains', async () => {
    const d = await env.add('perm.example.test')
    const reader = await makeKey(env.rt, env.workspaceId, 'domains:read')
    expect((await env.api('/domains', { key: reader.key })).status).toBe(200)
    const write = await env.api('/domains', { method: 'POST', key: reader.key, json: { domain: 'nope.example.test' } })
    expect({ status: write.status, code: (await body(write)).error.code }).toEqual({ status: 403, code: 'forbidden' })
    const linksOnly = await makeKey(env.rt, env.workspaceId, 'links:read')
    expect((await env.api('/domains', { key: linksOnly.key })).status).toBe(403)

    const test = await makeKey(env.rt, env.workspaceId, '*', 'test')
    expect((await env.api(`/domains/${d.id}`, { key: test.key })).status).toBe(200)
    for (const [path, method, json] of [
      ['/domains', 'POST', { domain: 'sandbox.example.test' }],
      [`/domains/${d.id}`, 'PATCH', { rootRedirectUrl: null }],
      [`/domains/${d.id}/verify`, 'POST', undefined],
      [`/domains/${d.id}`, 'DELETE', undefined],
    ] as const) {
      const res = await env.api(path, { method, key: test.key, json })
      expect({ path, method, status: res.status, code: (await body(res)).error.code }).toEqual({ path, method, status: 403, code: 'forbidden' })
    }
  })

  test('a key scoped to some domains sees only those and may not add others', async () => {
    const a = await env.add('scope-a.example.test')
    await env.add('scope-b.example.test')
    const scoped = await makeKey(env.rt, env.workspaceId)
    await env.api(`/api-keys/${scoped.id}`, { method: 'PATCH', json: { scopeFilters: { domains: ['scope-a.example.test', 'scope-c.example.test'] } } })
    const listed = (await body(await env.api('/domains', { key: scoped.key }))).data
    expect(listed.map((x: { domain: string }) => x.domain)).toEqual(['scope-a.example.test'])
    const outside = await env.api('/domains', { method: 'POST', key: scoped.key, json: { domain: 'scope-d.example.test' } })
    expect({ status: outside.status, code: (await body(outside)).error.code }).toEqual({ status: 403, code: 'out_of_scope' })
    expect((await env.api('/domains', { method: 'POST', key: scoped.key, json: { domain: 'scope-c.example.test' } })).status).toBe(201)
    expect((await env.api(`/domains/${a.id}`, { key: scoped.key })).status).toBe(200)
  })
})

test('docs/domains.md ships deploy/Caddyfile verbatim, the file the Caddy test runs', async () => {
  const { readFileSync } = await import('node:fs')
  const { ROOT } = await import('../helpers')
  const caddyfile = readFileSync(`${ROOT}/deploy/Caddyfile`, 'utf8').trimEnd()
  expect(readFileSync(`${ROOT}/docs/domains.md`, 'utf8')).toContain(`\`\`\`caddyfile\n${caddyfile}\n\`\`\``)
})

test("after a workspace deletes its domain (links archived) and another verifies it, the former owner's links do not answer there", async () => {
  const { bootstrapAccount } = await import('../helpers')
  const first = await env.add('handed-over.example.test')
  env.point(first)
  await env.verify(first.id)
  const old = (await body(await env.api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/old-owner', domain: first.domain } }))).data
  expect((await env.api(`/domains/${first.id}?archiveLinks=true`, { method: 'DELETE' })).status).toBe(200)

  const next = await bootstrapAccount(env.rt)
  const second = await env.add('handed-over.example.test', { notFoundUrl: 'https://example.com/new-owner-404' }, next.apiKey.key)
  env.point(second)
  expect((await body(await env.verify(second.id, next.apiKey.key))).data.served).toBe(true)
  const visit = await env.app.handle(new Request(`http://handed-over.example.test/${old.slug}`, { headers: { 'user-agent': 'Mozilla/5.0 Chrome/120.0' } }))
  expect({ status: visit.status, location: visit.headers.get('location') }).toEqual({ status: 302, location: 'https://example.com/new-owner-404' })
})
