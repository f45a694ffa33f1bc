// POST /v1/links/{id}/resolve over HTTP (contract 7.1): what a described visit would get, through the same
// gates, limits and routing as a real visit, with nothing recorded. Real visits through the redirect check
// that resolve's answers are the redirect's own, and that resolving moves no counter and no limit.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { body, makeKey, type TestEnv } from '../helpers'
import { account, clicksOf, counters, CRAWLERS, redirectEnv, UA, visit, type Api } from './_redirect'
import { setRouting } from './_routing'

const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 0))
let env: TestEnv
let api: Api
beforeAll(async () => {
  env = await redirectEnv({ clock })
  api = await account(env)
})
afterAll(() => env.cleanup())

const resolve = (id: string, json?: unknown, key = api.key) => env.request(`/v1/links/${id}/resolve`, { method: 'POST', key, json })
async function resolved(id: string, json: Record<string, unknown> = {}, key = api.key) {
  const res = await resolve(id, json, key)
  const payload = await body(res)
  if (res.status !== 200) throw new Error(`resolve answered ${res.status}: ${JSON.stringify(payload)}`)
  return payload.data
}
async function refusal(res: Response) {
  const payload = await body(res)
  return { status: res.status, code: payload.error?.code, paths: (payload.error?.details?.issues ?? []).map((i: { path: string }) => i.path) }
}

const STORES = {
  routingRules: [
    { name: 'ios', conditions: [{ field: 'os', op: 'eq', value: 'ios' }], destinationUrl: 'https://apps.apple.com/app/id1' },
    { name: 'android', conditions: [{ field: 'os', op: 'eq', value: 'android' }], destinationUrl: 'https://play.google.com/store/apps/details?id=x' },
    {
      name: 'de',
      match: 'any' as const,
      conditions: [
        { field: 'language', op: 'eq', value: 'de' },
        { field: 'country', op: 'in', value: ['AT', 'CH', 'DE'] },
      ],
      destinationUrl: 'https://example.com/de',
    },
    { name: 'office', conditions: [{ field: 'ip', op: 'in', value: ['198.51.100.0/24', '2001:db8::/32'] }], destinationUrl: 'https://intranet.example.com/' },
    {
      name: 'launch',
      conditions: [
        { field: 'time', op: 'gte', value: '2026-07-01T00:00:00Z' },
        { field: 'time', op: 'lt', value: '2026-07-08T00:00:00Z' },
      ],
      destinationUrl: 'https://example.com/launch',
    },
    { name: 'qr', conditions: [{ field: 'trigger', op: 'eq', value: 'qr' }], destinationUrl: 'https://example.com/scanned' },
    { name: 'news', conditions: [{ field: 'query.src', op: 'eq', value: 'news' }], destinationUrl: 'https://example.com/news' },
  ],
}

