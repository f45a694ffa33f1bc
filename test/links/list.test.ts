// GET /v1/links: pagination (spec 4.1, 8), newest first, search, filters, include=qr and workspace isolation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { body, makeKey, setup, type TestEnv } from '../helpers'
import { account, expectLinkShape } from './_links'

const clock = new ManualClock(Date.UTC(2026, 2, 1, 8, 0, 0))
let env: TestEnv
beforeAll(async () => {
  env = await setup({ clock, env: { LNK_SHORT_DOMAINS: 'localhost:8080,go.example' } })
})
afterAll(() => env.cleanup())

type Api = Awaited<ReturnType<typeof account>>

/** Creates a link one second after the previous one, so "newest first" has one right answer. */
async function make(api: Api, json: Record<string, unknown> = {}, key?: string) {
  clock.advance(1000)
  return api.make(json, key)
}

async function list(api: Api, query = '') {
  const res = await api.list(query)
  const payload = await body(res)
  if (res.status !== 200) throw new Error(`GET /v1/links${query} answered ${res.status}: ${JSON.stringify(payload)}`)
  return payload as { success: true; data: any[]; meta: { pagination: { page: number; perPage: number; total: number; totalPages: number } } }
}

const slugsOf = async (api: Api, query: string) => (await list(api, query)).data.map((l) => l.slug).sort()

describe('pagination', () => {
  test('an empty workspace answers an empty page with meta.pagination', async () => {
    const api = await account(env)
    const res = await api.list()
    expect(res.status).toBe(200)
    expect(await body(res)).toEqual({ success: true, data: [], meta: { pagination: { page: 1, perPage: 25, total: 0, totalPages: 0 }, nextCursor: null } })
  })

  test('default page 1 and perPage 25; newest first; later pages continue; beyond the end is empty', async () => {
    const api = await account(env)
    const created: any[] = []
    for (let i = 0; i < 30; i++) created.push(await make(api, { slug: `page-${i}` }))
    const newestFirst = created.map((l) => l.id).reverse()

    const first = await list(api)
    expect(first.meta.pagination).toEqual({ page: 1, perPage: 25, total: 30, totalPages: 2 })
    expect(first.data.map((l) => l.id)).toEqual(newestFirst.slice(0, 25))
    for (const link of first.data) expectLinkShape(link)

    const second = await list(api, '?page=2')
    expect(second.meta.pagination).toEqual({ page: 2, perPage: 25, total: 30, totalPages: 2 })
    expect(second.data.map((l) => l.id)).toEqual(newestFirst.slice(25))

    const beyond = await list(api, '?page=3')
    expect(beyond.data).toEqual([])
    expect(beyond.meta.pagination).toEqual({ page: 3, perPage: 25, total: 30, totalPages: 2 })

    const small = await list(api, '?page=4&perPage=7')
    expect(small.meta.pagination).toEqual({ page: 4, perPage: 7, total: 30, totalPages: 5 })
    expect(small.data.map((l) => l.id)).toEqual(newestFirst.slice(21, 28))

    const all = await list(api, '?perPage=100')
    expect(all.meta.pagination).toEqual({ page: 1, perPage: 100, total: 30, totalPages: 1 })
    expect(all.data.map((l) => l.id)).toEqual(newestFirst)
    // The same link as a single read.
    expect(all.data[0]).toEqual((await body(await api.get(created[29].id))).data)
  })

  test('newest first holds for links created within the same millisecond', async () => {
    const api = await account(env)
    clock.advance(1000)
    // Five requests answered within one clock tick (ManualClock does not move between them).
    for (let i = 0; i < 5; i++) await api.make({ slug: `same-ms-${i}` })
    expect((await list(api)).data.map((l) => l.slug)).toEqual(['same-ms-4', 'same-ms-3', 'same-ms-2', 'same-ms-1', 'same-ms-0'])
  })

  for (const query of ['?perPage=101', '?perPage=0', '?perPage=-1', '?page=0', '?page=-2', '?perPage=abc', '?page=1.5', '?perPage=10.5']) {
    test(`${query} is 400`, async () => {
      const api = await account(env)
      const res = await api.list(query)
      expect(res.status).toBe(400)
      const payload = await body(res)
      expect(payload.success).toBe(false)
      expect(['validation_failed', 'invalid_request']).toContain(payload.error.code)
    })
  }

  test('an absurdly large page number is answered, never a 500', async () => {
    const api = await account(env)
    await make(api, { slug: 'huge-page' })
    for (const page of ['9007199254740991', '100000000000000000000']) {
      const res = await api.list(`?page=${page}`)
      expect(res.status).toBeLessThan(500)
      const payload = await body(res)
      if (res.status === 200) expect(payload.data).toEqual([])
      else expect({ status: res.status, code: payload.error.code }).toEqual({ status: 400, code: 'validation_failed' })
    }
  })

  test('perPage=100 is the maximum and allowed', async () => {
    const api = await account(env)
    expect((await list(api, '?perPage=100')).meta.pagination.perPage).toBe(100)
  })
})

