// GET /v1/analytics/breakdown over clicks made through real redirects: addresses via a trusted proxy header
// looked up in a small city database written for the test, real user agents and referrers, bots, a test
// link, conversions (one beacon resent), tags, campaign and folder, key scope filters, and the raw-click
// retention window (30 days here).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ManualClock } from '../../src/platform/clock'
import { body, rawRows, setup, tempDir, type TestEnv } from '../helpers'
import { beacon } from '../conversions/_conversions'
import { account, UA, visit, type Api } from '../redirect/_redirect'
import { buildMmdb } from './_mmdb'

const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
const T = Date.UTC(2026, 2, 2, 12)
const clock = new ManualClock(T)
const geo = tempDir('lnk-breakdown-geo-')
const cityDb = join(geo, 'city.mmdb')
writeFileSync(
  cityDb,
  buildMmdb({
    '8.8.8.0/24': { country: { iso_code: 'US' }, city: { names: { en: 'Mountain View' } } },
    '81.2.69.0/24': { country: { iso_code: 'GB' }, city: { names: { en: 'London' } } },
    '9.9.9.0/24': { country: { iso_code: 'FR' }, city: { names: { en: 'Paris' } } },
    '1.1.1.0/24': { country: { iso_code: 'AU' }, city: { names: { en: 'Sydney' } } },
    '185.199.108.0/24': { country: { iso_code: 'DE' }, city: { names: { en: 'Berlin' } } },
  }),
)

let env: TestEnv
let api: Api
let alpha: any
let beta: any
let gamma: any
let testLink: any
let webFolder: string

interface Row {
  value: string | null
  clicks: number
  uniqueClicks: number
  conversions: number
  revenue: Record<string, number>
}

async function get(query: string, key = api.key) {
  const res = await env.request(`/v1/analytics/breakdown?${query}`, { key })
  return { status: res.status, body: await body(res) }
}

/** The answer's rows as [value, clicks, uniqueClicks, conversions]. */
async function table(query: string, key = api.key) {
  const { status, body: b } = await get(query, key)
  expect(status).toBe(200)
  return b.data.rows.map((r: Row) => [r.value, r.clicks, r.uniqueClicks, r.conversions])
}

async function click(slug: string, at: number, o: { ip: string; ua?: string; referer?: string; status?: number }) {
  clock.set(at)
  const res = await visit(env, slug, { ip: o.ip, ua: o.ua ?? UA.chrome, referer: o.referer })
  expect(res.status).toBe(o.status ?? 302)
  await env.rt.modules.clicks.buffer.flush()
  return res
}

