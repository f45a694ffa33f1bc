// Bridge pages served from PostgreSQL, through the same entry the server uses: a page made over the API
// renders at /p/{slug}, a link shows its page, tracked buttons count; and with two nodes on one database, a
// change made on one is rendered by the other within a second (the bus notice, not the TTL: the clock
// stands still), a lost notice is made good by caches.reset and by the TTL, and both nodes' counts add up.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SHARED_CACHE_TTL_MS } from '../../src/modules/pages/serve'
import { ManualClock } from '../../src/platform/clock'
import { body, bootstrapAccount, type PgTestEnv, setupPg, within1s } from '../helpers'

const PERSON = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36'

const clock = new ManualClock(Date.UTC(2026, 2, 1, 12))
let a: PgTestEnv
let b: PgTestEnv
let key: string

beforeAll(async () => {
  a = await setupPg({ clock })
  b = await setupPg({ clock, database: a.database })
  key = (await bootstrapAccount(a.rt)).apiKey.key
})
afterAll(async () => {
  await b?.cleanup()
  await a?.cleanup()
})

const api = (env: PgTestEnv, path: string, init: RequestInit & { json?: unknown } = {}) => env.request(`/v1${path}`, { key, ...init })
const visit = (env: PgTestEnv, path: string, init: { method?: string; headers?: Record<string, string> } = {}) =>
  env.app.handle(new Request(`http://localhost:8080${path}`, { method: init.method ?? 'GET', headers: { 'user-agent': PERSON, ...init.headers } }))

async function page(env: PgTestEnv, json: Record<string, unknown> = {}) {
  const res = await api(env, '/bridge-pages', { method: 'POST', json })
  expect(res.status).toBe(201)
  return (await body(res)).data
}
async function block(env: PgTestEnv, pageId: string, json: Record<string, unknown>) {
  const res = await api(env, `/bridge-pages/${pageId}/blocks`, { method: 'POST', json })
  const payload = await body(res)
  expect({ status: res.status, error: payload.error }).toEqual({ status: 201, error: undefined })
  return payload.data
}
const counts = async (env: PgTestEnv, pageId: string) => {
  const data = (await body(await api(env, `/bridge-pages/${pageId}`))).data
  return { views: data.views, buttonClicks: data.buttonClicks }
}
const title = async (env: PgTestEnv, slug: string) => /<title>([^<]*)<\/title>/.exec(await (await visit(env, `/p/${slug}`)).text())?.[1]

