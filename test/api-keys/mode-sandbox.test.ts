// Test keys are sandboxed everywhere (spec section 1): a lnk_test_ key reads and changes only test records,
// across links, QR codes and analytics, and is refused (403) when it asks for live ones. A live key owns the
// workspace: its lists show live records unless it asks for test ones, and it may touch a test link by id.
// One workspace holds a live key, a test key, live links (with clicks) and test links.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { body, bootstrapAccount, makeKey, setup, type TestEnv } from '../helpers'
import { UA, visit } from '../redirect/_redirect'
import { call, expectError, expectOk } from './_keys'

const clock = new ManualClock(Date.UTC(2026, 4, 4, 12))
let env: TestEnv
let live: string
let sandbox: string
let liveLink: any
let otherLiveLink: any
let testLink: any
let otherTestLink: any

const get = (key: string, path: string) => call(env, key, path)
const slugs = (links: { slug: string }[]) => links.map((l) => l.slug).sort()

beforeAll(async () => {
  env = await setup({ clock, env: { LNK_TRUST_PROXY: '1' } })
  const acct = await bootstrapAccount(env.rt, 'Sandbox')
  live = acct.apiKey.key
  sandbox = (await makeKey(env.rt, acct.workspace.slug, '*', 'test')).key
  expect(sandbox.startsWith('lnk_test_')).toBe(true)
  const make = async (key: string, json: Record<string, unknown>) =>
    expectOk(await call(env, key, '/v1/links', { json: { destinationUrl: 'https://example.com/', ...json } }), 201)
  liveLink = await make(live, { slug: 'live-one', tags: ['shared'] })
  otherLiveLink = await make(live, { slug: 'live-two' })
  testLink = await make(sandbox, { slug: 'test-one', tags: ['shared'] })
  otherTestLink = await make(sandbox, { slug: 'test-two' })
  expect([liveLink.isTest, otherLiveLink.isTest, testLink.isTest, otherTestLink.isTest]).toEqual([false, false, true, true])

  // Two people's clicks on the live link; a visit to a test link records nothing.
  for (const ip of ['8.8.8.8', '9.9.9.9']) expect((await visit(env, 'live-one', { ip, ua: UA.chrome })).status).toBe(302)
  expect((await visit(env, 'test-one', { ip: '8.8.8.8', ua: UA.chrome })).status).toBe(200)
  await env.rt.modules.clicks.buffer.flush()
})
afterAll(() => env.cleanup())

describe('a test key and a live link', () => {
  test('GET /links/{id} is 404 not_found', async () => {
    await expectError(await get(sandbox, `/v1/links/${liveLink.id}`), 404, 'not_found')
  })

  test('PATCH is 404 and changes nothing', async () => {
    await expectError(await call(env, sandbox, `/v1/links/${liveLink.id}`, { method: 'PATCH', json: { title: 'hijacked' } }), 404, 'not_found')
    expect((await expectOk(await get(live, `/v1/links/${liveLink.id}`))).title).toBeNull()
  })

  test('DELETE is 404 and the link stays', async () => {
    await expectError(await call(env, sandbox, `/v1/links/${otherLiveLink.id}`, { method: 'DELETE' }), 404, 'not_found')
    expect((await get(live, `/v1/links/${otherLiveLink.id}`)).status).toBe(200)
  })

  test('GET /qr/{linkId} is 404, in every format', async () => {
    for (const format of ['png', 'svg', 'pdf']) await expectError(await get(sandbox, `/v1/qr/${liveLink.id}?format=${format}`), 404, 'not_found')
  })
})

describe('a test key and its own test links', () => {
  test('reads, changes, renders and deletes them', async () => {
    expect((await expectOk(await get(sandbox, `/v1/links/${testLink.id}`))).slug).toBe('test-one')
    const changed = await expectOk(await call(env, sandbox, `/v1/links/${testLink.id}`, { method: 'PATCH', json: { title: 'sandboxed' } }))
    expect(changed.title).toBe('sandboxed')
    const qr = await get(sandbox, `/v1/qr/${testLink.id}?format=svg`)
    expect(qr.status).toBe(200)
    expect(qr.headers.get('content-type')).toContain('image/svg+xml')
    await qr.arrayBuffer()
    const doomed = await expectOk(await call(env, sandbox, '/v1/links', { json: { destinationUrl: 'https://example.com/doomed' } }), 201)
    expect((await expectOk(await call(env, sandbox, `/v1/links/${doomed.id}`, { method: 'DELETE' }))).deleted).toBe(true)
  })
})

