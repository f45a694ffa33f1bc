// Where a visitor is sent: the stored destination, the link's UTM fields (replacing the same keys), the
// visitor's query where the destination has no parameter of that name, lnk_cid for conversion tracking,
// and never a host taken from the request. Writes to a link are seen by the very next visit.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { RedirectLink } from '../../src/modules/links'
import { buildDestination } from '../../src/modules/redirect/destination'
import type { TestEnv } from '../helpers'
import { account, clickedEvents, clicksOf, nextIp, ORIGIN, redirectEnv, UA, visit, type Api } from './_redirect'

let env: TestEnv
let api: Api
beforeAll(async () => {
  env = await redirectEnv()
  api = await account(env)
})
afterAll(() => env.cleanup())

const locationOf = async (path: string, o: Parameters<typeof visit>[2] = {}) => {
  const res = await visit(env, path, o)
  expect([301, 302, 307, 308]).toContain(res.status)
  return res.headers.get('location')!
}

const params = (location: string) => [...new URL(location).searchParams]

describe('query parameters', () => {
  test('UTM fields replace the same keys of the destination and keep its other parameters', async () => {
    const link = await api.make({
      destinationUrl: 'https://example.com/p?utm_source=old&utm_medium=old-medium&x=1&utm_term=kept',
      utmSource: 'newsletter',
      utmMedium: 'email',
      utmCampaign: 'spring',
      utmContent: 'hero',
    })
    expect(params(await locationOf(link.slug))).toEqual([
      ['utm_source', 'newsletter'],
      ['utm_medium', 'email'],
      ['x', '1'],
      ['utm_term', 'kept'],
      ['utm_campaign', 'spring'],
      ['utm_content', 'hero'],
    ])
  })

  test('visitor parameters are added only where the destination (or a UTM field) has none of that name', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/v?x=1&tag=own', utmSource: 'lnk' })
    const location = await locationOf(`${link.slug}?x=2&y=3&tag=a&tag=b&utm_source=visitor&utm_medium=visitor-medium&q=a%20b%26c`)
    expect(params(location)).toEqual([
      ['x', '1'],
      ['tag', 'own'],
      ['utm_source', 'lnk'],
      ['y', '3'],
      ['utm_medium', 'visitor-medium'],
      ['q', 'a b&c'],
    ])
    // Repeated visitor parameters the destination lacks are all passed on.
    const plain = await api.make({ destinationUrl: 'https://example.com/plain' })
    expect(params(await locationOf(`${plain.slug}?tag=a&tag=b`))).toEqual([
      ['tag', 'a'],
      ['tag', 'b'],
    ])
    expect(await locationOf(plain.slug)).toBe('https://example.com/plain')
  })

  test('a fragment of the destination stays at the end', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/doc#part-2', utmCampaign: 'c' })
    expect(await locationOf(`${link.slug}?v=1`)).toBe('https://example.com/doc?utm_campaign=c&v=1#part-2')
  })

  test('conversionTracking appends lnk_cid=clk_… and it is the id of the click row', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/buy?sku=9', conversionTracking: true })
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const location = await locationOf(`${link.slug}?lnk_cid=clk_forgedforgedforged00&ref=ad`, { ip: nextIp() })
      const all = new URL(location).searchParams.getAll('lnk_cid')
      expect(all).toHaveLength(1)
      expect(all[0]).toMatch(/^clk_[0-9A-Za-z]{20}$/)
      expect(new URL(location).searchParams.get('ref')).toBe('ad')
      expect(new URL(location).searchParams.get('sku')).toBe('9')
      ids.push(all[0]!)
    }
    expect(new Set(ids).size).toBe(3)
    await env.rt.modules.clicks.buffer.flush()
    expect((await clicksOf(env, link.id)).map((c) => c.id)).toEqual(ids)
  })

  test('a visitor-supplied lnk_cid is never passed through, with or without conversion tracking', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/nocid' })
    expect(await locationOf(`${link.slug}?lnk_cid=clk_mine&a=1`)).toBe('https://example.com/nocid?a=1')
    expect(await locationOf(`${link.slug}?lnk_cid=x&lnk_cid=y`)).toBe('https://example.com/nocid')
    // HEAD and bots are not counted, so they get no click id either, and still no visitor one.
    const tracked = await api.make({ destinationUrl: 'https://example.com/cid', conversionTracking: true })
    expect(await locationOf(`${tracked.slug}?lnk_cid=clk_mine`, { method: 'HEAD' })).toBe('https://example.com/cid')
    expect(await locationOf(`${tracked.slug}?lnk_cid=clk_mine`, { ua: 'curl/8.5.0' })).toBe('https://example.com/cid')
  })
})

