// GET /v1/links (contract 7.3): every filter, every sort in both orders, keyset walks with cursor and
// meta.nextCursor (stable while links are created and deleted), page numbers beside them, the key's scope, and
// lastClickedAt as the click flush keeps it. Over HTTP, on the run's engine.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { body, bootstrapAccount, makeKey, setup, type TestEnv } from '../helpers'
import { visit } from '../redirect/_redirect'
import { account, expectValidation, newFolder } from './_links'

const T0 = Date.UTC(2026, 2, 1, 8, 0, 0)
const clock = new ManualClock(T0)
let env: TestEnv
type Api = Awaited<ReturnType<typeof account>>
let api: Api
/** Real folders of the workspace (a link's folderId must name one), by the short names the cases use. */
const F: Record<'web' | 'mail', string> = { web: '', mail: '' }
/** The fixture's links as created, by slug. */
const made: Record<string, any> = {}

async function list(query: string, key = api.key) {
  const res = await api.list(query, key)
  const payload = await body(res)
  if (res.status !== 200) throw new Error(`GET /v1/links${query} answered ${res.status}: ${JSON.stringify(payload)}`)
  return payload as { data: any[]; meta: { pagination?: { page: number; perPage: number; total: number; totalPages: number }; nextCursor: string | null } }
}

const slugs = async (query: string, key?: string) => (await list(query, key)).data.map((l) => l.slug)

/** Every page of a keyset walk, following meta.nextCursor from an empty cursor; bounded. */
async function walk(query: string, perPage: number, between?: (page: number) => Promise<void>) {
  const seen: string[] = []
  let cursor = ''
  for (let page = 0; page < 200; page++) {
    const got = await list(`?${query}&perPage=${perPage}&cursor=${encodeURIComponent(cursor)}`)
    expect(got.meta.pagination).toBeUndefined()
    seen.push(...got.data.map((l) => l.slug))
    if (got.meta.nextCursor === null) return seen
    expect(got.data).toHaveLength(perPage)
    cursor = got.meta.nextCursor
    if (between) await between(page)
  }
  throw new Error('the walk did not end within 200 pages')
}

/** Byte order of UTF-8, as the API promises for text and ids. */
const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** The order the API promises: by the field (nulls last in either order), ties by id in the same direction. */
function expected(links: any[], sort: string, order: 'asc' | 'desc') {
  const value = (l: any) =>
    sort === 'createdAt' || sort === 'updatedAt' || sort === 'lastClickedAt' ? (l[sort] === null ? null : Date.parse(l[sort])) : l[sort]
  const sign = order === 'asc' ? 1 : -1
  return [...links]
    .sort((a, b) => {
      const va = value(a)
      const vb = value(b)
      if (va === null || vb === null) {
        if (va !== vb) return va === null ? 1 : -1
      } else if (va !== vb) {
        return sign * (typeof va === 'string' ? bytes(va, vb) : va - vb)
      }
      return sign * bytes(a.id, b.id)
    })
    .map((l) => l.slug)
}

async function click(slug: string, at: number) {
  clock.set(at)
  const res = await visit(env, slug, { ip: '198.51.100.7' })
  expect(res.status).toBe(302)
}

beforeAll(async () => {
  env = await setup({ clock, env: { LNK_SHORT_DOMAINS: 'localhost:8080,go.example' } })
  api = await account(env)
  for (const name of ['web', 'mail'] as const) F[name] = await api.folder()
  const fixture: [string, Record<string, unknown>][] = [
    ['a-one', { title: 'Banana', tags: ['spring', 'promo'], folderId: F.web, campaignId: 'cmp_1' }],
    ['b-two', { title: 'apple', tags: ['spring'], folderId: F.web }],
    ['c-three', { title: null, tags: ['autumn'], folderId: F.mail, campaignId: 'cmp_1' }],
    ['d-four', { title: 'Cherry', campaignId: 'cmp_2', domain: 'go.example' }],
    ['e-five', { title: 'Banana', tags: ['promo'] }],
    ['f-six', { title: null, folderId: F.mail, domain: 'go.example' }],
    ['g-seven', { title: 'Zebra sale', tags: ['spring'], campaignId: 'cmp_2' }],
  ]
  // Two links share a second (ties broken by id); the rest one second apart.
  for (const [i, [slug, json]] of fixture.entries()) {
    if (i !== 4) clock.advance(1000)
    made[slug] = await api.make({ slug, ...json })
  }
  clock.advance(1000)
  expect((await api.patch(made['c-three'].id, { isArchived: true })).status).toBe(200)
  clock.advance(1000)
  expect((await api.patch(made['d-four'].id, { isActive: false })).status).toBe(200)
  clock.advance(1000)
  expect((await api.patch(made['a-one'].id, { description: 'touched last' })).status).toBe(200)
  const test = await makeKey(env.rt, api.workspaceSlug, '*', 'test')
  made['t-test'] = await api.make({ slug: 't-test', title: 'Sandbox', tags: ['spring'] }, test.key)
  // Clicks: b-two three times, a-one and e-five once each at different times; the rest never.
  await click('b-two', T0 + 100_000)
  await click('b-two', T0 + 101_000)
  await click('a-one', T0 + 105_000)
  await click('e-five', T0 + 103_000)
  await click('b-two', T0 + 102_000)
  await env.rt.modules.clicks.buffer.flush()
  clock.set(T0 + 200_000)
})
afterAll(() => env.cleanup())

