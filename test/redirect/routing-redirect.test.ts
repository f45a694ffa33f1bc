// Routing rules and A/B variants on real redirects (contract 7.1), over a loopback socket served by
// startServer() as `lnk serve` does, behind one trusted proxy so X-Forwarded-For names the visitor (addresses
// the embedded IP database places: 8.8.8.8 in the US, 5.9.0.1 in Germany). Each rule field, the variant split
// and its stickiness, UTM fields, query forwarding, lnk_cid and deep links on the chosen destination, the
// gates and the crawler preview before any routing, and what a click records: rule_id/variant_id in the
// clicks table and link.clicked at a real receiver on 127.0.0.1. Rules and variants are set over the API.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { RoutingRule, Variant } from '../../src/db/schema'
import { LOOPBACK_ENV, receiver } from '../webhooks/_webhooks'
import { account, attrs, CRAWLERS, setCookie, sql, texts, UA, type Api } from './_redirect'
import { startLnk, type Lnk } from './_server'

let lnk: Lnk
let api: Api
const hook = receiver()

beforeAll(async () => {
  lnk = await startLnk({ LNK_TRUST_PROXY: '1', ...LOOPBACK_ENV })
  api = await account(lnk.env)
  const res = await lnk.env.request('/v1/webhooks', { method: 'POST', key: api.key, json: { url: hook.url(), events: ['link.clicked'] } })
  expect(res.status).toBe(201)
})
afterAll(async () => {
  hook.stop()
  await lnk.stop()
})

interface Go {
  ip?: string
  ua?: string
  query?: string
  headers?: Record<string, string>
  method?: string
  body?: string
}

/** A visit over the socket, not followed: X-Forwarded-For is the visitor's address (one proxy trusted). */
function go(slug: string, o: Go = {}): Promise<Response> {
  const headers: Record<string, string> = { 'user-agent': o.ua ?? UA.chrome, accept: 'text/html', 'x-forwarded-for': o.ip ?? '203.0.113.10', ...o.headers }
  return fetch(`${lnk.origin}/${slug}${o.query ?? ''}`, {
    method: o.method ?? 'GET',
    headers,
    body: o.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  })
}

/** Where a visit was sent (the Location of its 302). */
async function where(slug: string, o: Go = {}): Promise<string> {
  const res = await go(slug, o)
  expect(res.status).toBe(302)
  return res.headers.get('location')!
}

let ids = 0
const rule = (destinationUrl: string, conditions: RoutingRule['conditions'], o: Partial<RoutingRule> = {}): RoutingRule => ({
  id: `rr_e2e${++ids}`,
  name: null,
  match: 'all',
  conditions,
  destinationUrl,
  ...o,
})

/**
 * A link created over the API with the rules and variants given (sent without ids); each then takes the id
 * the service gave it, so the checks below can name what a click recorded.
 */
async function routedLink(json: Record<string, unknown>, routing: { rules?: RoutingRule[]; variants?: Variant[] }, key = api.key) {
  const unnamed = <T extends { id: string }>(items: T[] | undefined) => (items === undefined ? null : items.map(({ id: _, ...rest }) => rest))
  const link = await api.make({ ...json, routingRules: unnamed(routing.rules), variants: unnamed(routing.variants) }, key)
  for (const [sent, got] of [
    [routing.rules ?? [], link.routingRules ?? []],
    [routing.variants ?? [], link.variants ?? []],
  ] as [{ id: string; destinationUrl: string }[], { id: string; destinationUrl: string }[]][]) {
    expect(got.map((x) => x.destinationUrl)).toEqual(sent.map((x) => x.destinationUrl))
    sent.forEach((x, i) => {
      x.id = got[i]!.id
    })
  }
  return link
}

async function stored(linkId: string) {
  await lnk.env.rt.modules.clicks.buffer.flush()
  return sql<{ id: string; rule_id: string | null; variant_id: string | null; is_bot: number | boolean }>(
    lnk.env,
    'SELECT id, rule_id, variant_id, is_bot FROM clicks WHERE link_id = ?',
    linkId,
  )
}

