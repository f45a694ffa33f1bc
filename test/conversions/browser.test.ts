// The snippet of docs/conversions.md, as written there, in a real browser (headless Chromium) against a
// loopback lnk: the visitor follows a tracked short link to a destination on another origin, the snippet
// keeps lnk_cid and takes it out of the address bar, and its beacons (sendBeacon, then the fetch fallback)
// record conversions, as does a cross-origin application/json fetch after its preflight.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../helpers'
import { startLnk, withBrowserPage, type Lnk } from '../redirect/_server'
import { account, conversionRows, sql, trackedLink, UA, type Api } from './_conversions'

/** The html block after the snippet marker in docs/conversions.md. */
function docsSnippet(): string {
  const doc = readFileSync(join(ROOT, 'docs/conversions.md'), 'utf8')
  const m = /<!-- lnk-conversion-snippet[^>]*-->\s*```html\n([\s\S]*?)\n```/.exec(doc)
  if (!m) throw new Error('docs/conversions.md has no snippet block after its marker')
  return m[1]!
}

let lnk: Lnk
let api: Api
let site: ReturnType<typeof Bun.serve>
let siteOrigin: string

beforeAll(async () => {
  lnk = await startLnk()
  api = await account(lnk.env)
  const snippet = docsSnippet().replace("'https://lnk.example.com/v1/conversions'", `'${lnk.origin}/v1/conversions'`)
  if (!snippet.includes(lnk.origin)) throw new Error('the snippet no longer names https://lnk.example.com/v1/conversions as its ENDPOINT')
  // The destination site: another origin (another port) serving pages with the snippet.
  site = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      const url = new URL(request.url)
      if (url.pathname === '/favicon.ico') return new Response(null, { status: 404 })
      return new Response(`<!doctype html><html><head><title>Shop</title></head><body><h1>${url.pathname}</h1>${snippet}</body></html>`, {
        headers: { 'content-type': 'text/html; charset=utf-8' },
      })
    },
  })
  siteOrigin = `http://127.0.0.1:${site.port}`
})
afterAll(async () => {
  site?.stop(true)
  await lnk?.stop()
})

/** Waits until the conversion named `eventName` is stored (beacons are sent in the background). */
async function stored(eventName: string) {
  for (let i = 0; i < 200; i++) {
    const row = (await conversionRows(lnk.env)).find((r) => r.event_name === eventName)
    if (row) return row
    await Bun.sleep(25)
  }
  throw new Error(`no conversion "${eventName}" was recorded`)
}

test('the documented snippet records conversions from a destination page in Chromium', async () => {
  const link = await trackedLink(api, { destinationUrl: `${siteOrigin}/welcome?campaign=spring` })
  await withBrowserPage({ userAgent: UA.chrome }, async (page) => {
    await page.goto(link.shortUrl)
    // Landed on the destination; lnk_cid was kept and taken out of the address bar, the site's own query stays.
    expect(await page.evaluate('location.href')).toBe(`${siteOrigin}/welcome?campaign=spring`)
    const clickId = await page.evaluate<string>("sessionStorage.getItem('lnk_cid')")
    expect(clickId).toMatch(/^clk_[0-9A-Za-z]{20}$/)

    // sendBeacon, as text/plain, on the landing page itself (the click may not even be written yet).
    await page.evaluate(
      'window.beacons = []; const send = navigator.sendBeacon.bind(navigator); navigator.sendBeacon = (u, b) => (beacons.push(typeof b), send(u, b))',
    )
    expect(await page.evaluate("lnkConvert('signup', { metadata: { plan: 'pro' } })")).toBe(true)
    expect(await page.evaluate('beacons')).toEqual(['string'])
    const signup = await stored('signup')
    expect(signup).toMatchObject({ click_id: clickId, link_id: link.id, workspace_id: api.workspaceId })
    expect(JSON.parse(signup.metadata!)).toEqual({ plan: 'pro' })

    // Another page of the site, without lnk_cid in its URL: the id comes from sessionStorage.
    await page.goto(`${siteOrigin}/checkout`)
    expect(await page.evaluate("lnkConvert('purchase', { value: 49.5, currency: 'EUR', metadata: { orderId: 'A-1001' } })")).toBe(true)
    expect(await stored('purchase')).toMatchObject({ click_id: clickId, value: 49.5, currency: 'EUR' })

    // Without sendBeacon: the fetch fallback (keepalive, text/plain).
    expect(await page.evaluate("navigator.sendBeacon = undefined; lnkConvert('fallback')")).toBe(true)
    expect(await stored('fallback')).toMatchObject({ click_id: clickId })

    // A cross-origin application/json fetch: preflight, then a readable answer (CORS on the POST).
    const answer = await page.evaluate<{ status: number; body: any }>(
      `fetch('${lnk.origin}/v1/conversions', { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ clickId: sessionStorage.getItem('lnk_cid'), eventName: 'json' }) })
        .then(async (r) => ({ status: r.status, body: await r.json() }))`,
    )
    expect(answer.status).toBe(201)
    expect(answer.body.data).toMatchObject({ clickId, eventName: 'json', duplicate: false })
    // Refusals are readable cross-origin too.
    const refused = await page.evaluate<{ status: number; body: any }>(
      `fetch('${lnk.origin}/v1/conversions', { method: 'POST', body: '{"eventName":"no-click"}' }).then(async (r) => ({ status: r.status, body: await ` +
        `r.json() }))`,
    )
    expect(refused.status).toBe(400)
    expect(refused.body.error.code).toBe('validation_failed')

    // A visitor who did not come through a tracked link sends nothing.
    expect(await page.evaluate("sessionStorage.removeItem('lnk_cid'); lnkConvert('nobody')")).toBe(false)
  })
  const rows = await conversionRows(lnk.env)
  expect(rows.map((r) => r.event_name).sort()).toEqual(['fallback', 'json', 'purchase', 'signup'])
  // One click, the one the redirect counted, carries all of them.
  expect(await sql(lnk.env, 'SELECT count(*) AS n FROM clicks WHERE link_id = ? AND NOT is_bot', link.id)).toEqual([{ n: 1 }])
}, 90_000)