beforeAll(async () => {
  env = await setup({ clock, env: { LNK_TRUST_PROXY: '1', LNK_GEOIP_DB: cityDb, LNK_CLICK_RETENTION_DAYS: '30' } })
  api = await account(env)
  const folder = await env.request('/v1/folders', { method: 'POST', key: api.key, json: { name: 'Web' } })
  webFolder = (await body(folder)).data.id
  alpha = await api.make({
    destinationUrl: 'https://example.com/alpha',
    slug: 'alpha',
    tags: ['spring', 'promo'],
    campaignId: 'cmp_launch',
    folderId: webFolder,
    conversionTracking: true,
  })
  beta = await api.make({ destinationUrl: 'https://example.com/beta', slug: 'beta', tags: ['autumn'], campaignId: 'cmp_launch' })
  gamma = await api.make({ destinationUrl: 'https://example.com/gamma', slug: 'gamma' })
  testLink = await api.make({ destinationUrl: 'https://example.com/sandbox', slug: 'sandboxed' }, api.testKey)

  // alpha: 4 clicks by 3 visitors; beta: 2 by 2 (8.8.8.8 + Chrome is the same visitor as on alpha); gamma: 1
  // from a private address; 2 bot hits; a visit to the test link.
  await click('alpha', T + 1_000, { ip: '8.8.8.8', referer: 'https://news.example.org/post' })
  await click('alpha', T + 2_000, { ip: '8.8.8.8', referer: 'https://news.example.org/other' })
  await click('alpha', T + 3_000, { ip: '81.2.69.142', ua: UA.iphone })
  await click('alpha', T + 4_000, { ip: '9.9.9.9', ua: UA.firefox, referer: 'https://t.co/x' })
  await click('beta', T + 5_000, { ip: '8.8.8.8' })
  await click('beta', T + 6_000, { ip: '1.1.1.1', ua: UA.android })
  await click('gamma', T + 7_000, { ip: '10.0.0.7' })
  await click('alpha', T + 8_000, { ip: '66.249.66.1', ua: GOOGLEBOT })
  await click('gamma', T + 9_000, { ip: '66.249.66.1', ua: GOOGLEBOT })
  await click('sandboxed', T + 10_000, { ip: '8.8.8.8', status: 200 })

  // Three visitors from Berlin on alpha, then their conversions: a sale in EUR sent twice (counted once), a
  // sale in EUR and a signup without value, a sale in USD.
  clock.set(T + 20_000)
  const cids: string[] = []
  for (const ip of ['185.199.108.10', '185.199.108.11', '185.199.108.12']) {
    const res = await visit(env, 'alpha', { ip, ua: UA.chromeMac })
    cids.push(new URL(res.headers.get('location')!).searchParams.get('lnk_cid')!)
  }
  await env.rt.modules.clicks.buffer.flush()
  clock.set(T + 30_000)
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
afterAll(async () => {
  await env.cleanup()
  rmSync(geo, { recursive: true, force: true })
})

const DAY = 'from=2026-03-02&to=2026-03-02'
const TOTALS = { clicks: 10, uniqueClicks: 8, conversions: 4, revenue: { EUR: 30, USD: 5 } }

describe('each dimension', () => {
  test('country: every figure, the range and the totals', async () => {
    const { status, body: b } = await get(`dimension=country&${DAY}`)
    expect(status).toBe(200)
    expect(b.data).toEqual({
      dimension: 'country',
      from: '2026-03-02T00:00:00.000Z',
      to: '2026-03-03T00:00:00.000Z',
      tz: 'UTC',
      linkId: null,
      sort: 'clicks',
      currency: null,
      rows: [
        // DE and US tie on clicks: byte order; the unknown country (a private address) comes last.
        { value: 'DE', clicks: 3, uniqueClicks: 3, conversions: 4, revenue: { EUR: 30, USD: 5 } },
        { value: 'US', clicks: 3, uniqueClicks: 1, conversions: 0, revenue: {} },
        { value: 'AU', clicks: 1, uniqueClicks: 1, conversions: 0, revenue: {} },
        { value: 'FR', clicks: 1, uniqueClicks: 1, conversions: 0, revenue: {} },
        { value: 'GB', clicks: 1, uniqueClicks: 1, conversions: 0, revenue: {} },
        { value: null, clicks: 1, uniqueClicks: 1, conversions: 0, revenue: {} },
      ],
      totals: TOTALS,
    })
  })

  test('continent and city', async () => {
    expect(await table(`dimension=continent&${DAY}`)).toEqual([
      ['EU', 5, 5, 4],
      ['NA', 3, 1, 0],
      ['OC', 1, 1, 0],
      [null, 1, 1, 0],
    ])
    expect(await table(`dimension=city&${DAY}`)).toEqual([
      ['Berlin', 3, 3, 4],
      ['Mountain View', 3, 1, 0],
      ['London', 1, 1, 0],
      ['Paris', 1, 1, 0],
      ['Sydney', 1, 1, 0],
      [null, 1, 1, 0],
    ])
  })

  test('device, browser and os match what the flush stored', async () => {
    for (const [dimension, column] of [
      ['device', 'device'],
      ['browser', 'browser'],
      ['os', 'os'],
    ] as const) {
      // Ground truth: the stored clicks themselves, read raw on purpose.
      const stored = await rawRows<{ v: string | null; n: number; u: number }>(
        env,
        `SELECT ${column} AS v, COUNT(*) AS n, COUNT(DISTINCT visitor_hash) AS u FROM clicks WHERE NOT is_bot GROUP BY ${column}`,
      )
      const rows = await table(`dimension=${dimension}&${DAY}`)
      expect(rows.length).toBe(stored.length)
      for (const s of stored) expect(rows).toContainEqual([s.v, Number(s.n), Number(s.u), expect.any(Number)])
      expect(rows.reduce((n: number, r: any[]) => n + r[1], 0)).toBe(10)
    }
    expect(await table(`dimension=device&${DAY}`)).toEqual([
      ['desktop', 8, 6, 4],
      ['mobile', 2, 2, 0],
    ])
  })

  test('referrer host; null is a direct visit', async () => {
    expect(await table(`dimension=referrer&${DAY}`)).toEqual([
      [null, 7, 7, 4],
      ['news.example.org', 2, 1, 0],
      ['t.co', 1, 1, 0],
    ])
  })

  test('link and domain', async () => {
    expect(await table(`dimension=link&${DAY}`)).toEqual([
      [alpha.id, 7, 6, 4],
      [beta.id, 2, 2, 0],
      [gamma.id, 1, 1, 0],
    ])
    const { body: b } = await get(`dimension=domain&${DAY}`)
    expect(b.data.rows).toEqual([{ value: alpha.domain, ...TOTALS }])
  })

  test('tag: a click counts for each tag of its link; the totals count it once', async () => {
    const { body: b } = await get(`dimension=tag&${DAY}`)
    expect(b.data.rows.map((r: Row) => [r.value, r.clicks, r.uniqueClicks, r.conversions, r.revenue])).toEqual([
      ['promo', 7, 6, 4, { EUR: 30, USD: 5 }],
      ['spring', 7, 6, 4, { EUR: 30, USD: 5 }],
      ['autumn', 2, 2, 0, {}],
      [null, 1, 1, 0, {}],
    ])
    expect(b.data.totals).toEqual(TOTALS)
  })

  test('campaign and folder (the link fields); null for links without one', async () => {
    expect(await table(`dimension=campaign&${DAY}`)).toEqual([
      ['cmp_launch', 9, 7, 4],
      [null, 1, 1, 0],
    ])
    expect(await table(`dimension=folder&${DAY}`)).toEqual([
      [webFolder, 7, 6, 4],
      [null, 3, 3, 0],
    ])
  })

  test('rule and variant: links without rules or variants are all null', async () => {
    for (const dimension of ['rule', 'variant']) expect(await table(`dimension=${dimension}&${DAY}`)).toEqual([[null, 10, 8, 4]])
  })
})

describe('sort, limit and totals', () => {
  test('uniqueClicks, conversions and revenue orders; ties go to more clicks, then to the value', async () => {
    const order = async (sort: string) => (await table(`dimension=country&${DAY}&sort=${sort}`)).map((r: any[]) => r[0])
    expect(await order('uniqueClicks')).toEqual(['DE', 'US', 'AU', 'FR', 'GB', null])
    expect(await order('conversions')).toEqual(['DE', 'US', 'AU', 'FR', 'GB', null])
    expect(await order('clicks')).toEqual(['DE', 'US', 'AU', 'FR', 'GB', null])
    expect((await table(`dimension=link&${DAY}&sort=uniqueClicks`)).map((r: any[]) => r[0])).toEqual([alpha.id, beta.id, gamma.id])
  })

  test('revenue ranks in the leading currency (EUR here) or the one asked', async () => {
    const eur = (await get(`dimension=city&${DAY}&sort=revenue`)).body.data
    expect(eur.sort).toBe('revenue')
    expect(eur.currency).toBe('EUR')
    expect(eur.rows[0]).toEqual({ value: 'Berlin', clicks: 3, uniqueClicks: 3, conversions: 4, revenue: { EUR: 30, USD: 5 } })
    const usd = (await get(`dimension=city&${DAY}&sort=revenue&currency=USD`)).body.data
    expect(usd.currency).toBe('USD')
    expect(usd.rows[0].value).toBe('Berlin')
    // No conversion in JPY: every value ranks as 0, so by clicks.
    const jpy = (await get(`dimension=city&${DAY}&sort=revenue&currency=JPY`)).body.data
    expect(jpy.rows.map((r: Row) => r.value)).toEqual(['Berlin', 'Mountain View', 'London', 'Paris', 'Sydney', null])
  })

  test('limit cuts the rows, never the totals; out of 1..1000 is 400', async () => {
    const { body: b } = await get(`dimension=country&${DAY}&limit=2`)
    expect(b.data.rows.map((r: Row) => r.value)).toEqual(['DE', 'US'])
    expect(b.data.totals).toEqual(TOTALS)
    expect((await get(`dimension=country&${DAY}&limit=1000`)).status).toBe(200)
    for (const limit of ['0', '1001', 'ten']) {
      const res = await get(`dimension=country&${DAY}&limit=${limit}`)
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('validation_failed')
      expect(res.body.error.details.issues[0].path).toBe('limit')
    }
  })

  test('an empty range is zeros, not an error', async () => {
    const { status, body: b } = await get('dimension=country&from=2026-02-01&to=2026-02-28')
    expect(status).toBe(200)
    expect(b.data.rows).toEqual([])
    expect(b.data.totals).toEqual({ clicks: 0, uniqueClicks: 0, conversions: 0, revenue: {} })
  })

  test('a partial range counts exactly the clicks inside it, and the default range is the last 30 days', async () => {
    const from = new Date(T + 3_500).toISOString()
    const to = new Date(T + 6_500).toISOString()
    expect(await table(`dimension=country&from=${from}&to=${to}`)).toEqual([
      ['AU', 1, 1, 0],
      ['FR', 1, 1, 0],
      ['US', 1, 1, 0],
    ])
    const d = (await get('dimension=link')).body.data
    expect(d.from).toBe('2026-02-02T00:00:00.000Z')
    expect(d.totals).toEqual(TOTALS)
  })
})

describe('scope', () => {
  test('linkId narrows to one link; a test link or an unknown one is 404', async () => {
    const { body: b } = await get(`dimension=country&${DAY}&linkId=${beta.id}`)
    expect(b.data.linkId).toBe(beta.id)
    expect(b.data.rows.map((r: Row) => [r.value, r.clicks])).toEqual([
      ['AU', 1],
      ['US', 1],
    ])
    expect(b.data.totals).toEqual({ clicks: 2, uniqueClicks: 2, conversions: 0, revenue: {} })
    for (const id of [testLink.id, '00000000-0000-7000-8000-000000000000']) {
      const res = await get(`dimension=country&linkId=${id}`)
      expect(res.status).toBe(404)
      expect(res.body.error.code).toBe('not_found')
    }
  })

  test("a key's scope filters: tags and domains", async () => {
    const scoped = async (scopeFilters: Record<string, string[]>) => {
      const res = await env.request('/v1/api-keys', { method: 'POST', key: api.key, json: { name: 'scoped', permissions: ['analytics:read'], scopeFilters } })
      expect(res.status).toBe(201)
      return (await body(res)).data.key as string
    }
    const spring = await scoped({ tags: ['spring'] })
    const { body: b } = await get(`dimension=tag&${DAY}`, spring)
    expect(b.data.rows.map((r: Row) => [r.value, r.clicks])).toEqual([
      ['promo', 7],
      ['spring', 7],
    ])
    expect(b.data.totals).toEqual({ clicks: 7, uniqueClicks: 6, conversions: 4, revenue: { EUR: 30, USD: 5 } })
    expect((await get(`dimension=country&linkId=${beta.id}`, spring)).status).toBe(404)
    const elsewhere = await scoped({ domains: ['elsewhere.example'] })
    const none = (await get(`dimension=link&${DAY}`, elsewhere)).body.data
    expect(none.rows).toEqual([])
    expect(none.totals.clicks).toBe(0)
  })

  test('a test key sees its sandbox only: test links record no clicks, so zeros', async () => {
    for (const dimension of ['country', 'link', 'tag']) {
      const { status, body: b } = await get(`dimension=${dimension}&${DAY}`, api.testKey)
      expect(status).toBe(200)
      expect(b.data.rows).toEqual([])
      expect(b.data.totals).toEqual({ clicks: 0, uniqueClicks: 0, conversions: 0, revenue: {} })
    }
  })
})

describe('bad parameters', () => {
  test('an unknown dimension (or one clicks do not record yet) is 400 naming dimension and listing the allowed values', async () => {
    for (const dimension of ['planet', 'language', 'utmSource', 'trigger']) {
      const { status, body: b } = await get(`dimension=${dimension}&${DAY}`)
      expect(status).toBe(400)
      expect(b.error.code).toBe('validation_failed')
      expect(b.error.details.issues[0].path).toBe('dimension')
      expect(b.error.details.issues[0].message).toContain('"country"')
      expect(b.error.details.issues[0].message).toContain('"variant"')
    }
    const missing = await get(DAY)
    expect(missing.status).toBe(400)
    expect(JSON.stringify(missing.body.error.details)).toContain('dimension')
    const sort = await get(`dimension=country&sort=visits`)
    expect(sort.status).toBe(400)
    expect(sort.body.error.details.issues[0].path).toBe('sort')
    const tz = await get('dimension=country&tz=Mars/Olympus')
    expect(tz.body.error.details.issues[0].path).toBe('tz')
  })

  test('the OpenAPI document lists exactly the accepted dimensions', async () => {
    const doc = await body(await env.request('/v1/openapi.json'))
    const path = Object.keys(doc.paths).find((p) => p.endsWith('/analytics/breakdown'))!
    const schema = doc.paths[path].get.parameters.find((p: any) => p.name === 'dimension').schema
    const values = schema.enum ?? schema.anyOf.map((s: any) => s.const)
    expect(values).toEqual([
      'country',
      'continent',
      'city',
      'device',
      'browser',
      'os',
      'referrer',
      'link',
      'domain',
      'tag',
      'campaign',
      'folder',
      'rule',
      'variant',
    ])
  })
})

describe('rule and variant on a routed link', () => {
  let routed: any
  /** Where each visit went, as its Location said: clicks and visitors per destination. */
  const went = new Map<string, { clicks: number; visitors: Set<string> }>()
  beforeAll(async () => {
    routed = await api.make({
      destinationUrl: 'https://example.com/routed',
      slug: 'routed',
      routingRules: [{ name: 'UK', conditions: [{ field: 'country', op: 'eq', value: 'GB' }], destinationUrl: 'https://example.com/uk' }],
      variants: [
        { destinationUrl: 'https://example.com/a', weight: 50 },
        { destinationUrl: 'https://example.com/b', weight: 50 },
      ],
    })
    // 5 March: 3 visitors from London (the rule), 20 from Mountain View (the variants), one of them twice.
    const ips = [...['81.2.69.1', '81.2.69.2', '81.2.69.3'], ...Array.from({ length: 20 }, (_, i) => `8.8.8.${i + 1}`), '8.8.8.1']
    for (const [i, ip] of ips.entries()) {
      const res = await click('routed', Date.UTC(2026, 2, 5, 10) + i * 1_000, { ip })
      const to = new URL(res.headers.get('location')!)
      const seen = went.get(to.origin + to.pathname) ?? { clicks: 0, visitors: new Set<string>() }
      seen.clicks++
      seen.visitors.add(ip)
      went.set(to.origin + to.pathname, seen)
    }
    clock.set(Date.UTC(2026, 2, 6))
  })

  const byValue = (rows: any[][]) => [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])))

  test('rule: the rule that chose the destination, null where none did', async () => {
    const uk = went.get('https://example.com/uk')!
    expect(uk.clicks).toBe(3)
    expect(await table(`dimension=rule&from=2026-03-05&to=2026-03-05&linkId=${routed.id}`)).toEqual([
      [null, 21, 20, 0],
      [routed.routingRules[0].id, 3, 3, 0],
    ])
  })

  test('variant: each variant with the clicks and visitors its destination got', async () => {
    const expected = routed.variants
      .filter((v: any) => went.has(v.destinationUrl))
      .map((v: any) => [v.id, went.get(v.destinationUrl)!.clicks, went.get(v.destinationUrl)!.visitors.size, 0])
    expected.push([null, 3, 3, 0])
    const rows = await table(`dimension=variant&from=2026-03-05&to=2026-03-05&linkId=${routed.id}`)
    expect(byValue(rows)).toEqual(byValue(expected))
    expect(rows.reduce((n: number, r: any[]) => n + r[1], 0)).toBe(24)
  })
})