describe('routing through resolve', () => {
  let link: any
  /** The ids the service gave the rules, by their names. */
  let idOf: Record<string, string> = {}
  beforeAll(async () => {
    link = await api.make({ destinationUrl: 'https://example.com/home' })
    const { routingRules } = await setRouting(api, link, STORES)
    idOf = Object.fromEntries(routingRules!.map((r) => [r.name, r.id]))
  })

  test('each rule by what the visit says; the trace names every rule up to the match', async () => {
    const cases: [Record<string, unknown>, string | null, string][] = [
      [{ userAgent: UA.iphone }, 'ios', 'https://apps.apple.com/app/id1'],
      [{ userAgent: UA.android }, 'android', 'https://play.google.com/store/apps/details?id=x'],
      [{ userAgent: UA.chrome, acceptLanguage: 'de-CH,de;q=0.9' }, 'de', 'https://example.com/de'],
      [{ userAgent: UA.chrome, country: 'at' }, 'de', 'https://example.com/de'],
      [{ userAgent: UA.chrome, ip: '198.51.100.20' }, 'office', 'https://intranet.example.com/'],
      [{ userAgent: UA.chrome, ip: '2001:db8:1::5' }, 'office', 'https://intranet.example.com/'],
      [{ userAgent: UA.chrome, at: '2026-07-03T10:00:00+02:00' }, 'launch', 'https://example.com/launch'],
      [{ userAgent: UA.chrome, at: '2026-07-08T00:00:00Z' }, null, 'https://example.com/home'],
      [{ userAgent: UA.chrome, trigger: 'qr' }, 'qr', 'https://example.com/scanned'],
      [{ userAgent: UA.chrome, query: { src: 'news' } }, 'news', 'https://example.com/news?src=news'],
      [{ userAgent: UA.chrome, ip: '8.8.8.8', acceptLanguage: 'en-US' }, null, 'https://example.com/home'],
      [{}, null, 'https://example.com/home'],
    ]
    for (const [visitJson, ruleId, destinationUrl] of cases) {
      const r = await resolved(link.id, visitJson)
      const id = ruleId === null ? null : idOf[ruleId]!
      expect({ visit: visitJson, ruleId: r.ruleId, destinationUrl: r.destinationUrl, outcome: r.outcome }).toEqual({
        visit: visitJson,
        ruleId: id,
        destinationUrl,
        outcome: 'redirect',
      })
      expect(r.variantId).toBeNull()
      const ids = STORES.routingRules.map((x) => idOf[x.name]!)
      expect(r.trace.map((t: { ruleId: string }) => t.ruleId)).toEqual(id === null ? ids : ids.slice(0, ids.indexOf(id) + 1))
      expect(r.trace.filter((t: { matched: boolean }) => t.matched).map((t: { ruleId: string }) => t.ruleId)).toEqual(id === null ? [] : [id])
    }
    const de = await resolved(link.id, { country: 'CH', acceptLanguage: 'fr-CH' })
    expect(de.trace[2]).toEqual({ ruleId: idOf.de, matched: true, conditions: [false, true] })
  })

  test('the country of the address, as enrichment finds it', async () => {
    const german = await api.make({ destinationUrl: 'https://example.com/world' })
    await setRouting(api, german, {
      routingRules: [{ conditions: [{ field: 'continent', op: 'eq', value: 'OC' }], destinationUrl: 'https://example.com/oceania' }],
    })
    expect((await resolved(german.id, { ip: '1.1.1.1' })).destinationUrl).toBe('https://example.com/oceania')
    expect((await resolved(german.id, { ip: '8.8.8.8' })).destinationUrl).toBe('https://example.com/world')
    // The body's country stands in for the address's.
    expect((await resolved(german.id, { ip: '8.8.8.8', country: 'NZ' })).destinationUrl).toBe('https://example.com/oceania')
  })

  test('resolve says what the redirect does', async () => {
    for (const [ua, headers] of [
      [UA.iphone, {}],
      [UA.android, {}],
      [UA.chrome, { 'accept-language': 'de' }],
      [UA.chrome, {}],
    ] as const) {
      const res = await visit(env, `${link.slug}?src=x`, { ua, headers, ip: '8.8.8.8' })
      const r = await resolved(link.id, {
        userAgent: ua,
        acceptLanguage: (headers as Record<string, string>)['accept-language'],
        ip: '8.8.8.8',
        query: { src: 'x' },
      })
      expect(res.status).toBe(302)
      expect(res.headers.get('location')).toBe(r.destinationUrl)
    }
  })
})

describe('variants through resolve', () => {
  test('the same visitor gets the same variant; UTM fields and the query apply to it', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/base', utmSource: 'lnk', utmCampaign: 'spring' })
    const { variants } = await setRouting(api, link, {
      variants: [
        { destinationUrl: 'https://example.com/a?x=1', weight: 50 },
        { destinationUrl: 'https://example.com/b', weight: 30 },
        { destinationUrl: 'https://example.com/c', weight: 20 },
      ],
    })
    const seen = new Map<string, number>()
    for (let i = 0; i < 60; i++) {
      const who = { ip: `203.0.113.${i}`, userAgent: UA.chrome, query: { ref: 'mail' } }
      const first = await resolved(link.id, who)
      const again = await resolved(link.id, who)
      expect(again).toEqual(first)
      // A real visit by the same visitor (address and user agent) lands on the same variant.
      if (i < 15) expect((await visit(env, `${link.slug}?ref=mail`, { ip: who.ip, ua: who.userAgent })).headers.get('location')).toBe(first.destinationUrl)
      const variant = variants!.find((v) => v.id === first.variantId)!
      const url = new URL(first.destinationUrl)
      expect(`${url.origin}${url.pathname}`).toBe(new URL(variant.destinationUrl).origin + new URL(variant.destinationUrl).pathname)
      expect(url.searchParams.get('utm_source')).toBe('lnk')
      expect(url.searchParams.get('utm_campaign')).toBe('spring')
      expect(url.searchParams.get('ref')).toBe('mail')
      if (variant.destinationUrl.includes('x=1')) expect(url.searchParams.get('x')).toBe('1')
      expect(first.ruleId).toBeNull()
      expect(first.trace).toEqual([])
      seen.set(first.variantId, (seen.get(first.variantId) ?? 0) + 1)
    }
    // 60 visitors over 50/30/20: every variant is chosen by someone.
    expect(seen.size).toBe(3)
  })
})