describe('never an open redirect', () => {
  const hostile = [
    '?url=https://evil.example/&next=//evil.example&redirect=https:%2F%2Fevil.example&destination=https://evil.example',
    '?@evil.example',
    '?%0d%0aLocation:%20https://evil.example',
    '#https://evil.example',
  ]

  test('no query, header or path variant changes the Location host', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/safe', fallbackUrl: 'https://example.org/fallback' })
    const seen = new Set<string>()
    const check = (res: Response) => {
      const location = res.headers.get('location')
      if (location === null) return
      expect(location).not.toContain('\n')
      const host = new URL(location, `${ORIGIN}/`).host
      seen.add(host)
      expect(['example.com', 'localhost:8080']).toContain(host)
    }
    for (const suffix of hostile) check(await visit(env, `${link.slug}${suffix}`))
    for (const headers of <Record<string, string>[]>[
      { 'x-forwarded-host': 'evil.example' },
      { forwarded: 'host=evil.example' },
      { 'x-original-url': 'https://evil.example/' },
      { referer: 'https://evil.example/' },
    ]) {
      check(await visit(env, link.slug, { headers }))
    }
    // Another Host: not a short domain of this service, so not a short link at all.
    const otherHost = await env.app.handle(
      new Request(`${ORIGIN}/${link.slug}`, { headers: { host: 'evil.example', 'user-agent': UA.chrome }, redirect: 'manual' }),
    )
    expect(otherHost.headers.get('location')).toBeNull()
    const absolute = await env.app.handle(new Request(`http://evil.example/${link.slug}`, { headers: { 'user-agent': UA.chrome }, redirect: 'manual' }))
    expect(absolute.headers.get('location')).toBeNull()
    for (const path of [
      `${link.slug}/..%2F..%2Fevil.example`,
      `${link.slug}%2F%2Fevil.example`,
      `/evil.example/${link.slug}`,
      `${link.slug}@evil.example`,
      `${link.slug}%00`,
    ]) {
      check(await visit(env, path))
    }
    expect(seen).toEqual(new Set(['example.com']))
  })

  test('the 303 after a gate stays on this host, whatever the query', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/gated-safe', consentRequired: true })
    for (const suffix of ['?x=//evil.example', '?next=https://evil.example/', '?a=%2F%2Fevil.example']) {
      const res = await visit(env, `${link.slug}${suffix}`, { form: { gate: 'consent' } })
      expect(res.status).toBe(303)
      const location = res.headers.get('location')!
      expect(location.startsWith(`/${link.slug}?`)).toBe(true)
      expect(new URL(location, `${ORIGIN}/`).host).toBe('localhost:8080')
      const through = await visit(env, location, { cookie: res.headers.get('set-cookie')!.split(';')[0] })
      expect(new URL(through.headers.get('location')!).host).toBe('example.com')
    }
  })

  test('a destination or fallback pointing at this service is refused at create time (no loops)', async () => {
    const res = await env.request('/v1/links', { method: 'POST', key: api.key, json: { destinationUrl: `${ORIGIN}/other` } })
    expect(res.status).toBe(400)
    const fb = await env.request('/v1/links', { method: 'POST', key: api.key, json: { destinationUrl: 'https://example.com/', fallbackUrl: `${ORIGIN}/x` } })
    expect(fb.status).toBe(400)
  })
})