describe('lastClickedAt', () => {
  test('every Link carries it: null before any click, the newest counted click after the flush', async () => {
    const all = (await list('?perPage=100')).data
    const at = Object.fromEntries(all.map((l) => [l.slug, [l.lastClickedAt, l.totalClicks]]))
    expect(at).toEqual({
      'a-one': [new Date(T0 + 105_000).toISOString(), 1],
      'b-two': [new Date(T0 + 102_000).toISOString(), 3],
      'c-three': [null, 0],
      'd-four': [null, 0],
      'e-five': [new Date(T0 + 103_000).toISOString(), 1],
      'f-six': [null, 0],
      'g-seven': [null, 0],
    })
    expect((await body(await api.get(made['a-one'].id))).data.lastClickedAt).toBe(new Date(T0 + 105_000).toISOString())
  })

  test('an older click flushed later never moves it back; a newer one moves it on', async () => {
    const fresh = await api.make({ slug: 'clicked-twice' })
    await click('clicked-twice', T0 + 150_000)
    await env.rt.modules.clicks.buffer.flush()
    await click('clicked-twice', T0 + 140_000)
    await env.rt.modules.clicks.buffer.flush()
    const read = async () => (await body(await api.get(fresh.id))).data
    expect(await read()).toMatchObject({ totalClicks: 2, lastClickedAt: new Date(T0 + 150_000).toISOString() })
    await click('clicked-twice', T0 + 160_000)
    await env.rt.modules.clicks.buffer.flush()
    expect(await read()).toMatchObject({ totalClicks: 3, lastClickedAt: new Date(T0 + 160_000).toISOString() })
    expect((await api.del(fresh.id)).status).toBe(200)
  })
})

describe('filters', () => {
  const sorted = async (q: string, key?: string) => (await slugs(q, key)).sort()
  test('tag, folderId, campaignId and domain keep exact matches', async () => {
    expect(await sorted('?tag=spring')).toEqual(['a-one', 'b-two', 'g-seven'])
    expect(await sorted('?tag=Spring')).toEqual([])
    expect(await sorted(`?folderId=${F.web}`)).toEqual(['a-one', 'b-two'])
    expect(await sorted(`?folderId=${F.mail}`)).toEqual(['c-three', 'f-six'])
    expect(await sorted('?folderId=fld_none')).toEqual([])
    expect(await sorted('?campaignId=cmp_1')).toEqual(['a-one', 'c-three'])
    expect(await sorted('?campaignId=cmp_2')).toEqual(['d-four', 'g-seven'])
    expect(await sorted('?domain=go.example')).toEqual(['d-four', 'f-six'])
    expect(await sorted('?domain=GO.example')).toEqual(['d-four', 'f-six'])
  })

  test('isArchived, isActive and isTest (and archived, the former name)', async () => {
    expect(await sorted('?isArchived=true')).toEqual(['c-three'])
    expect(await sorted('?isArchived=false')).toEqual(['a-one', 'b-two', 'd-four', 'e-five', 'f-six', 'g-seven'])
    expect(await sorted('?archived=true')).toEqual(['c-three'])
    expect(await sorted('?isActive=false')).toEqual(['d-four'])
    expect((await sorted('?isActive=true')).length).toBe(6)
    expect(await sorted('?isTest=true')).toEqual(['t-test'])
    expect(await sorted('?isTest=false')).toEqual(await sorted(''))
    expect(await sorted('?isTest=true&mode=all')).toEqual(['t-test'])
    expect(await sorted('?mode=all&tag=spring')).toEqual(['a-one', 'b-two', 'g-seven', 't-test'])
  })

  test('filters combine with each other, with search and with every sort', async () => {
    expect(await sorted(`?tag=spring&folderId=${F.web}`)).toEqual(['a-one', 'b-two'])
    expect(await sorted('?tag=promo&isArchived=false&campaignId=cmp_1')).toEqual(['a-one'])
    expect(await sorted('?search=banana&tag=promo')).toEqual(['a-one', 'e-five'])
    expect(await sorted(`?search=banana&folderId=${F.web}&domain=localhost:8080`)).toEqual(['a-one'])
    expect(await slugs('?tag=spring&sort=title&order=asc')).toEqual(['a-one', 'g-seven', 'b-two'])
    const filtered = await walk('tag=spring&sort=lastClickedAt&order=desc', 1)
    expect(filtered).toEqual(['a-one', 'b-two', 'g-seven'])
  })

  test('a test key lists its test links; isTest=false or mode=live is 403 to it', async () => {
    const test = await makeKey(env.rt, api.workspaceSlug, '*', 'test')
    expect(await sorted('', test.key)).toEqual(['t-test'])
    expect(await sorted('?isTest=true&tag=spring', test.key)).toEqual(['t-test'])
    expect((await api.list('?isTest=false', test.key)).status).toBe(403)
  })
})

