// GET /v1/analytics/overview|timeline|top-links against clicks made through real redirects: addresses via
// a trusted proxy header, real user agents and referrers, bots, a test link, conversions (one resent),
// key scope filters, and day buckets around New York's 2026 DST change.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { body, makeKey, rawRows, setup, type TestEnv } from '../helpers'
import { beacon } from '../conversions/_conversions'
import { account, UA, visit, type Api } from '../redirect/_redirect'

const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
const clock = new ManualClock(Date.UTC(2026, 2, 2, 12))
let env: TestEnv
let api: Api

async function get(path: string, key = api.key) {
  const res = await env.request(path, { key })
  return { status: res.status, body: await body(res) }
}

/** A person's visit at `at` (UTC ms), answered 302; the click is written before returning. */
async function click(slug: string, at: number, o: { ip: string; ua?: string; referer?: string; status?: number }) {
  clock.set(at)
  const res = await visit(env, slug, { ip: o.ip, ua: o.ua ?? UA.chrome, referer: o.referer })
  expect(res.status).toBe(o.status ?? 302)
  await env.rt.modules.clicks.buffer.flush()
  return res
}

let alpha: any
let beta: any
let testLink: any

beforeAll(async () => {
  env = await setup({ clock, env: { LNK_TRUST_PROXY: '1' } })
  api = await account(env)
  alpha = await api.make({ destinationUrl: 'https://example.com/alpha', slug: 'alpha', tags: ['spring'], conversionTracking: true, title: 'Alpha' })
  beta = await api.make({ destinationUrl: 'https://example.com/beta', slug: 'beta', tags: ['autumn'] })
  await api.make({ destinationUrl: 'https://example.com/gamma', slug: 'gamma' })
  testLink = await api.make({ destinationUrl: 'https://example.com/sandbox', slug: 'sandboxed' }, api.testKey)
  expect(testLink.isTest).toBe(true)

  // 2 March 2026, UTC. alpha: 4 clicks by 3 visitors; beta: 2 clicks by 2 visitors (one visitor shared
  // with alpha); gamma: 1 click; plus 2 bot hits and a visit to the test link.
  const t = Date.UTC(2026, 2, 2, 12)
  await click('alpha', t + 1_000, { ip: '8.8.8.8', referer: 'https://news.example.org/post' })
  await click('alpha', t + 2_000, { ip: '8.8.8.8', referer: 'https://news.example.org/other' })
  await click('alpha', t + 3_000, { ip: '81.2.69.142', ua: UA.iphone })
  await click('alpha', t + 4_000, { ip: '9.9.9.9', ua: UA.firefox, referer: 'https://t.co/x' })
  await click('beta', t + 5_000, { ip: '8.8.8.8' })
  await click('beta', t + 6_000, { ip: '1.1.1.1', ua: UA.android })
  await click('gamma', t + 7_000, { ip: '10.0.0.7' })
  await click('alpha', t + 8_000, { ip: '66.249.66.1', ua: GOOGLEBOT, status: 302 })
  await click('gamma', t + 9_000, { ip: '66.249.66.1', ua: GOOGLEBOT, status: 302 })
  await click('sandboxed', t + 10_000, { ip: '8.8.8.8', status: 200 })

  // Conversions on alpha's clicks: two sales in EUR (one beacon resent), a signup without value, one in USD.
  clock.set(t + 20_000)
  const cids: string[] = []
  for (const ip of ['203.0.113.10', '203.0.113.11', '203.0.113.12']) {
    const res = await visit(env, 'alpha', { ip, ua: UA.chromeMac })
    cids.push(new URL(res.headers.get('location')!).searchParams.get('lnk_cid')!)
  }
  await env.rt.modules.clicks.buffer.flush()
  clock.set(t + 30_000)
  for (const b of [
    { clickId: cids[0], eventName: 'purchase', value: 19.99, currency: 'EUR' },
    { clickId: cids[0], eventName: 'purchase', value: 19.99, currency: 'EUR' },
    { clickId: cids[1], eventName: 'purchase', value: 10.01, currency: 'EUR' },
    { clickId: cids[1], eventName: 'signup' },
    { clickId: cids[2], eventName: 'purchase', value: 5, currency: 'USD' },
  ]) {
    expect((await beacon(env, b)).status).toBeLessThan(300)
  }
  clock.set(Date.UTC(2026, 2, 3, 9))
})
afterAll(() => env.cleanup())

