// POST /v1/links: the Link of spec 2.2, every create field of spec 2.3 (plus conversionTracking), passwords,
// include=qr, and the validation rules of contract section 4.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { iso, ManualClock } from '../../src/platform/clock'
import { body, makeKey, setup, type TestEnv } from '../helpers'
import { account, BASE62_7, countLinks, expectedFromFull, expectLinkShape, expectValidation, fullBody, sql } from './_links'

const NOW = Date.UTC(2026, 4, 10, 12, 0, 0)
const clock = new ManualClock(NOW)
let env: TestEnv
let api: Awaited<ReturnType<typeof account>>
beforeAll(async () => {
  env = await setup({ clock })
  api = await account(env)
})
afterAll(() => env.cleanup())

describe('a minimal create', () => {
  test('only destinationUrl: 201 with every field of spec 2.2 present, typed and defaulted', async () => {
    const res = await api.create({ destinationUrl: 'https://example.com/page' })
    expect(res.status).toBe(201)
    const payload = await body(res)
    expect(payload.success).toBe(true)
    const link = payload.data
    expectLinkShape(link)
    expect(link.slug).toMatch(BASE62_7)
    expect(link).toMatchObject({
      domain: 'localhost:8080',
      destinationUrl: 'https://example.com/page',
      shortUrl: `http://localhost:8080/${link.slug}`,
      title: null,
      description: null,
      tags: [],
      totalClicks: 0,
      uniqueClicks: 0,
      isActive: true,
      isArchived: false,
      isTest: false,
      expiresAt: null,
      createdAt: iso(NOW),
      redirectStatus: 302,
      hasPassword: false,
      publicStatsEnabled: false,
      conversionTracking: false,
    })
    expect(link).not.toHaveProperty('qr')
  })

  test('generated slugs are 7 base62 characters and never repeat', async () => {
    const slugs = new Set<string>()
    for (let i = 0; i < 20; i++) {
      const link = await api.make()
      expect(link.slug).toMatch(BASE62_7)
      slugs.add(link.slug)
    }
    expect(slugs.size).toBe(20)
  })

  test('the link is stored: GET answers exactly what POST answered', async () => {
    const created = await api.make({ destinationUrl: 'https://example.com/stored' })
    const res = await api.get(created.id)
    expect(res.status).toBe(200)
    expect((await body(res)).data).toEqual(created)
  })
})

describe('every create field', () => {
  test('is stored and returned, on POST and on GET', async () => {
    const sent = fullBody('every-Field_1', { folderId: await api.folder() })
    const res = await api.create(sent)
    expect(res.status).toBe(201)
    const created = (await body(res)).data
    expectLinkShape(created)
    expect(created).toMatchObject(expectedFromFull(sent))
    expect(created.shortUrl).toBe('http://localhost:8080/every-Field_1')
    const read = (await body(await api.get(created.id))).data
    expect(read).toEqual(created)
    expect(read).toMatchObject(expectedFromFull(sent))
  })

  test('redirectStatus takes each of 301, 302, 307, 308', async () => {
    for (const redirectStatus of [301, 302, 307, 308]) {
      const link = await api.make({ redirectStatus })
      expect(link.redirectStatus).toBe(redirectStatus)
    }
  })

  test('every twitterCard value is accepted', async () => {
    for (const twitterCard of ['summary', 'summary_large_image', 'player']) {
      expect((await api.make({ twitterCard })).twitterCard).toBe(twitterCard)
    }
  })

  test('nullable fields accept null on create', async () => {
    const nulls = {
      title: null,
      description: null,
      folderId: null,
      campaignId: null,
      fallbackUrl: null,
      password: null,
      expiresAt: null,
      clickLimit: null,
      uniqueIpLimit: null,
      utmSource: null,
      ogImageUrl: null,
      twitterCard: null,
    }
    const link = await api.make(nulls)
    const { password: _p, ...rest } = nulls
    expect(link).toMatchObject({ ...rest, hasPassword: false })
  })

  test('the domain is matched case-insensitively and stored lower-case', async () => {
    const link = await api.make({ domain: 'LOCALHOST:8080', slug: 'upper-domain' })
    expect(link.domain).toBe('localhost:8080')
    expect(link.shortUrl).toBe('http://localhost:8080/upper-domain')
  })
})