describe('one node on PostgreSQL', () => {
  test('a page with blocks made over the API renders at /p/{slug}, with an ETag that answers 304, and HEAD without a body', async () => {
    const p = await page(a, { title: 'Hello <pg>' })
    await block(a, p.id, { type: 'heading', fields: { text: 'Served & rendered' } })
    await block(a, p.id, { type: 'text', fields: { markdown: 'From **PostgreSQL**.' } })
    const res = await visit(a, `/p/${p.slug}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('public, max-age=60')
    const html = await res.text()
    expect(html).toContain('Hello &#60;pg&#62;')
    expect(html).toContain('Served &#38; rendered')
    expect(html).toContain('<strong>PostgreSQL</strong>')
    const again = await visit(a, `/p/${p.slug}`, { headers: { 'if-none-match': res.headers.get('etag')! } })
    expect(again.status).toBe(304)
    const head = await visit(a, `/p/${p.slug}`, { method: 'HEAD' })
    expect({ status: head.status, body: await head.text() }).toEqual({ status: 200, body: '' })
    expect((await visit(a, '/p/no-such-page-here')).status).toBe(404)
  })

  test('a link with bridgePageId shows its page; the view is counted', async () => {
    const p = await page(a, { title: 'Shown by a PostgreSQL link' })
    const link = (await body(await api(a, '/links', { method: 'POST', json: { destinationUrl: 'https://example.com/real', bridgePageId: p.id } }))).data
    const res = await visit(a, `/${link.slug}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('private, no-store')
    expect(await res.text()).toContain('Shown by a PostgreSQL link')
    await a.rt.modules.pages.server.flush()
    expect((await counts(a, p.id)).views).toBe(1)
  })

  test('a tracked button counts its clicks, then sends the visitor on', async () => {
    const p = await page(a, { title: 'Buttons' })
    const shop = await block(a, p.id, { type: 'button', fields: { label: 'Shop', url: 'https://shop.example.com/?q=1' } })
    expect(await (await visit(a, `/p/${p.slug}`)).text()).toContain(`href="/_/b/${shop.id}"`)
    for (let i = 0; i < 3; i++) {
      const go = await visit(a, `/_/b/${shop.id}`)
      expect({ status: go.status, location: go.headers.get('location') }).toEqual({ status: 302, location: 'https://shop.example.com/?q=1' })
    }
    expect((await visit(a, '/_/b/blk_doesnotexist')).status).toBe(404)
    await a.rt.modules.pages.server.flush()
    expect(await counts(a, p.id)).toEqual({ views: 1, buttonClicks: 3 })
    const blocks = (await body(await api(a, `/bridge-pages/${p.id}/blocks`))).data
    expect(blocks.find((x: { id: string }) => x.id === shop.id).clicks).toBe(3)
  })
})

describe('two nodes on one database', () => {
  test('a PATCH on node B is rendered by node A within a second', async () => {
    const p = await page(a, { title: 'Before' })
    expect(await title(a, p.slug)).toBe('Before')
    expect((await api(b, `/bridge-pages/${p.id}`, { method: 'PATCH', json: { title: 'After' } })).status).toBe(200)
    expect(await within1s(() => title(a, p.slug), 'After')).toBe('After')
    // A block added on B, and the page deleted on B, reach A the same way.
    await block(b, p.id, { type: 'heading', fields: { text: 'Added on B' } })
    expect(await within1s(async () => (await (await visit(a, `/p/${p.slug}`)).text()).includes('Added on B'), true)).toBe(true)
    expect((await api(b, `/bridge-pages/${p.id}`, { method: 'DELETE' })).status).toBe(200)
    expect(await within1s(async () => (await visit(a, `/p/${p.slug}`)).status, 404)).toBe(404)
  })

  test('a change no notice announced shows after caches.reset, and after the TTL', async () => {
    const p = await page(a, { title: 'Cached' })
    expect(await title(a, p.slug)).toBe('Cached')
    const rename = async (to: string) => {
      if (a.rt.store.engine !== 'pg') throw new Error('node A serves from PostgreSQL')
      await a.rt.store.sql`UPDATE bridge_pages SET title = ${to}, version = version + 1 WHERE id = ${p.id}`
    }
    // Written behind the nodes' backs: A keeps serving what it rendered.
    await rename('Quietly renamed')
    expect(await title(a, p.slug)).toBe('Cached')
    a.rt.bus.emitLocal('caches.reset', {})
    expect(await title(a, p.slug)).toBe('Quietly renamed')
    await rename('Renamed again')
    clock.advance(SHARED_CACHE_TTL_MS - 1)
    expect(await title(a, p.slug)).toBe('Quietly renamed')
    clock.advance(1)
    expect(await title(a, p.slug)).toBe('Renamed again')
  })

  test('views and clicks counted on both nodes add up exactly, however the flushes overlap', async () => {
    const p = await page(a, { title: 'Counted twice' })
    const btn = await block(a, p.id, { type: 'button', fields: { label: 'Go', url: 'https://example.com/go' } })
    const hits = async (env: PgTestEnv, views: number, clicks: number) => {
      for (let i = 0; i < views; i++) expect((await visit(env, `/p/${p.slug}`)).status).toBe(200)
      for (let i = 0; i < clicks; i++) expect((await visit(env, `/_/b/${btn.id}`)).status).toBe(302)
    }
    await Promise.all([hits(a, 17, 5), hits(b, 23, 9)])
    await Promise.all([a.rt.modules.pages.server.flush(), b.rt.modules.pages.server.flush()])
    await Promise.all([hits(a, 3, 1), hits(b, 2, 4)])
    await Promise.all([b.rt.modules.pages.server.flush(), a.rt.modules.pages.server.flush()])
    expect(await counts(a, p.id)).toEqual({ views: 45, buttonClicks: 19 })
    expect(await counts(b, p.id)).toEqual({ views: 45, buttonClicks: 19 })
  })
})