describe('sorting', () => {
  for (const sort of ['createdAt', 'updatedAt', 'totalClicks', 'lastClickedAt', 'title', 'slug']) {
    for (const order of ['asc', 'desc'] as const) {
      test(`sort=${sort}&order=${order}: page numbers and a cursor walk agree with the promised order`, async () => {
        const all = (await list('?perPage=100')).data
        const want = expected(all, sort, order)
        expect(await slugs(`?sort=${sort}&order=${order}&perPage=100`)).toEqual(want)
        const paged: string[] = []
        for (let page = 1; page <= 4; page++) paged.push(...(await slugs(`?sort=${sort}&order=${order}&perPage=2&page=${page}`)))
        expect(paged).toEqual(want)
        expect(await walk(`sort=${sort}&order=${order}`, 2)).toEqual(want)
        expect(await walk(`sort=${sort}&order=${order}`, 3)).toEqual(want)
      })
    }
  }

  test('defaults: createdAt, newest first; ties by id; nulls last in both orders', async () => {
    const all = (await list('?perPage=100')).data
    expect(all.map((l) => l.slug)).toEqual(expected(all, 'createdAt', 'desc'))
    expect(await slugs('?order=asc&perPage=100')).toEqual(expected(all, 'createdAt', 'asc'))
    for (const order of ['asc', 'desc']) {
      const titles = (await list(`?sort=title&order=${order}&perPage=100`)).data.map((l) => l.title)
      expect(titles.slice(-2)).toEqual([null, null])
      const clicked = (await list(`?sort=lastClickedAt&order=${order}&perPage=100`)).data.map((l) => l.lastClickedAt)
      expect(clicked.slice(3).every((v) => v === null)).toBe(true)
    }
    // Titles compare by bytes: upper case before lower case.
    expect((await slugs('?sort=title&order=asc&perPage=3')).slice(0, 3)).toEqual(expected(all, 'title', 'asc').slice(0, 3))
  })
})

describe('pagination', () => {
  test('page numbers answer meta.pagination and meta.nextCursor; a walk may go on from a numbered page', async () => {
    const first = await list('?perPage=4&sort=slug&order=asc')
    expect(first.meta.pagination).toEqual({ page: 1, perPage: 4, total: 7, totalPages: 2 })
    expect(first.data.map((l) => l.slug)).toEqual(['a-one', 'b-two', 'c-three', 'd-four'])
    const next = await list(`?perPage=4&sort=slug&order=asc&cursor=${first.meta.nextCursor}`)
    expect(next.meta).toEqual({ nextCursor: null })
    expect(next.data.map((l) => l.slug)).toEqual(['e-five', 'f-six', 'g-seven'])
    expect((await list('?perPage=4&sort=slug&order=asc&page=2')).meta.nextCursor).toBeNull()
    expect((await list('?perPage=7')).meta.nextCursor).toBeNull()
  })

  test('a cursor walk returns every link exactly once while links are created and deleted in between', async () => {
    for (const [query, perPage] of [
      ['sort=createdAt&order=desc', 2],
      ['sort=title&order=asc', 3],
      ['sort=lastClickedAt&order=desc', 2],
      ['sort=totalClicks&order=asc', 1],
    ] as const) {
      const extra = await api.make({ slug: `gone-${perPage}-${query.length}`, title: 'Doomed' })
      const before = new Set(expected((await list('?perPage=100')).data, 'createdAt', 'desc'))
      const created: string[] = []
      const seen = await walk(query, perPage, async (page) => {
        // Links made behind the walk's position are met later: a few, or the walk would never end.
        if (page >= 3) return
        clock.advance(1000)
        const fresh = await api.make({ slug: `new-${query.length}-${perPage}-${page}`, title: page % 2 ? 'Aardvark' : null })
        created.push(fresh.slug)
        if (page === 0) expect((await api.del(extra.id)).status).toBe(200)
      })
      expect(new Set(seen).size).toBe(seen.length)
      // Every link that lived through the walk is seen; the one deleted before its turn is not.
      for (const slug of before) if (slug !== extra.slug) expect(seen).toContain(slug)
      const stayed = seen.filter((s) => !created.includes(s))
      expect(stayed.sort()).toEqual([...before].filter((s) => s !== extra.slug || seen.includes(s)).sort())
      for (const slug of created) expect((await api.del((await list(`?search=${slug}`)).data[0].id)).status).toBe(200)
    }
  })
})