describe('outcomes', () => {
  const routed = { routingRules: [{ conditions: [{ field: 'device', op: 'eq', value: 'mobile' }], destinationUrl: 'https://m.example.com/' }] }

  test('gates name the destination behind them, routed', async () => {
    for (const [fields, outcome] of [
      [{ password: 'correct-horse' }, 'password'],
      [{ captchaEnabled: true }, 'captcha'],
      [{ consentRequired: true }, 'consent'],
    ] as const) {
      const link = await api.make({ destinationUrl: 'https://example.com/gated', ...fields })
      await setRouting(api, link, routed)
      expect(await resolved(link.id, { userAgent: UA.iphone })).toMatchObject({ outcome, destinationUrl: 'https://m.example.com/', ruleId: expect.any(String) })
      expect(await resolved(link.id, { userAgent: UA.chrome })).toMatchObject({ outcome, destinationUrl: 'https://example.com/gated', ruleId: null })
    }
  })

  test('a test link is the sandbox, routed the same way', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/sandboxed' }, api.testKey)
    await setRouting(api, link, routed)
    expect(await resolved(link.id, { userAgent: UA.iphone }, api.testKey)).toMatchObject({ outcome: 'sandbox', destinationUrl: 'https://m.example.com/' })
    // A test key sees only test links.
    const live = await api.make()
    expect((await refusal(await resolve(live.id, {}, api.testKey))).status).toBe(404)
  })

  test('expired: the fallbackUrl, else gone; paused: gone; a crawler is never routed', async () => {
    const expiring = await api.make({ destinationUrl: 'https://example.com/soon', expiresAt: new Date(clock.now() + 60_000).toISOString() })
    await setRouting(api, expiring, routed)
    expect((await resolved(expiring.id, { userAgent: UA.iphone })).outcome).toBe('redirect')
    expect(await resolved(expiring.id, { userAgent: UA.iphone, at: new Date(clock.now() + 120_000).toISOString() })).toEqual({
      outcome: 'gone',
      destinationUrl: null,
      ruleId: null,
      variantId: null,
      trace: [],
    })
    const withFallback = await api.make({
      destinationUrl: 'https://example.com/soon',
      fallbackUrl: 'https://example.com/over',
      expiresAt: new Date(clock.now() + 60_000).toISOString(),
    })
    expect(await resolved(withFallback.id, { at: new Date(clock.now() + 120_000).toISOString() })).toMatchObject({
      outcome: 'fallback',
      destinationUrl: 'https://example.com/over',
    })
    const paused = await api.make({ destinationUrl: 'https://example.com/paused' })
    expect((await api.patch(paused.id, { isActive: false })).status).toBe(200)
    expect((await resolved(paused.id)).outcome).toBe('gone')
    const crawled = await api.make({ destinationUrl: 'https://example.com/preview' })
    await setRouting(api, crawled, { routingRules: [{ conditions: [{ field: 'device', op: 'not_exists' }], destinationUrl: 'https://example.com/routed' }] })
    expect(await resolved(crawled.id, { userAgent: CRAWLERS.facebook! })).toMatchObject({
      outcome: 'redirect',
      destinationUrl: 'https://example.com/preview',
      ruleId: null,
    })
    expect((await resolved(crawled.id, { userAgent: 'curl/8.0' })).ruleId).not.toBeNull()
  })

  test('a bridge page', async () => {
    const page = await body(await env.request('/v1/bridge-pages', { method: 'POST', key: api.key, json: { slug: 'resolve-bridge' } }))
    const link = await api.make({ destinationUrl: 'https://example.com/after-page', bridgePageId: page.data.id })
    expect(await resolved(link.id, { userAgent: UA.chrome })).toMatchObject({ outcome: 'bridge_page', destinationUrl: 'https://example.com/after-page' })
  })
})