describe('search', () => {
  let api: Api
  beforeAll(async () => {
    api = await account(env)
    await make(api, { slug: 'Summer-Sale', destinationUrl: 'https://shop.example.com/a' })
    await make(api, { slug: 'winter', title: 'The WINTER Campaign', destinationUrl: 'https://example.org/b' })
    await make(api, { slug: 'docs', destinationUrl: 'https://Docs.Example.net/Guide' })
    await make(api, { slug: 'tagged', tags: ['Newsletter', 'promo'], destinationUrl: 'https://example.org/c' })
    await make(api, { slug: 'percent', title: '100% off', destinationUrl: 'https://example.org/d' })
    await make(api, { slug: 'under_score', title: 'a_b', destinationUrl: 'https://example.org/e' })
    await make(api, { slug: 'axb', title: 'axb plain', destinationUrl: 'https://example.org/f' })
    await make(api, { slug: 'two-tags', tags: ['x', 'y'], destinationUrl: 'https://example.org/g' })
    await make(api, { slug: 'quoted', tags: ['5" screen'], destinationUrl: 'https://example.net/q' })
    await make(api, { slug: 'windows', title: 'C:\\temp', destinationUrl: 'https://example.net/w' })
  })

  test('matches the slug, case-insensitively', async () => {
    expect(await slugsOf(api, '?search=summer')).toEqual(['Summer-Sale'])
    expect(await slugsOf(api, '?search=SUMMER-sALE')).toEqual(['Summer-Sale'])
  })

  test('matches the title, case-insensitively', async () => {
    expect(await slugsOf(api, '?search=winter%20campaign')).toEqual(['winter'])
    expect(await slugsOf(api, '?search=CAMPAIGN')).toEqual(['winter'])
  })

  test('matches the destination, case-insensitively', async () => {
    expect(await slugsOf(api, '?search=docs.example.NET')).toEqual(['docs'])
    expect(await slugsOf(api, '?search=guide')).toEqual(['docs'])
    expect(await slugsOf(api, '?search=shop.example')).toEqual(['Summer-Sale'])
  })

  test('matches tags, case-insensitively', async () => {
    expect(await slugsOf(api, '?search=newsletter')).toEqual(['tagged'])
    expect(await slugsOf(api, '?search=PROMO')).toEqual(['tagged'])
  })

  test('% in the search is a literal character, not a wildcard', async () => {
    expect(await slugsOf(api, `?search=${encodeURIComponent('%')}`)).toEqual(['percent'])
    expect(await slugsOf(api, `?search=${encodeURIComponent('0% off')}`)).toEqual(['percent'])
    expect(await slugsOf(api, `?search=${encodeURIComponent('1%f')}`)).toEqual([])
  })

  test('_ in the search is a literal character, not a wildcard', async () => {
    expect(await slugsOf(api, '?search=_')).toEqual(['under_score'])
    expect(await slugsOf(api, '?search=a_b')).toEqual(['under_score'])
    expect(await slugsOf(api, '?search=p_a')).toEqual([])
  })

  test('a backslash in the search is literal too', async () => {
    // Only the title C:\temp holds a backslash (the tag 5" screen does not).
    expect(await slugsOf(api, `?search=${encodeURIComponent('\\')}`)).toEqual(['windows'])
    expect(await slugsOf(api, `?search=${encodeURIComponent(':\\t')}`)).toEqual(['windows'])
  })

  test('search does not match the JSON syntax the tags are stored in', async () => {
    // Tags are a list of strings: a search for punctuation of their storage format matches no tag.
    for (const q of ['","', '[', '[]', '"x"', '"y"]']) {
      expect({ q, slugs: await slugsOf(api, `?search=${encodeURIComponent(q)}`) }).toEqual({ q, slugs: [] })
    }
    // The only quote in any searchable text is the one inside the tag 5" screen.
    expect(await slugsOf(api, `?search=${encodeURIComponent('"')}`)).toEqual(['quoted'])
  })

  test('a tag with a quote in it is found by what it says', async () => {
    expect(await slugsOf(api, `?search=${encodeURIComponent('5" screen')}`)).toEqual(['quoted'])
    expect(await slugsOf(api, `?tag=${encodeURIComponent('5" screen')}`)).toEqual(['quoted'])
  })

  test('a search that matches nothing answers an empty page with total 0', async () => {
    const page = await list(api, '?search=nothing-like-this')
    expect(page.data).toEqual([])
    expect(page.meta.pagination).toEqual({ page: 1, perPage: 25, total: 0, totalPages: 0 })
  })

  test('total counts the matches, not the workspace', async () => {
    const page = await list(api, '?search=example.org&perPage=2')
    expect(page.meta.pagination).toEqual({ page: 1, perPage: 2, total: 6, totalPages: 3 })
  })

  test('an empty search lists everything', async () => {
    expect((await list(api, '?search=')).meta.pagination.total).toBe(10)
  })

  test('non-ASCII letters are matched case-insensitively too', async () => {
    const intl = await account(env)
    await make(intl, { slug: 'apfel', title: 'Äpfel und Öl' })
    expect(await slugsOf(intl, `?search=${encodeURIComponent('äpfel')}`)).toEqual(['apfel'])
    expect(await slugsOf(intl, `?search=${encodeURIComponent('ÖL')}`)).toEqual(['apfel'])
  })
})