const DAY_RANGE = 'from=2026-03-02&to=2026-03-02'

describe('overview', () => {
  test('totals: people only, test links excluded, conversions once each, revenue per currency', async () => {
    const { status, body: b } = await get(`/v1/analytics/overview?${DAY_RANGE}`)
    expect(status).toBe(200)
    expect(b.data.from).toBe('2026-03-02T00:00:00.000Z')
    expect(b.data.to).toBe('2026-03-03T00:00:00.000Z')
    expect(b.data.totals).toEqual({
      clicks: 10,
      // alpha: 8.8.8.8+Chrome, 81.2.69.142+iPhone, 9.9.9.9+Firefox, three Chrome Mac; beta: 1.1.1.1+Android
      // (8.8.8.8+Chrome again); gamma: 10.0.0.7+Chrome.
      uniqueVisitors: 8,
      botHits: 2,
      links: 3,
      conversions: 4,
      revenue: { EUR: 30, USD: 5 },
    })
  })

  test('top breakdowns match the stored clicks', async () => {
    const { body: b } = await get(`/v1/analytics/overview?${DAY_RANGE}`)
    const top = b.data.top
    expect(top.referrers[0]).toEqual({ value: null, clicks: 7 })
    expect(top.referrers).toContainEqual({ value: 'news.example.org', clicks: 2 })
    expect(top.referrers).toContainEqual({ value: 't.co', clicks: 1 })
    expect(top.browsers).toEqual([
      { value: 'Chrome', clicks: 8 },
      { value: 'Firefox', clicks: 1 },
      { value: 'Safari', clicks: 1 },
    ])
    const sum = (rows: { clicks: number }[]) => rows.reduce((n, r) => n + r.clicks, 0)
    for (const k of ['countries', 'referrers', 'browsers', 'os', 'devices']) expect(sum(top[k])).toBe(10)
    // Ground truth: what the flush stored for each click (storage itself, read raw on purpose).
    const rows = await rawRows<{ c: string; n: number }>(
      env,
      "SELECT COALESCE(country, '') AS c, COUNT(*) AS n FROM clicks WHERE NOT is_bot GROUP BY 1 ORDER BY n DESC, c",
    )
    expect(top.countries).toEqual(rows.map((r) => ({ value: r.c || null, clicks: r.n })))
    expect(top.devices).toContainEqual({ value: 'mobile', clicks: 2 })
    expect(top.devices).toContainEqual({ value: 'desktop', clicks: 8 })
    expect(top.os).toContainEqual({ value: 'iOS', clicks: 1 })
    expect(top.os).toContainEqual({ value: 'Android', clicks: 1 })
  })

  test('one link; an unknown, test or foreign link is 404', async () => {
    const { body: b } = await get(`/v1/analytics/overview?${DAY_RANGE}&linkId=${beta.id}`)
    expect(b.data.linkId).toBe(beta.id)
    expect(b.data.totals).toEqual({ clicks: 2, uniqueVisitors: 2, botHits: 0, links: 1, conversions: 0, revenue: {} })
    for (const id of [testLink.id, '00000000-0000-7000-8000-000000000000', 'nope']) {
      const res = await get(`/v1/analytics/overview?linkId=${id}`)
      expect(res.status).toBe(404)
      expect(res.body.error.code).toBe('not_found')
    }
  })

  test('a range without clicks is all zeros; default range is the last 30 days', async () => {
    const { body: b } = await get('/v1/analytics/overview?from=2026-02-01&to=2026-02-28')
    expect(b.data.totals).toEqual({ clicks: 0, uniqueVisitors: 0, botHits: 0, links: 3, conversions: 0, revenue: {} })
    const d = (await get('/v1/analytics/overview')).body.data
    expect(d.to).toBe('2026-03-03T09:00:00.000Z')
    expect(d.from).toBe('2026-02-02T00:00:00.000Z')
    expect(d.totals.clicks).toBe(10)
  })

  test('partial hours at both ends are counted exactly', async () => {
    // Clicks at 12:00:01 … 12:00:20; a range from 12:00:03.5 to 12:00:06.5 holds the clicks at 4, 5 and 6 s.
    const from = new Date(Date.UTC(2026, 2, 2, 12, 0, 3, 500)).toISOString()
    const to = new Date(Date.UTC(2026, 2, 2, 12, 0, 6, 500)).toISOString()
    const { body: b } = await get(`/v1/analytics/overview?from=${from}&to=${to}`)
    expect(b.data.totals.clicks).toBe(3)
    expect(b.data.totals.uniqueVisitors).toBe(3)
  })
})