describe('retention', () => {
  test('raw clicks are read only within LNK_CLICK_RETENTION_DAYS: the part of a range before it counts nothing', async () => {
    // 30 days after 12:00:05.5 on 2 March: the clicks at 12:00:01 … 12:00:05 are past retention (even before
    // the prune job deletes them); beta's at 6 s, gamma's at 7 s and the three Berlin clicks at 20 s are not.
    clock.set(T + 30 * 86_400_000 + 5_500)
    const { body: b } = await get('dimension=link&from=2026-03-01&to=2026-03-02')
    expect(b.data.from).toBe('2026-03-01T00:00:00.000Z')
    expect(b.data.rows.map((r: Row) => [r.value, r.clicks, r.uniqueClicks, r.conversions])).toEqual([
      [alpha.id, 3, 3, 4],
      [beta.id, 1, 1, 0],
      [gamma.id, 1, 1, 0],
    ])
    expect(b.data.totals).toEqual({ clicks: 5, uniqueClicks: 5, conversions: 4, revenue: { EUR: 30, USD: 5 } })
    // A range entirely before the window: zeros.
    const old = (await get('dimension=link&from=2026-02-20&to=2026-03-01')).body.data
    expect(old.rows).toEqual([])
    expect(old.totals.clicks).toBe(0)
  })
})
