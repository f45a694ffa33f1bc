// What visitors meet, through the same entry the server uses: {short domain}/p/{slug} (HTML, headers,
// ETag, HEAD, test pages, changes shown at once), tracked buttons at /_/b/{blockId} (redirect, counting,
// social items by index), a link showing a page instead of redirecting, and the counts that feed the page's
// analytics (bots and HEAD never count).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { body, bootstrapAccount, makeKey, setup, type TestEnv } from '../helpers'

let env: TestEnv
let key: string
let testKey: string

beforeAll(async () => {
  env = await setup()
  const account = await bootstrapAccount(env.rt)
  key = account.apiKey.key
  testKey = (await makeKey(env.rt, account.workspace.id, '*', 'test')).key
})
afterAll(() => env.cleanup())

const PERSON = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36'
const BOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'

const api = (path: string, init: RequestInit & { json?: unknown; key?: string } = {}) => env.request(`/v1${path}`, { key, ...init })
const visit = (path: string, init: { method?: string; ua?: string; headers?: Record<string, string>; host?: string } = {}) =>
  env.app.handle(
    new Request(`http://${init.host ?? 'localhost:8080'}${path}`, {
      method: init.method ?? 'GET',
      headers: { 'user-agent': init.ua ?? PERSON, ...init.headers },
    }),
  )

async function page(json: Record<string, unknown> = {}, k = key) {
  const res = await api('/bridge-pages', { method: 'POST', json, key: k })
  expect(res.status).toBe(201)
  return (await body(res)).data
}
async function block(pageId: string, json: Record<string, unknown>, k = key) {
  const res = await api(`/bridge-pages/${pageId}/blocks`, { method: 'POST', json, key: k })
  const payload = await body(res)
  expect({ status: res.status, error: payload.error }).toEqual({ status: 201, error: undefined })
  return payload.data
}
const flushed = async () => {
  await env.rt.modules.pages.server.flush()
  await env.rt.modules.clicks.buffer.flush()
}

describe('/p/{slug}', () => {
  test("server-rendered HTML with the page's CSP, no script, an ETag that answers 304, and HEAD without a body", async () => {
    const p = await page({ title: 'Hello <visitors>', description: 'About "us"' })
    await block(p.id, { type: 'heading', fields: { text: 'Welcome & more' } })
    const res = await visit(`/p/${p.slug}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const csp = res.headers.get('content-security-policy')!
    expect(csp).toContain("default-src 'none'")
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/)
    expect(csp).not.toContain('script-src')
    expect(res.headers.get('cache-control')).toBe('public, max-age=60')
    const html = await res.text()
    expect(html).toContain('Hello &#60;visitors&#62;')
    expect(html).toContain('Welcome &#38; more')
    expect(html).not.toContain('<script')
    expect(html.match(/<h1[\s>]/g)).toHaveLength(1)
    const etag = res.headers.get('etag')!
    expect(etag).toMatch(/^"\d+-[A-Za-z0-9_-]+"$/)
    const again = await visit(`/p/${p.slug}`, { headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe('')
    const head = await visit(`/p/${p.slug}`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
  })

  test('a change shows at once with a new ETag; a deleted page and an unknown slug are the 404 page', async () => {
    const p = await page({ title: 'Before' })
    const first = await visit(`/p/${p.slug}`)
    expect(await first.text()).toContain('Before')
    await api(`/bridge-pages/${p.id}`, { method: 'PATCH', json: { title: 'After' } })
    const second = await visit(`/p/${p.slug}`)
    expect(await second.text()).toContain('After')
    expect(second.headers.get('etag')).not.toBe(first.headers.get('etag'))
    await api(`/bridge-pages/${p.id}`, { method: 'DELETE' })
    const gone = await visit(`/p/${p.slug}`)
    expect(gone.status).toBe(404)
    expect(gone.headers.get('content-type')).toContain('text/html')
    expect((await visit('/p/never-made-this-page')).status).toBe(404)
    // A POST never reaches a page.
    expect((await visit(`/p/${p.slug}`, { method: 'POST' })).status).toBe(404)
  })

  test('a test page carries a banner, noindex and no-store, and counts nothing', async () => {
    const p = await page({ title: 'Sandboxed page' }, testKey)
    const res = await visit(`/p/${p.slug}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('x-robots-tag')).toBe('noindex')
    expect(await res.text()).toMatch(/Test page/i)
    await flushed()
    expect((await body(await api(`/bridge-pages/${p.id}`, { key: testKey }))).data.views).toBe(0)
  })
})