describe('key scope filters and permissions', () => {
  test('a key scoped to a tag sees only those links', async () => {
    const res = await env.request('/v1/api-keys', {
      method: 'POST',
      key: api.key,
      json: { name: 'spring only', permissions: ['analytics:read'], scopeFilters: { tags: ['spring'] } },
    })
    expect(res.status).toBe(201)
    const scoped = (await body(res)).data.key
    const o = (await get(`/v1/analytics/overview?${DAY_RANGE}`, scoped)).body.data
    expect(o.totals).toEqual({ clicks: 7, uniqueVisitors: 6, botHits: 1, links: 1, conversions: 4, revenue: { EUR: 30, USD: 5 } })
    expect((await get(`/v1/analytics/overview?linkId=${beta.id}`, scoped)).status).toBe(404)
    const top = (await get(`/v1/analytics/top-links?${DAY_RANGE}`, scoped)).body.data.links
    expect(top.map((l: any) => l.slug)).toEqual(['alpha'])
    const tl = (await get(`/v1/analytics/timeline?${DAY_RANGE}&interval=day`, scoped)).body.data.buckets
    expect(tl.map((x: any) => x.clicks)).toEqual([7])
  })

  test('analytics:read is required', async () => {
    const k = await makeKey(env.rt, (await get('/v1/me')).body.data.workspace.slug, 'links:read')
    const res = await get('/v1/analytics/overview', k.key)
    expect(res.status).toBe(403)
    expect(res.body.error.code).toBe('forbidden')
    expect((await env.request('/v1/analytics/timeline')).status).toBe(401)
  })
})

describe('top links', () => {
  test('ranked by clicks with every figure and the link fields', async () => {
    const { body: b } = await get(`/v1/analytics/top-links?${DAY_RANGE}`)
    expect(b.data.sort).toBe('clicks')
    expect(b.data.links.map((l: any) => [l.slug, l.clicks, l.uniqueClicks, l.conversions])).toEqual([
      ['alpha', 7, 6, 4],
      ['beta', 2, 2, 0],
      ['gamma', 1, 1, 0],
    ])
    const a = b.data.links[0]
    expect(a).toEqual({
      id: alpha.id,
      slug: 'alpha',
      domain: alpha.domain,
      shortUrl: alpha.shortUrl,
      destinationUrl: 'https://example.com/alpha',
      title: 'Alpha',
      clicks: 7,
      uniqueClicks: 6,
      conversions: 4,
      revenue: { EUR: 30, USD: 5 },
    })
  })

  test('limit and the other sorts', async () => {
    expect((await get(`/v1/analytics/top-links?${DAY_RANGE}&limit=1`)).body.data.links).toHaveLength(1)
    const byUnique = (await get(`/v1/analytics/top-links?${DAY_RANGE}&sort=uniqueClicks`)).body.data.links
    expect(byUnique.map((l: any) => l.slug)).toEqual(['alpha', 'beta', 'gamma'])
    const byRevenue = (await get(`/v1/analytics/top-links?${DAY_RANGE}&sort=revenue`)).body.data
    expect(byRevenue.currency).toBe('EUR')
    expect(byRevenue.links[0].slug).toBe('alpha')
    const usd = (await get(`/v1/analytics/top-links?${DAY_RANGE}&sort=revenue&currency=USD`)).body.data
    expect(usd.currency).toBe('USD')
    expect((await get(`/v1/analytics/top-links?${DAY_RANGE}&limit=101`)).status).toBe(400)
    expect((await get(`/v1/analytics/top-links?${DAY_RANGE}&sort=bogus`)).status).toBe(400)
  })
})