describe('rules choose the destination by what is known of the visit', () => {
  test('country and continent by the visitor’s address', async () => {
    const de = rule('https://example.de/', [{ field: 'country', op: 'eq', value: 'DE' }])
    const na = rule('https://example.com/na', [{ field: 'continent', op: 'in', value: ['NA', 'SA'] }])
    const link = await routedLink({ destinationUrl: 'https://example.com/world' }, { rules: [de, na] })
    expect(await where(link.slug, { ip: '5.9.0.1' })).toBe('https://example.de/')
    expect(await where(link.slug, { ip: '8.8.8.8' })).toBe('https://example.com/na')
    // A documentation address has no country: neither rule holds.
    expect(await where(link.slug, { ip: '203.0.113.77' })).toBe('https://example.com/world')
    const rows = await stored(link.id)
    expect(rows.map((r) => r.rule_id).sort()).toEqual([de.id, na.id, null].sort())
  })

  test('device and OS by the User-Agent; the first matching rule wins', async () => {
    const ios = rule('https://apps.example/ios', [
      { field: 'device', op: 'eq', value: 'mobile' },
      { field: 'os', op: 'eq', value: 'ios' },
    ])
    const mobile = rule('https://m.example/', [{ field: 'device', op: 'eq', value: 'mobile' }])
    const link = await routedLink({ destinationUrl: 'https://example.com/desk' }, { rules: [ios, mobile] })
    expect(await where(link.slug, { ua: UA.iphone })).toBe('https://apps.example/ios')
    expect(await where(link.slug, { ua: UA.android })).toBe('https://m.example/')
    expect(await where(link.slug, { ua: UA.firefox })).toBe('https://example.com/desk')
  })

  test('language and locale by Accept-Language', async () => {
    const gb = rule('https://example.co.uk/', [{ field: 'locale', op: 'eq', value: 'en-gb' }])
    const pt = rule('https://example.pt/', [{ field: 'language', op: 'eq', value: 'pt' }])
    const link = await routedLink({ destinationUrl: 'https://example.com/en' }, { rules: [gb, pt] })
    const lang = (value: string) => ({ headers: { 'accept-language': value } })
    expect(await where(link.slug, lang('pt-BR,pt;q=0.9,en;q=0.5'))).toBe('https://example.pt/')
    expect(await where(link.slug, lang('en-GB,en;q=0.8'))).toBe('https://example.co.uk/')
    expect(await where(link.slug, lang('en-US'))).toBe('https://example.com/en')
    expect(await where(link.slug)).toBe('https://example.com/en')
  })

  test('a query parameter of the visit, which is then forwarded to the chosen destination', async () => {
    const nl = rule('https://example.com/newsletter?from=lnk', [{ field: 'query.src', op: 'eq', value: 'mail' }])
    const link = await routedLink({ destinationUrl: 'https://example.com/plain' }, { rules: [nl] })
    expect(await where(link.slug, { query: '?src=mail&x=1' })).toBe('https://example.com/newsletter?from=lnk&src=mail&x=1')
    expect(await where(link.slug, { query: '?src=web' })).toBe('https://example.com/plain?src=web')
  })

  test('the address against addresses and CIDRs, v4 and v6; `any` of several conditions', async () => {
    const office = rule(
      'https://intranet.example/',
      [
        { field: 'ip', op: 'in', value: ['198.51.100.0/24', '2001:db8:1::/48'] },
        { field: 'query.staff', op: 'exists' },
      ],
      { match: 'any' },
    )
    const link = await routedLink({ destinationUrl: 'https://example.com/public' }, { rules: [office] })
    expect(await where(link.slug, { ip: '198.51.100.77' })).toBe('https://intranet.example/')
    expect(await where(link.slug, { ip: '2001:db8:1::5' })).toBe('https://intranet.example/')
    expect(await where(link.slug, { ip: '203.0.113.5', query: '?staff' })).toBe('https://intranet.example/?staff=')
    expect(await where(link.slug, { ip: '203.0.113.5' })).toBe('https://example.com/public')
    expect(await where(link.slug, { ip: '2001:db8:2::5' })).toBe('https://example.com/public')
  })

  test('a time window: only the rule whose window holds the visit matches', async () => {
    const now = Date.now()
    const iso = (ms: number) => new Date(ms).toISOString()
    const later = rule('https://example.com/later', [{ field: 'time', op: 'gte', value: iso(now + 3_600_000) }])
    const past = rule('https://example.com/past', [{ field: 'time', op: 'lt', value: iso(now - 3_600_000) }])
    const live = rule('https://example.com/live', [
      { field: 'time', op: 'gte', value: iso(now - 3_600_000) },
      { field: 'time', op: 'lt', value: iso(now + 3_600_000) },
    ])
    const link = await routedLink({ destinationUrl: 'https://example.com/off-air' }, { rules: [later, past, live] })
    expect(await where(link.slug)).toBe('https://example.com/live')
  })
})