describe('passwords', () => {
  test('are never returned and stored as an argon2id hash', async () => {
    const res = await api.create({ destinationUrl: 'https://example.com/secret', password: 'open sesame 42' })
    expect(res.status).toBe(201)
    const text = await res.text()
    expect(text).not.toContain('open sesame 42')
    const link = JSON.parse(text).data
    expect(link.hasPassword).toBe(true)
    const [row] = await sql<{ password_hash: string }>(env, 'SELECT password_hash FROM links WHERE id = ?', link.id)
    expect(row!.password_hash.startsWith('$argon2id$')).toBe(true)
    expect(await Bun.password.verify('open sesame 42', row!.password_hash)).toBe(true)
    expect(await Bun.password.verify('open sesame 43', row!.password_hash)).toBe(false)
    expect(text).not.toContain(row!.password_hash)
    for (const res2 of [await api.get(link.id), await api.list('?search=secret')]) {
      const t = await res2.text()
      expect(t).not.toContain('open sesame 42')
      expect(t).not.toContain(row!.password_hash)
      expect(t).not.toContain('"password"')
    }
  })

  test('an empty password is refused', async () => {
    await expectValidation(await api.create({ destinationUrl: 'https://example.com/', password: '' }), 'password')
  })
})

describe('include', () => {
  test('["qr"] returns the qr object: inline SVG and the PNG render URL', async () => {
    const res = await api.create({ destinationUrl: 'https://example.com/qr', include: ['qr'], slug: 'with-qr' })
    expect(res.status).toBe(201)
    const link = (await body(res)).data
    expectLinkShape(link)
    expect(link.qr.svg.startsWith('<svg')).toBe(true)
    expect(link.qr.png).toBe(`http://localhost:8080/v1/qr/render?data=${encodeURIComponent(link.shortUrl)}&size=512`)
    // The qr object is not stored: a plain read does not carry it.
    expect((await body(await api.get(link.id))).data).not.toHaveProperty('qr')
  })

  test('an empty include array returns no qr', async () => {
    const link = await api.make({ include: [] })
    expect(link).not.toHaveProperty('qr')
  })

  for (const include of [['svg'], ['qr', 'pdf'], ['QR'], 'qr', [1], { qr: true }]) {
    test(`include ${JSON.stringify(include)} is 400 and creates nothing`, async () => {
      const before = await countLinks(env)
      await expectValidation(await api.create({ destinationUrl: 'https://example.com/', include }), 'include')
      expect(await countLinks(env)).toBe(before)
    })
  }
})

describe('slugs', () => {
  test('1 and 64 characters of [A-Za-z0-9_-] are accepted', async () => {
    for (const slug of ['x', 'a'.repeat(64), 'A-b_9', '-', '__init__', '0123456789']) {
      const res = await api.create({ destinationUrl: 'https://example.com/', slug })
      expect({ slug, status: res.status }).toEqual({ slug, status: 201 })
      expect((await body(res)).data.slug).toBe(slug)
    }
  })

  for (const slug of ['b'.repeat(65), 'a b', 'ä', '', 'a/b', 'a.b', 'a?b', 'emoji😀', ' lead']) {
    test(`slug ${JSON.stringify(slug)} is 400 validation_failed naming slug`, async () => {
      const before = await countLinks(env)
      await expectValidation(await api.create({ destinationUrl: 'https://example.com/', slug }), 'slug')
      expect(await countLinks(env)).toBe(before)
    })
  }

  for (const slug of ['v1', 'healthz', 'readyz', 'metrics', 'p', 'qr', '_', 'V1', 'HealthZ', 'QR', 'P', 'METRICS']) {
    test(`reserved slug "${slug}" is 400`, async () => {
      await expectValidation(await api.create({ destinationUrl: 'https://example.com/', slug }), 'slug')
    })
  }

  test('a taken slug is 409 slug_taken and creates nothing', async () => {
    await api.make({ slug: 'taken-one' })
    const before = await countLinks(env)
    const res = await api.create({ destinationUrl: 'https://example.com/other', slug: 'taken-one' })
    expect(res.status).toBe(409)
    const payload = await body(res)
    expect(payload.success).toBe(false)
    expect(payload.error.code).toBe('slug_taken')
    expect(await countLinks(env)).toBe(before)
  })

  test('a slug taken by another workspace on the same domain is 409 too', async () => {
    const other = await account(env)
    await other.make({ slug: 'their-slug' })
    const res = await api.create({ destinationUrl: 'https://example.com/', slug: 'their-slug' })
    expect(res.status).toBe(409)
    expect((await body(res)).error.code).toBe('slug_taken')
  })

  test('slugs are case-sensitive: Abc and abc are two links', async () => {
    const upper = await api.make({ slug: 'Abc', destinationUrl: 'https://example.com/upper' })
    const lower = await api.make({ slug: 'abc', destinationUrl: 'https://example.com/lower' })
    expect(upper.id).not.toBe(lower.id)
    expect(upper.shortUrl).toBe('http://localhost:8080/Abc')
    expect(lower.shortUrl).toBe('http://localhost:8080/abc')
    expect((await api.create({ destinationUrl: 'https://example.com/', slug: 'ABC' })).status).toBe(201)
    expect((await api.create({ destinationUrl: 'https://example.com/', slug: 'Abc' })).status).toBe(409)
  })
})

