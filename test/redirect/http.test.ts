// Short links over a real loopback socket, served by startServer() as `lnk serve` does: the redirect with
// its headers, HEAD, the 404 page, and the socket address as the visitor's address when no proxy is
// trusted (X-Forwarded-For ignored) versus the forwarded one when a proxy is.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { account, clicksOf, counters, keyed, pool, UA, type Api } from './_redirect'
import { startLnk, type Lnk } from './_server'

const get = (url: string, init: RequestInit = {}) => fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(10_000), ...init })

describe('no proxy trusted', () => {
  let lnk: Lnk
  let api: Api
  beforeAll(async () => {
    lnk = await startLnk()
    api = await account(lnk.env)
  })
  afterAll(async () => {
    await lnk.stop()
  })

  test('a redirect end to end: status, Location, headers, and the click under the socket address', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/over-http?x=1', utmSource: 'http' })
    expect(link.shortUrl).toBe(`${lnk.origin}/${link.slug}`)
    const res = await get(`${link.shortUrl}?v=2`, { headers: { 'user-agent': UA.chrome, referer: 'https://ref.example.net/page' } })
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('https://example.com/over-http?x=1&utm_source=http&v=2')
    expect(res.headers.get('cache-control')).toBe('private, no-store')
    expect(res.headers.get('x-robots-tag')).toBe('noindex')
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9A-Za-z]{20}$/)
    expect(await res.text()).toBe('')

    // A forged X-Forwarded-For is ignored: the socket address (127.0.0.1) is the visitor.
    const spoofed = await get(link.shortUrl, { headers: { 'user-agent': UA.chrome, 'x-forwarded-for': '203.0.113.99' } })
    expect(spoofed.status).toBe(302)
    const head = await get(link.shortUrl, { method: 'HEAD', headers: { 'user-agent': UA.chrome } })
    expect({ status: head.status, location: head.headers.get('location') }).toEqual({
      status: 302,
      location: 'https://example.com/over-http?x=1&utm_source=http',
    })

    await lnk.env.rt.modules.clicks.buffer.flush()
    const rows = await clicksOf(lnk.env, link.id)
    expect(rows).toHaveLength(2)
    const socketVisitor = keyed(lnk.env.rt, `v|127.0.0.1|${UA.chrome}`)
    expect(rows.map((r) => r.visitor_hash)).toEqual([socketVisitor, socketVisitor])
    expect(rows[0]!.visitor_hash).not.toBe(keyed(lnk.env.rt, `v|203.0.113.99|${UA.chrome}`))
    expect(rows[0]).toMatchObject({ referrer: 'https://ref.example.net/page', referrer_host: 'ref.example.net', user_agent: UA.chrome })
    expect(await counters(lnk.env, link.id)).toEqual({ total_clicks: 2, unique_clicks: 1 })
  })

  test('X-Forwarded-For cannot fake new addresses past a uniqueIpLimit', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/one-visitor', uniqueIpLimit: 1, fallbackUrl: 'https://example.com/full' })
    for (const xff of ['203.0.113.1', '203.0.113.2', '198.51.100.7, 203.0.113.3']) {
      const res = await get(link.shortUrl, { headers: { 'user-agent': UA.chrome, 'x-forwarded-for': xff } })
      expect(res.headers.get('location')).toBe('https://example.com/one-visitor')
    }
    await lnk.env.rt.modules.clicks.buffer.flush()
    expect(await counters(lnk.env, link.id)).toEqual({ total_clicks: 3, unique_clicks: 1 })
  })

  test('clickLimit 10 with 50 concurrent requests over sockets, flushes and PATCHes in between: exactly 10 redirects', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/limited', clickLimit: 10, fallbackUrl: 'https://example.com/full' })
    const tasks = Array.from({ length: 50 }, (_, i) => async () => {
      if (i === 4 || i === 9) await lnk.env.rt.modules.clicks.buffer.flush()
      if (i === 5 || i === 9 || i === 20) expect((await api.patch(link.id, { title: `t${i}` })).status).toBe(200)
      const res = await get(link.shortUrl, { headers: { 'user-agent': UA.chrome } })
      return res.headers.get('location')
    })
    const locations = await pool(10, tasks)
    expect(locations.filter((l) => l === 'https://example.com/limited')).toHaveLength(10)
    expect(locations.filter((l) => l === 'https://example.com/full')).toHaveLength(40)
    await lnk.env.rt.modules.clicks.buffer.flush()
    expect(await counters(lnk.env, link.id)).toEqual({ total_clicks: 10, unique_clicks: 1 })
  })

  test('the pages over HTTP: 404 for an unknown slug, and API paths are not short links', async () => {
    const res = await get(`${lnk.origin}/does-not-exist`, { headers: { 'user-agent': UA.chrome } })
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('x-request-id')).toMatch(/^req_/)
    expect(await res.text()).toContain('Link not found')
    const health = await get(`${lnk.origin}/healthz`)
    expect(health.status).toBe(200)
  })
})

describe('one proxy trusted', () => {
  let lnk: Lnk
  let api: Api
  beforeAll(async () => {
    lnk = await startLnk({ LNK_TRUST_PROXY: '1' })
    api = await account(lnk.env)
  })
  afterAll(async () => {
    await lnk.stop()
  })

  test('the address the proxy saw (right-most X-Forwarded-For entry) is the visitor; without the header, the socket', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/proxied' })
    await get(link.shortUrl, { headers: { 'user-agent': UA.chrome, 'x-forwarded-for': '198.51.100.7, 203.0.113.5' } })
    await get(link.shortUrl, { headers: { 'user-agent': UA.chrome } })
    await lnk.env.rt.modules.clicks.buffer.flush()
    expect((await clicksOf(lnk.env, link.id)).map((r) => r.visitor_hash)).toEqual([
      keyed(lnk.env.rt, `v|203.0.113.5|${UA.chrome}`),
      keyed(lnk.env.rt, `v|127.0.0.1|${UA.chrome}`),
    ])
  })

  test('uniqueIpLimit 3 with 20 forwarded addresses at once, flushes and PATCHes in between: exactly 3 admitted, and they stay admitted', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/three', uniqueIpLimit: 3, fallbackUrl: 'https://example.com/full' })
    const ips = Array.from({ length: 20 }, (_, i) => `198.51.100.${100 + i}`)
    const visitFrom = (ip: string) => get(link.shortUrl, { headers: { 'user-agent': UA.chrome, 'x-forwarded-for': ip } }).then((r) => r.headers.get('location'))
    const tasks = ips.map((ip, i) => async () => {
      if (i === 2 || i === 8) await lnk.env.rt.modules.clicks.buffer.flush()
      if (i === 3 || i === 8 || i === 15) expect((await api.patch(link.id, { title: `t${i}` })).status).toBe(200)
      return visitFrom(ip)
    })
    const first = await pool(10, tasks)
    const admitted = ips.filter((_, i) => first[i] === 'https://example.com/three')
    expect(admitted).toHaveLength(3)
    expect(first.filter((l) => l === 'https://example.com/full')).toHaveLength(17)
    await lnk.env.rt.modules.clicks.buffer.flush()
    expect(
      (
        await pool(
          10,
          ips.map((ip) => () => visitFrom(ip)),
        )
      ).map((l, i) => [ips[i], l]),
    ).toEqual(ips.map((ip) => [ip, admitted.includes(ip) ? 'https://example.com/three' : 'https://example.com/full']))
  })
})