describe('A/B variants', () => {
  const A: Variant = { id: 'var_e2e_a', destinationUrl: 'https://example.com/a', weight: 70 }
  const B: Variant = { id: 'var_e2e_b', destinationUrl: 'https://example.com/b', weight: 30 }

  test('400 distinct visitors split by the weights; each click records its variant', async () => {
    const link = await routedLink({ destinationUrl: 'https://example.com/control' }, { variants: [A, B] })
    const seen = new Map<string, number>()
    for (let i = 0; i < 400; i++) {
      const to = await where(link.slug, { ip: `2001:db8:77::${(i + 1).toString(16)}` })
      seen.set(to, (seen.get(to) ?? 0) + 1)
    }
    expect([...seen.keys()].sort()).toEqual([A.destinationUrl, B.destinationUrl])
    // 70 % of 400 is 280; a binomial standard deviation is about 9: 40 either side is over 4 of them.
    expect(Math.abs(seen.get(A.destinationUrl)! - 280)).toBeLessThanOrEqual(40)
    const rows = await stored(link.id)
    expect(rows).toHaveLength(400)
    expect(rows.every((r) => r.rule_id === null)).toBe(true)
    expect(rows.filter((r) => r.variant_id === A.id)).toHaveLength(seen.get(A.destinationUrl)!)
    expect(rows.filter((r) => r.variant_id === B.id)).toHaveLength(seen.get(B.destinationUrl)!)
  })

  test('the same visitor always gets the same variant, with no cookie set', async () => {
    const C: Variant = { ...B, id: 'var_e2e_c', destinationUrl: 'https://example.com/c' }
    const link = await routedLink({ destinationUrl: 'https://example.com/control' }, { variants: [A, B, C] })
    for (let v = 0; v < 5; v++) {
      const ip = `198.51.100.${200 + v}`
      const first = await go(link.slug, { ip })
      expect(first.headers.get('set-cookie')).toBeNull()
      const to = first.headers.get('location')
      expect([A, B, C].map((x) => x.destinationUrl)).toContain(to!)
      for (let i = 0; i < 8; i++) expect(await where(link.slug, { ip })).toBe(to!)
    }
  })
})

describe('the chosen destination gets what the link’s own would', () => {
  test('UTM fields, the visitor’s query and lnk_cid apply to the chosen destination', async () => {
    const sale = rule('https://shop.example/sale?utm_source=old&keep=1', [{ field: 'query.promo', op: 'eq', value: 'spring' }])
    const link = await routedLink(
      { destinationUrl: 'https://example.com/home', utmSource: 'lnk', utmCampaign: 'spring', conversionTracking: true },
      { rules: [sale] },
    )
    const to = new URL(await where(link.slug, { query: '?promo=spring&ref=x&lnk_cid=forged' }))
    expect(`${to.origin}${to.pathname}`).toBe('https://shop.example/sale')
    expect([...to.searchParams.keys()]).toEqual(['utm_source', 'keep', 'utm_campaign', 'promo', 'ref', 'lnk_cid'])
    expect(to.searchParams.get('utm_source')).toBe('lnk')
    const [row] = await stored(link.id)
    expect(to.searchParams.get('lnk_cid')).toBe(row!.id)
    expect(row!.rule_id).toBe(sale.id)
  })

  test('deep links open the app of the chosen destination', async () => {
    const yt = 'https://www.youtube.com/watch?v=dQw4w9WgXcQ'
    const app = rule(yt, [{ field: 'device', op: 'eq', value: 'mobile' }])
    const link = await routedLink({ destinationUrl: 'https://example.com/video', deepLinkEnabled: true }, { rules: [app] })
    const page = await go(link.slug, { ua: UA.iphone })
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('Opening YouTube')
    expect(await attrs(html, 'a', 'href')).toEqual(['youtube://www.youtube.com/watch?v=dQw4w9WgXcQ', yt])
    expect(await where(link.slug, { ua: UA.chrome })).toBe('https://example.com/video')
  })

  test('a routed link’s permanent redirect is never cached by others: each visitor may go elsewhere', async () => {
    const de = rule('https://example.de/', [{ field: 'country', op: 'eq', value: 'DE' }])
    const link = await routedLink({ destinationUrl: 'https://example.com/perm', redirectStatus: 301 }, { rules: [de] })
    const res = await go(link.slug, { ip: '5.9.0.1' })
    expect({ status: res.status, location: res.headers.get('location'), cache: res.headers.get('cache-control') }).toEqual({
      status: 301,
      location: 'https://example.de/',
      cache: 'private, no-store',
    })
  })
})