describe('writes are seen by the very next visit', () => {
  test('a PATCHed destination, status or UTM field is used at once', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/before' })
    expect(await locationOf(link.slug)).toBe('https://example.com/before')
    expect((await api.patch(link.id, { destinationUrl: 'https://example.com/after' })).status).toBe(200)
    expect(await locationOf(link.slug)).toBe('https://example.com/after')
    expect((await api.patch(link.id, { redirectStatus: 307, utmSource: 'patched' })).status).toBe(200)
    const res = await visit(env, link.slug)
    expect({ status: res.status, location: res.headers.get('location') }).toEqual({ status: 307, location: 'https://example.com/after?utm_source=patched' })
  })

  test('a changed slug: the old one is 404 at once, the new one redirects', async () => {
    const link = await api.make({ slug: 'old-slug', destinationUrl: 'https://example.com/moved' })
    expect(await locationOf('old-slug')).toBe('https://example.com/moved')
    expect((await api.patch(link.id, { slug: 'new-slug' })).status).toBe(200)
    expect((await visit(env, 'old-slug')).status).toBe(404)
    expect(await locationOf('new-slug')).toBe('https://example.com/moved')
  })

  test('a deleted link is 404 at once; its clicks still in the buffer are dropped at the flush', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/deleted' })
    expect(await locationOf(link.slug)).toBe('https://example.com/deleted')
    expect(await locationOf(link.slug, { ip: nextIp() })).toBe('https://example.com/deleted')
    expect(env.rt.modules.clicks.buffer.size).toBeGreaterThanOrEqual(2)
    expect((await api.del(link.id)).status).toBe(200)
    const gone = await visit(env, link.slug)
    expect(gone.status).toBe(404)
    expect(gone.headers.get('location')).toBeNull()
    await env.rt.modules.clicks.buffer.flush()
    expect(env.rt.modules.clicks.buffer.size).toBe(0)
    expect(await clicksOf(env, link.id)).toEqual([])
    expect((await clickedEvents(env, link.id)).length).toBe(0)
    // A new link may take the slug, and is served at once.
    await api.make({ slug: link.slug, destinationUrl: 'https://example.com/reborn' })
    expect(await locationOf(link.slug)).toBe('https://example.com/reborn')
  })
})

describe('a routed destination (buildDestination on its own)', () => {
  const base = { destinationUrl: 'https://example.com/own', utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null }
  const linkOf = (o: Record<string, unknown> = {}) => ({ ...base, conversionTracking: false, ...o }) as unknown as RedirectLink
  const to = (destinationUrl: string, ruleId: string | null = 'rr_1') => ({ destinationUrl, ruleId, variantId: ruleId ? null : 'var_1' })

  test('the chosen destination replaces the link’s own, serialized as a URL would, per route', () => {
    const link = linkOf()
    expect(buildDestination(link, '', null, to('https://Example.ORG/a b'))).toBe('https://example.org/a%20b')
    expect(buildDestination(link, '', null, to('https://example.net/variant', null))).toBe('https://example.net/variant')
    // Kept per destination: the same link answers each route, and its own, with its own URL.
    expect(buildDestination(link, '', null, to('https://Example.ORG/a b'))).toBe('https://example.org/a%20b')
    expect(buildDestination(link, '', null, null)).toBe('https://example.com/own')
    expect(buildDestination(link, '', null, to('https://example.com/own'))).toBe('https://example.com/own')
  })

  test('UTM fields, the visitor’s query and lnk_cid go onto the chosen destination, its fragment last', () => {
    const link = linkOf({ utmSource: 'lnk', conversionTracking: true })
    expect(buildDestination(link, '?a=1&utm_source=visitor&lnk_cid=forged', 'clk_9', to('https://example.org/x?a=keep#top'))).toBe(
      'https://example.org/x?a=keep&utm_source=lnk&lnk_cid=clk_9#top',
    )
  })
})