describe('scope filters', () => {
  test("a scoped key's list, filters, sorts and walks stay within its domains and tags", async () => {
    const acct = await bootstrapAccount(env.rt)
    const owner = acct.apiKey.key
    const k = await makeKey(env.rt, acct.workspace.slug, 'links:read')
    await env.rt.modules.identity.repo.updateKey(k.id, { scopeFilters: { domains: ['go.example'], tags: ['team-a'] } })
    const fx = await newFolder(env, acct.workspace.id)
    const mk = async (slug: string, json: Record<string, unknown>) => {
      clock.advance(1000)
      const res = await env.request('/v1/links', { method: 'POST', key: owner, json: { destinationUrl: 'https://example.com/', slug, ...json } })
      expect(res.status).toBe(201)
    }
    await mk('s-in-1', { domain: 'go.example', tags: ['team-a'], folderId: fx, title: 'B' })
    await mk('s-in-2', { domain: 'go.example', tags: ['team-a', 'x'], title: 'A' })
    await mk('s-out-tag', { domain: 'go.example', tags: ['team-b'], folderId: fx })
    await mk('s-out-domain', { domain: 'localhost:8080', tags: ['team-a'], folderId: fx })
    const scoped = async (q: string) => (await list(q, k.key)).data.map((l) => l.slug)
    expect(await scoped('')).toEqual(['s-in-2', 's-in-1'])
    expect(await scoped(`?folderId=${fx}`)).toEqual(['s-in-1'])
    expect(await scoped('?sort=title&order=asc')).toEqual(['s-in-2', 's-in-1'])
    expect(await scoped('?domain=localhost:8080')).toEqual([])
    expect(await scoped('?tag=team-b')).toEqual([])
    const first = await list('?perPage=1&cursor=', k.key)
    expect(first.data.map((l) => l.slug)).toEqual(['s-in-2'])
    const second = await list(`?perPage=1&cursor=${first.meta.nextCursor}`, k.key)
    expect(second.data.map((l) => l.slug)).toEqual(['s-in-1'])
    expect(second.meta.nextCursor).toBeNull()
    // The owner's cursor names a position in another list: refused for the scoped key.
    const owners = await list('?perPage=1&cursor=', owner)
    await expectValidation(await api.list(`?perPage=1&cursor=${owners.meta.nextCursor}`, k.key), 'cursor')
  })
})

describe('bad values are 400 naming the parameter', () => {
  const cases: [string, string][] = [
    ['?sort=clicks', 'sort'],
    ['?sort=', 'sort'],
    ['?order=up', 'order'],
    ['?isActive=maybe', 'isActive'],
    ['?isArchived=2', 'isArchived'],
    ['?isTest=yes', 'isTest'],
    ['?isTest=true&mode=live', 'isTest'],
    ['?isArchived=true&archived=false', 'archived'],
    ['?folderId=', 'folderId'],
    ['?cursor=not-a-cursor', 'cursor'],
    ['?cursor=W10', 'cursor'],
    [`?cursor=${'x'.repeat(600)}`, 'cursor'],
    ['?cursor=&page=2', 'page'],
  ]
  for (const [query, field] of cases) {
    test(`${query.slice(0, 60)} → ${field}`, async () => {
      await expectValidation(await api.list(query), field)
    })
  }

  test('a cursor is refused with other filters, another sort or another order', async () => {
    const { meta } = await list('?perPage=1&sort=title&tag=spring')
    expect(meta.nextCursor).toBeString()
    for (const other of ['sort=slug&tag=spring', 'sort=title&tag=promo', 'sort=title&tag=spring&order=asc', 'sort=title']) {
      await expectValidation(await api.list(`?perPage=1&${other}&cursor=${meta.nextCursor}`), 'cursor')
    }
    expect((await api.list(`?perPage=5&sort=title&tag=spring&cursor=${meta.nextCursor}`)).status).toBe(200)
  })
})