describe('URLs', () => {
  const badUrls = [
    'ftp://example.com/file',
    'javascript:alert(1)',
    'data:text/html,<b>x</b>',
    'mailto:someone@example.com',
    '/relative/path',
    'example.com/no-scheme',
    '',
    'https://',
    `https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}`,
  ]
  for (const url of badUrls) {
    test(`destinationUrl ${JSON.stringify(url.slice(0, 40))}${url.length > 40 ? `… (${url.length} chars)` : ''} is 400`, async () => {
      await expectValidation(await api.create({ destinationUrl: url }), 'destinationUrl')
    })
    test(`fallbackUrl ${JSON.stringify(url.slice(0, 40))}${url.length > 40 ? `… (${url.length} chars)` : ''} is 400`, async () => {
      await expectValidation(await api.create({ destinationUrl: 'https://example.com/', fallbackUrl: url }), 'fallbackUrl')
    })
  }

  test('a URL of exactly 2048 characters is accepted, in both fields', async () => {
    const url = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`
    expect(url.length).toBe(2048)
    const link = await api.make({ destinationUrl: url, fallbackUrl: url })
    expect(link.destinationUrl).toBe(url)
    expect(link.fallbackUrl).toBe(url)
  })

  test('URLs are read as browsers read them: an IDN host, an unescaped space or | are accepted as sent, in create and bulk', async () => {
    // The document publishes format: uri; the service stays the judge, and takes more than RFC 3986 does.
    const odd = 'https://bücher.example/a b|c'
    const link = await api.make({ destinationUrl: odd, fallbackUrl: odd, ogImageUrl: odd })
    expect([link.destinationUrl, link.fallbackUrl, link.ogImageUrl]).toEqual([odd, odd, odd])
    const res = await api.bulk({ links: [{ destinationUrl: odd }, { destinationUrl: 42 }, { destinationUrl: 'https://example.com/', ogImageUrl: '' }] })
    const results = (await body(res)).data.results
    expect(results[0]).toMatchObject({ ok: true, link: { destinationUrl: odd } })
    expect(results[1]).toMatchObject({ ok: false, error: { code: 'validation_failed' } })
    expect(results[1].error.details.issues[0].path).toBe('destinationUrl')
    expect(results[2]).toMatchObject({ ok: false, error: { code: 'validation_failed' } })
    expect(results[2].error.message).toContain('ogImageUrl: must be an absolute URL')
  })

  test('a URL that is not a string is 400 naming the field', async () => {
    await expectValidation(await api.create({ destinationUrl: 42 }), 'destinationUrl')
    await expectValidation(await api.create({ destinationUrl: 'https://example.com/', fallbackUrl: ['https://example.com/'] }), 'fallbackUrl')
    await expectValidation(await api.create({ destinationUrl: 'https://example.com/', ogImageUrl: { href: 'https://example.com/' } }), 'ogImageUrl')
  })

  test('too long and empty URLs get messages that say what is wrong', async () => {
    const long = await expectValidation(await api.create({ destinationUrl: `https://example.com/${'a'.repeat(2049)}` }), 'destinationUrl')
    expect(long.error.message).toContain('at most 2048 characters')
    const empty = await expectValidation(await api.create({ destinationUrl: '' }), 'destinationUrl')
    expect(empty.error.message).toContain('absolute URL')
  })

  test('http and https are both accepted', async () => {
    expect((await api.make({ destinationUrl: 'http://example.com/plain' })).destinationUrl).toBe('http://example.com/plain')
    expect((await api.make({ destinationUrl: 'https://example.com/tls' })).destinationUrl).toBe('https://example.com/tls')
  })

  for (const url of ['http://localhost:8080/abc', 'https://localhost:8080/', 'http://LOCALHOST:8080/x?y=1']) {
    test(`pointing at the service's own short domain (${url}) is refused as a loop`, async () => {
      await expectValidation(await api.create({ destinationUrl: url }), 'destinationUrl')
      await expectValidation(await api.create({ destinationUrl: 'https://example.com/', fallbackUrl: url }), 'fallbackUrl')
    })
  }

  test('the same host on another port is not the short domain', async () => {
    expect((await api.make({ destinationUrl: 'http://localhost:3000/app' })).destinationUrl).toBe('http://localhost:3000/app')
  })
})