describe('filters', () => {
  let api: Api
  let testKey: string
  beforeAll(async () => {
    api = await account(env)
    testKey = (await makeKey(env.rt, api.workspaceSlug, '*', 'test')).key
    await make(api, { slug: 't-news', tags: ['news'] })
    await make(api, { slug: 't-newsletter', tags: ['newsletter'] })
    await make(api, { slug: 't-two', tags: ['x', 'news'] })
    await make(api, { slug: 't-underscore', tags: ['a_b'] })
    await make(api, { slug: 't-axb', tags: ['axb'] })
    await make(api, { slug: 't-percent', tags: ['50%'] })
    await make(api, { slug: 't-upper', tags: ['Promo'] })
    await make(api, { slug: 'go-1', domain: 'go.example' })
    await make(api, { slug: 'go-2', domain: 'go.example', tags: ['news'] })
    const archived = await make(api, { slug: 'archived-1' })
    expect((await api.patch(archived.id, { isArchived: true })).status).toBe(200)
    await make(api, { slug: 'sandbox-1' }, testKey)
    await make(api, { slug: 'sandbox-2', tags: ['news'] }, testKey)
  })

  test('tag matches whole tags only, never a substring', async () => {
    expect(await slugsOf(api, '?tag=news')).toEqual(['go-2', 't-news', 't-two'])
    expect(await slugsOf(api, '?tag=news&mode=all')).toEqual(['go-2', 'sandbox-2', 't-news', 't-two'].sort())
    expect(await slugsOf(api, '?tag=newsletter')).toEqual(['t-newsletter'])
    expect(await slugsOf(api, '?tag=new')).toEqual([])
    expect(await slugsOf(api, '?tag=x')).toEqual(['t-two'])
  })

  test('tag is exact: case matters', async () => {
    expect(await slugsOf(api, '?tag=Promo')).toEqual(['t-upper'])
    expect(await slugsOf(api, '?tag=promo')).toEqual([])
    expect(await slugsOf(api, '?tag=PROMO')).toEqual([])
  })

  test('a tag with _ or % matches that tag literally', async () => {
    expect(await slugsOf(api, '?tag=a_b')).toEqual(['t-underscore'])
    expect(await slugsOf(api, `?tag=${encodeURIComponent('50%')}`)).toEqual(['t-percent'])
    expect(await slugsOf(api, `?tag=${encodeURIComponent('5%')}`)).toEqual([])
  })

  test('domain keeps the links of that domain', async () => {
    expect(await slugsOf(api, '?domain=go.example')).toEqual(['go-1', 'go-2'])
    expect(await slugsOf(api, '?domain=GO.EXAMPLE')).toEqual(['go-1', 'go-2'])
    const local = await list(api, `?domain=${encodeURIComponent('localhost:8080')}&perPage=100`)
    expect(local.meta.pagination.total).toBe(8)
    expect(local.data.every((l) => l.domain === 'localhost:8080')).toBe(true)
    expect((await list(api, `?domain=${encodeURIComponent('localhost:8080')}&mode=all`)).meta.pagination.total).toBe(10)
    expect(await slugsOf(api, '?domain=elsewhere.example')).toEqual([])
  })

  test('archived=true keeps archived links, archived=false the others, none both', async () => {
    expect(await slugsOf(api, '?archived=true')).toEqual(['archived-1'])
    const notArchived = await list(api, '?archived=false&perPage=100')
    expect(notArchived.meta.pagination.total).toBe(9)
    expect(notArchived.data.every((l) => l.isArchived === false)).toBe(true)
    expect((await list(api)).meta.pagination.total).toBe(10)
    expect((await list(api, '?archived=false&mode=all')).meta.pagination.total).toBe(11)
  })

  test('a live key lists live links by default; mode=test keeps sandboxed links, mode=live the others, mode=all both', async () => {
    expect(await slugsOf(api, '?mode=test')).toEqual(['sandbox-1', 'sandbox-2'])
    const live = await list(api, '?mode=live&perPage=100')
    expect(live.meta.pagination.total).toBe(10)
    expect(live.data.every((l) => l.isTest === false)).toBe(true)
    const byDefault = await list(api, '?perPage=100')
    expect(byDefault.data.map((l) => l.id)).toEqual(live.data.map((l) => l.id))
    const all = await list(api, '?mode=all&perPage=100')
    expect(all.meta.pagination.total).toBe(12)
    expect(
      all.data
        .filter((l) => l.isTest)
        .map((l) => l.slug)
        .sort(),
    ).toEqual(['sandbox-1', 'sandbox-2'])
  })

  test('filters combine with each other and with search', async () => {
    expect(await slugsOf(api, '?tag=news&mode=live')).toEqual(['go-2', 't-news', 't-two'])
    expect(await slugsOf(api, '?tag=news&domain=go.example')).toEqual(['go-2'])
    expect(await slugsOf(api, '?search=t-n&tag=news')).toEqual(['t-news'])
    expect(await slugsOf(api, '?archived=true&mode=test')).toEqual([])
  })

  for (const query of ['?archived=maybe', '?mode=sandbox', '?mode=LIVE', '?include=svg', '?include=qr,svg']) {
    test(`${query} is 400`, async () => {
      const res = await api.list(query)
      expect(res.status).toBe(400)
      expect((await body(res)).success).toBe(false)
    })
  }
})