describe('resolve records nothing and moves no limit', () => {
  test('clicks, counters and the limits are as before; real visits still count from where they were', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/limited', clickLimit: 2, uniqueIpLimit: 2 })
    await setRouting(api, link, {
      variants: [
        { destinationUrl: 'https://example.com/x', weight: 1 },
        { destinationUrl: 'https://example.com/y', weight: 1 },
      ],
    })
    expect((await visit(env, link.slug, { ip: '8.8.8.8' })).status).toBe(302)
    await env.rt.modules.clicks.buffer.flush()
    const before = { counters: await counters(env, link.id), clicks: (await clicksOf(env, link.id)).length }
    expect(before).toEqual({ counters: { total_clicks: 1, unique_clicks: 1 }, clicks: 1 })
    for (let i = 0; i < 5; i++) {
      expect((await resolved(link.id, { ip: `8.8.4.${i}`, userAgent: UA.chrome })).outcome).toBe('redirect')
    }
    await env.rt.modules.clicks.buffer.flush()
    expect({ counters: await counters(env, link.id), clicks: (await clicksOf(env, link.id)).length }).toEqual(before)
    // The second real click is still allowed (resolving took none of the two), the third is not.
    expect((await visit(env, link.slug, { ip: '8.8.4.4' })).status).toBe(302)
    expect((await resolved(link.id, { ip: '8.8.4.4' })).outcome).toBe('gone')
    expect((await visit(env, link.slug, { ip: '8.8.4.4' })).status).toBe(410)
    await env.rt.modules.clicks.buffer.flush()
    expect(await counters(env, link.id)).toEqual({ total_clicks: 2, unique_clicks: 2 })
  })

  test('uniqueIpLimit: a new address would be refused once the limit is reached, a known one let through', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/by-address', uniqueIpLimit: 1 })
    expect((await visit(env, link.slug, { ip: '8.8.8.8' })).status).toBe(302)
    expect((await resolved(link.id, { ip: '8.8.8.8' })).outcome).toBe('redirect')
    expect((await resolved(link.id, { ip: '1.1.1.1' })).outcome).toBe('gone')
    expect((await visit(env, link.slug, { ip: '8.8.8.8' })).status).toBe(302)
  })
})

describe('the request', () => {
  test('no body, an empty body: a visit with nothing known', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/plain' })
    const res = await env.request(`/v1/links/${link.id}/resolve`, { method: 'POST', key: api.key })
    expect(res.status).toBe(200)
    expect((await body(res)).data).toEqual({ destinationUrl: 'https://example.com/plain', ruleId: null, variantId: null, outcome: 'redirect', trace: [] })
    expect((await resolved(link.id, {})).destinationUrl).toBe('https://example.com/plain')
  })

  test('bad fields are 400 validation_failed naming them', async () => {
    const link = await api.make()
    for (const [json, path] of [
      [{ ip: 'not-an-address' }, 'ip'],
      [{ ip: '300.1.1.1' }, 'ip'],
      [{ country: 'Germany' }, 'country'],
      [{ at: 'yesterday' }, 'at'],
      [{ trigger: 'email' }, 'trigger'],
      [{ query: { a: 1 } }, 'query.a'],
      [{ planet: 'mars' }, 'planet'],
    ] as const) {
      const r = await refusal(await resolve(link.id, json))
      expect({ json, status: r.status, code: r.code }).toEqual({ json, status: 400, code: 'validation_failed' })
      expect(r.paths).toEqual([path])
    }
  })

  test('links:read is needed; another workspace’s link and an unknown id are 404', async () => {
    const link = await api.make()
    const acct = await account(env)
    const other = await acct.make()
    const reader = await makeKey(env.rt, (await body(await env.request('/v1/me', { key: api.key }))).data.workspace.slug, 'links:read')
    const stranger = await makeKey(env.rt, (await body(await env.request('/v1/me', { key: api.key }))).data.workspace.slug, 'domains:read')
    expect((await resolve(link.id, {}, reader.key)).status).toBe(200)
    expect(await refusal(await resolve(link.id, {}, stranger.key))).toMatchObject({ status: 403 })
    expect(await refusal(await resolve(other.id, {}))).toMatchObject({ status: 404, code: 'not_found' })
    expect(await refusal(await resolve('00000000-0000-4000-8000-000000000000', {}))).toMatchObject({ status: 404, code: 'not_found' })
    expect((await env.request(`/v1/links/${link.id}/resolve`, { method: 'GET', key: api.key })).status).toBe(405)
  })
})