describe('GET /links', () => {
  test('a test key lists test links only, with or without mode=test, whatever the other filters', async () => {
    for (const query of ['', '?mode=test', '?perPage=100', '?tag=shared', '?search=one', '?include=qr']) {
      const page = await expectOk(await get(sandbox, `/v1/links${query}`))
      expect({ query, all: page.every((l: any) => l.isTest) }).toEqual({ query, all: true })
    }
    expect(slugs(await expectOk(await get(sandbox, '/v1/links')))).toEqual(['test-one', 'test-two'])
    expect(slugs(await expectOk(await get(sandbox, '/v1/links?tag=shared')))).toEqual(['test-one'])
  })

  test('a test key asking for mode=live or mode=all is 403 forbidden, with a message saying what to send', async () => {
    for (const mode of ['live', 'all']) {
      const json = await expectError(await get(sandbox, `/v1/links?mode=${mode}`), 403, 'forbidden')
      expect(json.error.message).toContain('test key')
      expect(json.error.message).toContain('mode=test')
    }
  })

  test('a live key lists live links by default; mode=test and mode=all are explicit filters', async () => {
    expect(slugs(await expectOk(await get(live, '/v1/links')))).toEqual(['live-one', 'live-two'])
    expect(slugs(await expectOk(await get(live, '/v1/links?mode=live')))).toEqual(['live-one', 'live-two'])
    expect(slugs(await expectOk(await get(live, '/v1/links?mode=test')))).toEqual(['test-one', 'test-two'])
    expect(slugs(await expectOk(await get(live, '/v1/links?mode=all')))).toEqual(['live-one', 'live-two', 'test-one', 'test-two'])
    const all = await get(live, '/v1/links?mode=all')
    expect((await body(all)).meta.pagination.total).toBe(4)
  })

  test('mode outside live, test and all is 400', async () => {
    await expectError(await get(live, '/v1/links?mode=both'), 400, 'validation_failed')
  })
})

describe('a live key and a test link', () => {
  test('reads and changes it by id, and renders its QR code', async () => {
    expect((await expectOk(await get(live, `/v1/links/${otherTestLink.id}`))).isTest).toBe(true)
    const changed = await expectOk(await call(env, live, `/v1/links/${otherTestLink.id}`, { method: 'PATCH', json: { title: 'seen by the owner' } }))
    expect(changed).toMatchObject({ title: 'seen by the owner', isTest: true })
    const qr = await get(live, `/v1/qr/${otherTestLink.id}`)
    expect(qr.status).toBe(200)
    await qr.arrayBuffer()
  })
})

describe('analytics', () => {
  const RANGE = 'from=2026-05-04&to=2026-05-04'

  test('a live key sees live figures and live links', async () => {
    const o = await expectOk(await get(live, `/v1/analytics/overview?${RANGE}`))
    expect(o.totals).toMatchObject({ clicks: 2, uniqueVisitors: 2, links: 2 })
    const top = await expectOk(await get(live, `/v1/analytics/top-links?${RANGE}`))
    expect(top.links.map((l: any) => l.slug)).toEqual(['live-one'])
  })

  test('a test key sees its sandbox: zero figures, its test links counted, never a live one in top links', async () => {
    const o = await expectOk(await get(sandbox, `/v1/analytics/overview?${RANGE}`))
    expect(o.totals).toEqual({ clicks: 0, uniqueVisitors: 0, botHits: 0, links: 2, conversions: 0, revenue: {} })
    for (const k of ['countries', 'referrers', 'browsers', 'os', 'devices']) expect(o.top[k]).toEqual([])
    const timeline = await expectOk(await get(sandbox, `/v1/analytics/timeline?${RANGE}&interval=hour`))
    expect(timeline.buckets).toHaveLength(24)
    expect(timeline.buckets.every((b: any) => b.clicks === 0 && b.uniqueClicks === 0)).toBe(true)
    for (const sort of ['clicks', 'uniqueClicks', 'conversions', 'revenue']) {
      expect((await expectOk(await get(sandbox, `/v1/analytics/top-links?${RANGE}&sort=${sort}`))).links).toEqual([])
    }
  })

  test("a test key naming a live link's id is 404, as on the links routes; its own test link answers zeros", async () => {
    for (const path of ['overview', 'timeline']) {
      await expectError(await get(sandbox, `/v1/analytics/${path}?${RANGE}&linkId=${liveLink.id}`), 404, 'not_found')
    }
    const own = await expectOk(await get(sandbox, `/v1/analytics/overview?${RANGE}&linkId=${testLink.id}`))
    expect(own.linkId).toBe(testLink.id)
    expect(own.totals).toMatchObject({ clicks: 0, links: 1 })
  })

  test('a live key stays on live data: a test link id is 404 to its analytics', async () => {
    await expectError(await get(live, `/v1/analytics/overview?${RANGE}&linkId=${testLink.id}`), 404, 'not_found')
  })
})