describe('before any routing', () => {
  const everyone = () => rule('https://routed.example/', [{ field: 'ip', op: 'in', value: ['0.0.0.0/0', '::/0'] }], { name: 'Everyone' })

  test('the password gate comes first; past it, the visit is routed', async () => {
    const r = everyone()
    const link = await routedLink({ destinationUrl: 'https://example.com/locked', password: 'open sesame' }, { rules: [r] })
    const page = await go(link.slug)
    expect(page.status).toBe(200)
    expect(page.headers.get('location')).toBeNull()
    const html = await page.text()
    expect(html).toContain('Password required')
    expect(html).not.toContain('routed.example')
    const body = new URLSearchParams({ gate: 'password', password: 'open sesame' }).toString()
    const passed = await go(link.slug, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(passed.status).toBe(303)
    expect(await where(link.slug, { headers: { cookie: setCookie(passed).pair } })).toBe('https://routed.example/')
    const rows = await stored(link.id)
    expect(rows.map((x) => x.rule_id)).toEqual([r.id])
  })

  test('the consent page names where Continue leads: the chosen destination', async () => {
    const link = await routedLink({ destinationUrl: 'https://example.com/consent-own', consentRequired: true }, { rules: [everyone()] })
    const page = await go(link.slug, { query: '?a=1' })
    expect(page.status).toBe(200)
    expect(await texts(await page.text(), 'p.dest')).toEqual(['https://routed.example/?a=1'])
  })

  test('crawlers are never routed: their preview names the link’s own destination, their hit no rule', async () => {
    const r = everyone()
    const link = await routedLink({ destinationUrl: 'https://example.com/card', title: 'Card' }, { rules: [r] })
    const page = await go(link.slug, { ua: CRAWLERS.facebook! })
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(await attrs(html, 'a', 'href')).toEqual(['https://example.com/card'])
    expect(html).not.toContain('routed.example')
    expect(await where(link.slug)).toBe('https://routed.example/')
    const rows = await stored(link.id)
    expect(rows.map((x) => [Boolean(x.is_bot), x.rule_id]).sort()).toEqual([
      [false, r.id],
      [true, null],
    ])
  })

  test('a test link is routed the same way: its sandbox page names the destination and the rule that chose it', async () => {
    const de = rule('https://example.de/sandbox', [{ field: 'country', op: 'eq', value: 'DE' }], { name: 'Germany' })
    const link = await routedLink({ destinationUrl: 'https://example.com/sandbox' }, { rules: [de] }, api.testKey)
    const there = await (await go(link.slug, { ip: '5.9.0.1', query: '?q=1' })).text()
    expect(await texts(there, 'p.dest')).toEqual(['https://example.de/sandbox?q=1'])
    expect(there).toContain('It would send this visit to:')
    expect(there).toContain(`Chosen by the routing rule “Germany” (${de.id})`)
    const elsewhere = await (await go(link.slug, { ip: '8.8.8.8' })).text()
    expect(await texts(elsewhere, 'p.dest')).toEqual(['https://example.com/sandbox'])
    expect(await stored(link.id)).toEqual([])
  })
})

test('link.clicked reaches a real receiver with the rule, the variant and the chosen destination', async () => {
  const de = rule('https://example.de/hook', [{ field: 'country', op: 'eq', value: 'DE' }])
  const variants: Variant[] = [
    { id: 'var_hook_a', destinationUrl: 'https://example.com/hook-a', weight: 1 },
    { id: 'var_hook_b', destinationUrl: 'https://example.com/hook-b', weight: 1 },
  ]
  const link = await routedLink({ destinationUrl: 'https://example.com/hook' }, { rules: [de], variants })
  const sent = [await where(link.slug, { ip: '5.9.0.1' }), await where(link.slug, { ip: '8.8.8.8' }), await where(link.slug, { ip: '203.0.113.44' })]
  const rows = await stored(link.id)
  await lnk.env.rt.worker.runDue()
  const deadline = Date.now() + 10_000
  const delivered = () => hook.received.map((r) => JSON.parse(r.body)).filter((b) => b.type === 'link.clicked' && b.data.link.id === link.id)
  while (delivered().length < 3 && Date.now() < deadline) {
    await lnk.env.rt.worker.runDue()
    await Bun.sleep(50)
  }
  const clicks = delivered().map((b) => b.data.click)
  expect(clicks).toHaveLength(3)
  const byId = new Map(rows.map((r) => [r.id, r]))
  for (const c of clicks) {
    const row = byId.get(c.id)!
    expect([c.ruleId, c.variantId]).toEqual([row.rule_id, row.variant_id])
    const chosen = c.ruleId === de.id ? de.destinationUrl : variants.find((v) => v.id === c.variantId)!.destinationUrl
    expect(c.destinationUrl).toBe(chosen)
  }
  expect(clicks.map((c) => c.destinationUrl).sort()).toEqual([...sent].sort())
  expect(clicks.filter((c) => c.ruleId === de.id)).toHaveLength(1)
  expect(clicks.filter((c) => c.ruleId === null && c.variantId !== null)).toHaveLength(2)
  // The link part still names the link's own destination.
  expect(delivered()[0].data.link.destinationUrl).toBe('https://example.com/hook')
})