describe('bad parameters name themselves', () => {
  const cases: [string, string][] = [
    ['tz=Mars/Olympus', 'tz'],
    ['from=yesterday', 'from'],
    ['to=2026-02-30', 'to'],
    ['from=2026-03-05&to=2026-03-01', 'to'],
    ['from=2023-01-01&to=2026-03-01', 'from'],
    ['from=2026-01-01&to=2026-03-01&interval=hour', 'interval'],
  ]
  for (const [query, param] of cases) {
    test(`${query} → 400 naming ${param}`, async () => {
      const { status, body: b } = await get(`/v1/analytics/timeline?${query}`)
      expect(status).toBe(400)
      expect(b.error.code).toBe('validation_failed')
      expect(b.error.details.issues[0].path).toBe(param)
      expect(b.error.message).toContain(param)
    })
  }
  test('an unknown interval is refused by the schema', async () => {
    const { status, body: b } = await get('/v1/analytics/timeline?interval=minute')
    expect(status).toBe(400)
    expect(b.error.code).toBe('validation_failed')
    expect(JSON.stringify(b.error.details)).toContain('interval')
  })
})

describe('timeline around the DST change in New York (8 March 2026)', () => {
  let link: any
  beforeAll(async () => {
    link = await api.make({ destinationUrl: 'https://example.com/dst', slug: 'dst' })
    // Local times: Sat 7 Mar 23:30 EST, Sun 8 Mar 00:30 EST, Sun 8 Mar 23:30 EDT, Mon 9 Mar 00:30 EDT.
    const instants = [Date.UTC(2026, 2, 8, 4, 30), Date.UTC(2026, 2, 8, 5, 30), Date.UTC(2026, 2, 9, 3, 30), Date.UTC(2026, 2, 9, 4, 30)]
    let n = 0
    for (const at of instants) await click('dst', at, { ip: `198.51.100.${++n}` })
    clock.set(Date.UTC(2026, 2, 12))
  })

  test('day buckets follow local days; the DST day is 23 hours long', async () => {
    const { body: b } = await get(`/v1/analytics/timeline?linkId=${link.id}&from=2026-03-07&to=2026-03-09&tz=America/New_York&interval=day`)
    expect(b.data.interval).toBe('day')
    expect(b.data.buckets).toEqual([
      { start: '2026-03-07T05:00:00.000Z', localStart: '2026-03-07T00:00:00.000-05:00', clicks: 1, uniqueClicks: 1, conversions: 0, revenue: {} },
      { start: '2026-03-08T05:00:00.000Z', localStart: '2026-03-08T00:00:00.000-05:00', clicks: 2, uniqueClicks: 2, conversions: 0, revenue: {} },
      { start: '2026-03-09T04:00:00.000Z', localStart: '2026-03-09T00:00:00.000-04:00', clicks: 1, uniqueClicks: 1, conversions: 0, revenue: {} },
    ])
  })

  test('the same clicks in UTC days', async () => {
    const { body: b } = await get(`/v1/analytics/timeline?linkId=${link.id}&from=2026-03-07&to=2026-03-09&interval=day`)
    expect(b.data.buckets.map((x: any) => [x.start, x.clicks])).toEqual([
      ['2026-03-07T00:00:00.000Z', 0],
      ['2026-03-08T00:00:00.000Z', 2],
      ['2026-03-09T00:00:00.000Z', 2],
    ])
  })

  test('hour buckets skip the missing hour; week and month buckets', async () => {
    const hours = (await get(`/v1/analytics/timeline?linkId=${link.id}&from=2026-03-08&to=2026-03-08&tz=America/New_York&interval=hour`)).body.data.buckets
    expect(hours).toHaveLength(23)
    expect(hours[0].localStart).toBe('2026-03-08T00:00:00.000-05:00')
    expect(hours[2].localStart).toBe('2026-03-08T03:00:00.000-04:00')
    expect(hours.filter((x: any) => x.clicks).map((x: any) => x.localStart)).toEqual(['2026-03-08T00:00:00.000-05:00', '2026-03-08T23:00:00.000-04:00'])
    const weeks = (await get(`/v1/analytics/timeline?linkId=${link.id}&from=2026-03-01&to=2026-03-15&tz=America/New_York&interval=week`)).body.data.buckets
    expect(weeks.map((x: any) => [x.localStart, x.clicks])).toEqual([
      ['2026-02-23T00:00:00.000-05:00', 0],
      ['2026-03-02T00:00:00.000-05:00', 3],
      ['2026-03-09T00:00:00.000-04:00', 1],
    ])
    const months = (await get(`/v1/analytics/timeline?from=2026-02-01&to=2026-03-31&tz=America/New_York&interval=month`)).body.data.buckets
    expect(months.map((x: any) => [x.localStart, x.clicks, x.conversions, x.revenue])).toEqual([
      ['2026-02-01T00:00:00.000-05:00', 0, 0, {}],
      ['2026-03-01T00:00:00.000-05:00', 14, 4, { EUR: 30, USD: 5 }],
    ])
  })

  test('zero-filled with the interval chosen from the range', async () => {
    const days = (await get('/v1/analytics/timeline?from=2026-03-01&to=2026-03-31')).body.data
    expect(days.interval).toBe('day')
    expect(days.buckets).toHaveLength(31)
    expect(days.buckets.reduce((n: number, x: any) => n + x.clicks, 0)).toBe(14)
    const short = (await get('/v1/analytics/timeline?from=2026-03-02&to=2026-03-03')).body.data
    expect(short.interval).toBe('hour')
    expect(short.buckets).toHaveLength(48)
  })
})

