// A routed link's analytics screen in a real browser against a real server: visits through the short link
// (a routing rule on a query parameter, A/B variants for the rest) show in the Variants and Rules panels
// with each destination, its share and its clicks and visitors, as GET /v1/analytics/breakdown counts them
// and as the redirects went. A link with neither shows no such panel. Checked at phone and desktop widths.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, DESKTOP, PHONE, startConsoleServer, UA, withConsole, type ConsoleServer } from './_console'

let server: ConsoleServer
let routed: any
let plain: any
/** Where the visits went: clicks and distinct addresses per destination. */
const went = new Map<string, { clicks: number; visitors: Set<string> }>()

async function visitOnce(url: string, ip: string) {
  const res = await fetch(url, { headers: { 'user-agent': UA.chrome, 'x-forwarded-for': ip, accept: 'text/html,application/xhtml+xml' }, redirect: 'manual' })
  expect(res.status).toBeGreaterThanOrEqual(301)
  expect(res.status).toBeLessThanOrEqual(308)
  const to = new URL(res.headers.get('location')!)
  const key = to.origin + to.pathname
  const seen = went.get(key) ?? { clicks: 0, visitors: new Set<string>() }
  seen.clicks++
  seen.visitors.add(ip)
  went.set(key, seen)
}

beforeAll(async () => {
  server = await startConsoleServer({ LNK_TRUST_PROXY: '1' })
  routed = await call(server, 'POST', '/links', {
    destinationUrl: 'https://example.com/home',
    title: 'Spring test',
    routingRules: [{ name: 'Newsletter', conditions: [{ field: 'query.src', op: 'eq', value: 'mail' }], destinationUrl: 'https://example.com/mail' }],
    variants: [
      { destinationUrl: 'https://example.com/red', weight: 70 },
      { destinationUrl: 'https://example.com/blue', weight: 30 },
    ],
  })
  plain = await call(server, 'POST', '/links', { destinationUrl: 'https://example.com/plain', title: 'Plain link' })
  // 12 visitors split by the variants (one of them twice), 2 from the newsletter (the rule).
  for (let i = 1; i <= 12; i++) await visitOnce(routed.shortUrl, `198.51.100.${i}`)
  await visitOnce(routed.shortUrl, '198.51.100.1')
  for (const ip of ['203.0.113.1', '203.0.113.2']) await visitOnce(`${routed.shortUrl}?src=mail`, ip)
  // The click buffer writes within about a second: wait until the API counts all 15.
  const deadline = Date.now() + 15_000
  while ((await call(server, 'GET', `/analytics/breakdown?dimension=variant&linkId=${routed.id}`)).totals.clicks < 15) {
    if (Date.now() > deadline) throw new Error('the clicks were not counted within 15 s')
    await Bun.sleep(200)
  }
})
afterAll(() => server.stop())

/** The cells of a panel's row for one variant or rule id: [name, destination, (share,) clicks, visitors]. */
const rowOf = (panel: string, id: string) =>
  `[...document.querySelectorAll('section.route-panel')].find((s) => s.querySelector('h2')?.textContent === ${JSON.stringify(panel)})
    ?.querySelector('tr[data-id=${JSON.stringify(id)}]') ?.querySelectorAll('th, td')`

describe('routing panels on a link analytics screen', () => {
  test('variants and rules show their destinations, shares, clicks and visitors', async () => {
    for (const size of [DESKTOP, PHONE]) {
      await withConsole(server, size, async (page) => {
        await page.signIn(server.api.key)
        await page.open(`/analytics/links/${routed.id}?range=24h`)
        await page.see('Analytics: Spring test')
        await page.waitFor(`document.querySelectorAll('section.route-panel table').length === 2`)

        const cells = (panel: string, id: string) => page.evaluate<string[]>(`[...(${rowOf(panel, id)} ?? [])].map((c) => c.textContent.trim())`)
        const [red, blue] = routed.variants
        const shares = ['70', '30']
        for (const [i, v] of [red, blue].entries()) {
          const got = went.get(v.destinationUrl) ?? { clicks: 0, visitors: new Set() }
          const row = await cells('Variants', v.id)
          expect(row[0]).toBe(`Variant ${'AB'[i]}`)
          expect(row[1]).toBe(v.destinationUrl)
          expect(row[2]).toContain(shares[i]!)
          expect(row.slice(3)).toEqual([String(got.clicks), String(got.visitors.size)])
        }
        expect(went.get(red.destinationUrl)!.clicks + (went.get(blue.destinationUrl)?.clicks ?? 0)).toBe(13)
        const rule = await cells('Rules', routed.routingRules[0].id)
        expect(rule).toEqual(['Newsletter', 'https://example.com/mail', '2', '2'])
        const text = await page.evaluate<string>(`document.querySelector('main').innerText`)
        expect(text).toContain('2 clicks in this range went elsewhere')
        expect(text).toContain('13 clicks in this range matched no rule')
        await page.checkScreen('analytics-variants')
      })
    }
  }, 60_000)

  test('a link without rules or variants has no such panels', async () => {
    await withConsole(server, PHONE, async (page) => {
      await page.signIn(server.api.key)
      await page.open(`/analytics/links/${plain.id}?range=24h`)
      await page.see('Analytics: Plain link')
      await page.see('No clicks or conversions of this link in this range.')
      expect(await page.evaluate<number>(`document.querySelectorAll('section.route-panel').length`)).toBe(0)
      await page.checkScreen('analytics-no-variants')
    })
  }, 30_000)
})