describe('other fields', () => {
  test('a domain outside the shared pool is 400', async () => {
    for (const domain of ['evil.example', 'localhost', 'localhost:8081', '']) {
      await expectValidation(await api.create({ destinationUrl: 'https://example.com/', domain }), 'domain')
    }
  })

  test('expiresAt in the past, now, or not a timestamp is 400; in the future is kept', async () => {
    await expectValidation(await api.create({ destinationUrl: 'https://example.com/', expiresAt: iso(NOW - 1000) }), 'expiresAt')
    await expectValidation(await api.create({ destinationUrl: 'https://example.com/', expiresAt: iso(NOW) }), 'expiresAt')
    await expectValidation(await api.create({ destinationUrl: 'https://example.com/', expiresAt: 'next tuesday' }), 'expiresAt')
    const link = await api.make({ expiresAt: iso(NOW + 60_000) })
    expect(link.expiresAt).toBe(iso(NOW + 60_000))
    // An offset is kept as the same instant, answered in UTC with milliseconds.
    expect((await api.make({ expiresAt: '2099-06-01T12:00:00+02:00' })).expiresAt).toBe('2099-06-01T10:00:00.000Z')
  })

  for (const [name, extra] of [
    ['an unknown field', { colour: 'red' }],
    ['isTest', { isTest: true }],
    ['isActive', { isActive: false }],
    ['id', { id: '00000000-0000-4000-8000-000000000000' }],
    ['totalClicks', { totalClicks: 5 }],
    ['shortUrl', { shortUrl: 'http://localhost:8080/x' }],
  ] as const) {
    test(`${name} in the body is 400`, async () => {
      const before = await countLinks(env)
      const res = await api.create({ destinationUrl: 'https://example.com/', ...extra })
      expect(res.status).toBe(400)
      expect((await body(res)).error.code).toBe('validation_failed')
      expect(await countLinks(env)).toBe(before)
    })
  }

  test('redirectStatus outside 301/302/307/308 is 400', async () => {
    for (const redirectStatus of [303, 300, 200, '302', null]) {
      await expectValidation(await api.create({ destinationUrl: 'https://example.com/', redirectStatus }), 'redirectStatus')
    }
  })

  test('clickLimit and uniqueIpLimit must be positive integers', async () => {
    for (const value of [0, -1, 1.5, true]) {
      await expectValidation(await api.create({ destinationUrl: 'https://example.com/', clickLimit: value }), 'clickLimit')
      await expectValidation(await api.create({ destinationUrl: 'https://example.com/', uniqueIpLimit: value }), 'uniqueIpLimit')
    }
    expect((await api.make({ clickLimit: 1, uniqueIpLimit: 1 })).clickLimit).toBe(1)
  })

  test('destinationUrl is required', async () => {
    await expectValidation(await api.create({ title: 'no destination' }), 'destinationUrl')
    await expectValidation(await api.create({ destinationUrl: null }), 'destinationUrl')
  })

  test('wrong types are 400: tags, booleans, twitterCard', async () => {
    await expectValidation(await api.create({ destinationUrl: 'https://example.com/', tags: 'a,b' }), 'tags')
    await expectValidation(await api.create({ destinationUrl: 'https://example.com/', tags: [1] }), 'tags')
    await expectValidation(await api.create({ destinationUrl: 'https://example.com/', publicStatsEnabled: 'yes' }), 'publicStatsEnabled')
    await expectValidation(await api.create({ destinationUrl: 'https://example.com/', twitterCard: 'huge' }), 'twitterCard')
  })

  test('malformed JSON is 400 invalid_request', async () => {
    const res = await env.request('/v1/links', { method: 'POST', key: api.key, body: '{"destinationUrl":', headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(400)
    expect((await body(res)).error.code).toBe('invalid_request')
  })
})

describe('test mode', () => {
  test('a lnk_test_ key creates isTest links; a live key does not', async () => {
    const testKey = await makeKey(env.rt, api.workspaceSlug, '*', 'test')
    expect(testKey.key.startsWith('lnk_test_')).toBe(true)
    const sandboxed = await api.make({ destinationUrl: 'https://example.com/sandbox' }, testKey.key)
    expect(sandboxed.isTest).toBe(true)
    expectLinkShape(sandboxed)
    expect((await body(await api.get(sandboxed.id))).data.isTest).toBe(true)
    expect((await api.make()).isTest).toBe(false)
  })
})

describe('other domains in the pool', () => {
  let multi: TestEnv
  let m: Awaited<ReturnType<typeof account>>
  beforeAll(async () => {
    multi = await setup({ clock, env: { LNK_SHORT_DOMAINS: 'go.example,Lnk.Example:8443' } })
    m = await account(multi)
  })
  afterAll(() => multi.cleanup())

  test('the first shared domain is the default; another pool domain may be chosen', async () => {
    const first = await m.make()
    expect(first.domain).toBe('go.example')
    expect(first.shortUrl).toBe(`http://go.example/${first.slug}`)
    const second = await m.make({ domain: 'lnk.example:8443', slug: 'port' })
    expect(second.shortUrl).toBe('http://lnk.example:8443/port')
  })

  test('the same slug may exist once on each domain', async () => {
    expect((await m.make({ slug: 'same', domain: 'go.example' })).domain).toBe('go.example')
    expect((await m.make({ slug: 'same', domain: 'lnk.example:8443' })).domain).toBe('lnk.example:8443')
    expect((await m.create({ destinationUrl: 'https://example.com/', slug: 'same', domain: 'go.example' })).status).toBe(409)
  })

  test('a destination on any pool domain is a loop; look-alike hosts are not', async () => {
    for (const url of ['https://go.example/x', 'http://GO.EXAMPLE/', 'https://lnk.example:8443/y']) {
      await expectValidation(await m.create({ destinationUrl: url }), 'destinationUrl')
    }
    for (const url of ['https://go.example.com/x', 'https://sub.go.example/x', 'https://lnk.example/y']) {
      expect((await m.make({ destinationUrl: url })).destinationUrl).toBe(url)
    }
  })

  test('a fully-qualified host with a trailing dot is the same host: still a loop', async () => {
    await expectValidation(await m.create({ destinationUrl: 'https://go.example./x' }), 'destinationUrl')
    await expectValidation(await m.create({ destinationUrl: 'https://example.com/', fallbackUrl: 'http://GO.EXAMPLE./y' }), 'fallbackUrl')
  })

  test('localhost:8080 is not in this pool', async () => {
    await expectValidation(await m.create({ destinationUrl: 'https://example.com/', domain: 'localhost:8080' }), 'domain')
  })
})