describe('buttons and counting', () => {
  test('a raw-URL button goes through /_/b/{blockId}: counted, then 302 to its URL; bots and HEAD are not counted', async () => {
    const p = await page({ title: 'Counting' })
    const b = await block(p.id, { type: 'button', fields: { label: 'Shop', url: 'https://shop.example.com/?q=1' } })
    const html = await (await visit(`/p/${p.slug}`)).text()
    expect(html).toContain(`href="/_/b/${b.id}"`)
    expect(html).not.toContain('https://shop.example.com/?q=1"')
    await visit(`/p/${p.slug}`, { ua: BOT })
    await visit(`/p/${p.slug}`, { method: 'HEAD' })
    const go = await visit(`/_/b/${b.id}`)
    expect(go.status).toBe(302)
    expect(go.headers.get('location')).toBe('https://shop.example.com/?q=1')
    expect(go.headers.get('cache-control')).toBe('private, no-store')
    expect((await visit(`/_/b/${b.id}`, { ua: BOT })).status).toBe(302)
    await flushed()
    const counted = (await body(await api(`/bridge-pages/${p.id}`))).data
    expect({ views: counted.views, buttonClicks: counted.buttonClicks }).toEqual({ views: 1, buttonClicks: 1 })
    const blocks = (await body(await api(`/bridge-pages/${p.id}/blocks`))).data
    expect(blocks.find((x: { id: string }) => x.id === b.id).clicks).toBe(1)
    const listed = (await body(await api('/bridge-pages?perPage=100'))).data.find((x: { id: string }) => x.id === p.id)
    expect(listed).toMatchObject({ views: 1, buttonClicks: 1 })
  })

  test('social links are tracked by index; an index past the list, a non-button block and an unknown block are 404', async () => {
    const p = await page()
    const s = await block(p.id, {
      type: 'social_links',
      fields: {
        items: [
          { network: 'github', url: 'https://github.com/example' },
          { network: 'website', url: 'https://example.org/' },
        ],
      },
    })
    const h = await block(p.id, { type: 'heading' })
    const second = await visit(`/_/b/${s.id}?i=1`)
    expect(second.headers.get('location')).toBe('https://example.org/')
    expect((await visit(`/_/b/${s.id}?i=7`)).status).toBe(404)
    expect((await visit(`/_/b/${s.id}?i=-1`)).status).toBe(404)
    expect((await visit(`/_/b/${h.id}`)).status).toBe(404)
    expect((await visit('/_/b/blk_doesnotexist')).status).toBe(404)
  })

  test('a button naming a workspace link points at its short URL, and drops it once the link is inactive', async () => {
    const link = (await body(await api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/target' } }))).data
    const p = await page()
    await block(p.id, { type: 'button', fields: { label: 'Via link', url: null, linkId: link.id } })
    expect(await (await visit(`/p/${p.slug}`)).text()).toContain(`href="${link.shortUrl}"`)
    await api(`/links/${link.id}`, { method: 'PATCH', json: { isActive: false } })
    expect(await (await visit(`/p/${p.slug}`)).text()).not.toContain(`href="${link.shortUrl}"`)
  })

  test("a test page's button names its URL on a page and sends nobody on", async () => {
    const p = await page({}, testKey)
    const b = await block(p.id, { type: 'button', fields: { url: 'https://example.com/test-dest' } }, testKey)
    const res = await visit(`/_/b/${b.id}`)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('https://example.com/test-dest')
  })
})

describe('a link showing a bridge page', () => {
  test('the short URL answers the page instead of redirecting; the click and the view are both counted', async () => {
    const p = await page({ title: 'Shown by a link' })
    const link = (await body(await api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/real', bridgePageId: p.id } }))).data
    expect(link.bridgePageId).toBe(p.id)
    const res = await visit(`/${link.slug}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('private, no-store')
    expect(await res.text()).toContain('Shown by a link')
    await flushed()
    expect((await body(await api(`/links/${link.id}`))).data.totalClicks).toBe(1)
    expect((await body(await api(`/bridge-pages/${p.id}`))).data.views).toBe(1)
    // The page cannot go while the link shows it; once the link lets go, it can.
    const refused = await api(`/bridge-pages/${p.id}`, { method: 'DELETE' })
    expect({ status: refused.status, code: (await body(refused)).error.code }).toEqual({ status: 409, code: 'conflict' })
    await api(`/links/${link.id}`, { method: 'PATCH', json: { bridgePageId: null } })
    const redirect = await visit(`/${link.slug}`)
    expect(redirect.status).toBe(302)
    expect((await api(`/bridge-pages/${p.id}`, { method: 'DELETE' })).status).toBe(200)
  })

  test("bridgePageId must be a page of the workspace in the link's mode", async () => {
    const live = await page()
    const res = await api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/', bridgePageId: live.id }, key: testKey })
    const payload = await body(res)
    expect({ status: res.status, paths: payload.error.details.issues.map((i: { path: string }) => i.path) }).toEqual({ status: 400, paths: ['bridgePageId'] })
    const unknown = await api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/', bridgePageId: 'bp_nope' } })
    expect(unknown.status).toBe(400)
  })
})

describe('pages on a custom domain', () => {
  const DOMAIN = 'pages.customer.test'
  test("a page made on the workspace's domain answers there only; another workspace's page never answers on it", async () => {
    const me = await bootstrapAccount(env.rt)
    env.rt.modules.domains.served.set({
      id: 'dom_pages',
      domain: DOMAIN,
      workspaceId: me.workspace.id,
      rootRedirectUrl: null,
      notFoundUrl: null,
      expiredUrl: null,
      acceptsNewLinks: true,
    })
    const mine = await page({ title: 'On my domain', domain: DOMAIN, slug: 'about' }, me.apiKey.key)
    expect(mine.url).toBe(`http://${DOMAIN}/p/about`)
    expect(await (await visit('/p/about', { host: DOMAIN })).text()).toContain('On my domain')
    // Not on the shared pool: the slug belongs to the custom domain.
    expect((await visit('/p/about')).status).toBe(404)
    // Another workspace cannot put a page on it, and its pool pages do not answer there.
    const theirs = await page({ title: 'Someone else', slug: 'theirs' })
    const refused = await api('/bridge-pages', { method: 'POST', json: { domain: DOMAIN } })
    expect(refused.status).toBe(400)
    expect((await visit(`/p/${theirs.slug}`, { host: DOMAIN })).status).toBe(404)
    const b = await block(theirs.id, { type: 'button', fields: { url: 'https://example.com/theirs' } })
    expect((await visit(`/_/b/${b.id}`, { host: DOMAIN })).status).toBe(404)
    expect((await visit(`/_/b/${b.id}`)).status).toBe(302)
  })
})