describe('from and to in the OpenAPI document', () => {
  test('are published as a date, a date-time or a local date-time, on every analytics operation', async () => {
    const doc = (await get('/v1/openapi.json')).body
    for (const op of ['overview', 'timeline', 'top-links']) {
      for (const name of ['from', 'to']) {
        // Paths are named with or without /v1, depending on whether the document declares it as its server.
        const path = Object.keys(doc.paths).find((p) => p.endsWith(`/analytics/${op}`))!
        const schema = doc.paths[path].get.parameters.find((p: any) => p.name === name)?.schema
        expect({ op, name, type: schema?.type, forms: schema?.anyOf?.map((s: any) => s.format ?? 'pattern') }).toEqual({
          op,
          name,
          type: 'string',
          forms: ['date', 'date-time', 'pattern'],
        })
        const local = new RegExp(schema.anyOf[2].pattern)
        expect(local.test('2026-03-02T12:00')).toBe(true)
        expect(local.test('2026-03-02T12:00Z')).toBe(false)
      }
    }
  })

  test('publishing the formats changed nothing the service accepts: local and seconds-less times still work', async () => {
    const at = (from: string, to: string) => get(`/v1/analytics/overview?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`)
    // The clicks of 2 March between 12:00:00 and 12:00:10 UTC (the test link's visit is never counted).
    for (const [from, to] of [
      ['2026-03-02T12:00', '2026-03-02T12:00:10.500'],
      ['2026-03-02T12:00Z', '2026-03-02T12:00:10.5Z'],
      ['2026-03-02T13:00+01:00', '2026-03-02T12:00:10.5Z'],
    ]) {
      const { status, body: b } = await at(from!, to!)
      expect({ from, to, status, clicks: b.data?.totals.clicks }).toEqual({ from, to, status: 200, clicks: 7 })
    }
    const { status, body: b } = await get('/v1/analytics/overview?from=12345')
    expect(status).toBe(400)
    expect(b.error.details.issues[0].path).toBe('from')
    expect(b.error.message).toContain('ISO 8601')
  })
})