describe('include=qr', () => {
  let api: Api
  beforeAll(async () => {
    api = await account(env)
    for (let i = 0; i < 3; i++) await make(api, { slug: `qr-${i}` })
  })

  test('attaches the qr object to each link; off by default', async () => {
    const page = await list(api, '?include=qr')
    expect(page.data).toHaveLength(3)
    for (const link of page.data) {
      expect(link.qr.svg.startsWith('<svg')).toBe(true)
      expect(link.qr.png).toBe(`http://localhost:8080/v1/qr/render?data=${encodeURIComponent(link.shortUrl)}&size=512`)
    }
    for (const link of (await list(api)).data) expect(link).not.toHaveProperty('qr')
  })

  test('perPage=51 with include=qr is 400 qr_page_too_large; 50 is fine; 51 without qr is fine', async () => {
    const res = await api.list('?include=qr&perPage=51')
    expect(res.status).toBe(400)
    const payload = await body(res)
    expect(payload.success).toBe(false)
    expect(payload.error.code).toBe('qr_page_too_large')
    expect(typeof payload.error.message).toBe('string')
    expect((await api.list('?include=qr&perPage=100')).status).toBe(400)
    const fifty = await list(api, '?include=qr&perPage=50')
    expect(fifty.meta.pagination.perPage).toBe(50)
    expect(fifty.data.every((l) => typeof l.qr?.svg === 'string')).toBe(true)
    expect((await api.list('?perPage=51')).status).toBe(200)
  })
})

describe('workspaces', () => {
  test("another workspace's links never appear, whatever the query", async () => {
    const mine = await account(env)
    const theirs = await account(env)
    const own = await make(mine, { slug: 'mine-shared-word', tags: ['shared'], title: 'shared' })
    await make(theirs, { slug: 'theirs-shared-word', tags: ['shared'], title: 'shared' })
    await make(theirs, { slug: 'theirs-go', domain: 'go.example', tags: ['shared'] })
    for (const query of ['', '?search=shared', '?tag=shared', '?domain=go.example', '?mode=live', '?archived=false', '?perPage=100', '?include=qr']) {
      const page = await list(mine, query)
      expect({ query, ids: page.data.map((l) => l.id) }).toEqual({ query, ids: query === '?domain=go.example' ? [] : [own.id] })
      expect(page.meta.pagination.total).toBe(page.data.length)
    }
  })

  test('without a key the list is 401', async () => {
    const res = await env.request('/v1/links')
    expect(res.status).toBe(401)
    expect((await body(res)).error.code).toBe('unauthorized')
  })
})
