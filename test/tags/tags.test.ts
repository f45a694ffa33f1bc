// Tags as resources over HTTP (contract 7.3): create, list with link counts, rename on every link, recolour,
// delete from every link, a link's new tag names becoming tags, and the tag.* events.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { body, bootstrapAccount, rawRows, setup, storedEvents, type TestEnv } from '../helpers'
import { createLink, listTags, storedLink, tagNamed } from './_tags'

const clock = new ManualClock(Date.now())
let env: TestEnv
let key: string
let otherKey: string
let workspaceId: string

beforeAll(async () => {
  env = await setup({ clock })
  const acct = await bootstrapAccount(env.rt)
  key = acct.apiKey.key
  workspaceId = acct.workspace.id
  otherKey = (await bootstrapAccount(env.rt)).apiKey.key
})
afterAll(() => env.cleanup())

describe('POST /v1/tags', () => {
  test('creates a tag with a colour, stored lower-case; the name trimmed', async () => {
    const res = await env.request('/v1/tags', { method: 'POST', key, json: { name: '  launch ', color: '#FFAA00' } })
    expect(res.status).toBe(201)
    const tag = (await body(res)).data
    expect(tag).toMatchObject({ name: 'launch', color: '#ffaa00', linkCount: 0 })
    expect(tag.id).toMatch(/^tag_[0-9A-Za-z]{20}$/)
    const events = (await storedEvents(env)).filter((e) => e.type === 'tag.created' && e.data.id === tag.id)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ mode: 'live', workspaceId, data: { name: 'launch', color: '#ffaa00' } })
  })

  test('a name the workspace has is 409 tag_exists; another workspace may have it', async () => {
    const res = await env.request('/v1/tags', { method: 'POST', key, json: { name: 'launch' } })
    expect(res.status).toBe(409)
    expect((await body(res)).error).toMatchObject({ code: 'tag_exists', details: { name: 'launch' } })
    expect((await env.request('/v1/tags', { method: 'POST', key: otherKey, json: { name: 'launch' } })).status).toBe(201)
  })

  test('names are case-sensitive, like link tags', async () => {
    expect((await env.request('/v1/tags', { method: 'POST', key, json: { name: 'Launch' } })).status).toBe(201)
  })

  test('bad names and colours are 400 validation_failed naming the field', async () => {
    for (const [json, path] of [
      [{ name: '   ' }, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(65) }, 'name'],
      [{ name: 'ok', color: 'red' }, 'color'],
      [{ name: 'ok', color: '#abc' }, 'color'],
      [{ name: 'ok', extra: 1 }, 'extra'],
    ] as const) {
      const res = await env.request('/v1/tags', { method: 'POST', key, json })
      expect(res.status).toBe(400)
      const error = (await body(res)).error
      expect(error.code).toBe('validation_failed')
      expect(error.details.issues.map((i: { path: string }) => i.path)).toContain(path)
    }
  })
})

describe('tags from links', () => {
  test('a new name on a created, bulk-created or changed link becomes a tag, once, with its event', async () => {
    const before = (await storedEvents(env)).length
    const link = await createLink(env, key, { tags: ['fresh-a', 'launch'] })
    const bulk = await env.request('/v1/links/bulk', {
      method: 'POST',
      key,
      json: {
        links: [
          { destinationUrl: 'https://example.com/b1', tags: ['fresh-b'] },
          { destinationUrl: 'https://example.com/b2', tags: ['fresh-b', 'fresh-a'] },
        ],
      },
    })
    expect((await body(bulk)).data.created).toBe(2)
    const patched = await env.request(`/v1/links/${link.id}`, { method: 'PATCH', key, json: { tags: ['fresh-a', 'fresh-c'] } })
    expect(patched.status).toBe(200)
    const created = (await storedEvents(env)).slice(before).filter((e) => e.type === 'tag.created')
    expect(created.map((e) => e.data.name).sort()).toEqual(['fresh-a', 'fresh-b', 'fresh-c'])
    const tags = await listTags(env, key)
    expect(tags.find((t) => t.name === 'fresh-a')?.linkCount).toBe(2)
    expect(tags.find((t) => t.name === 'fresh-b')?.linkCount).toBe(2)
    expect(tags.find((t) => t.name === 'fresh-c')?.linkCount).toBe(1)
    // The link no longer carries launch: the tag stays, with no link.
    expect(tags.find((t) => t.name === 'launch')?.linkCount).toBe(0)
  })

  test('concurrent links with one new name make one tag and one event', async () => {
    const made = await Promise.all(Array.from({ length: 6 }, (_, i) => createLink(env, key, { tags: ['racing', `lane-${i % 2}`] })))
    expect(made).toHaveLength(6)
    const events = (await storedEvents(env)).filter((e) => e.type === 'tag.created' && e.workspaceId === workspaceId)
    expect(events.filter((e) => e.data.name === 'racing')).toHaveLength(1)
    expect(events.filter((e) => e.data.name === 'lane-0')).toHaveLength(1)
    expect((await tagNamed(env, key, 'racing'))?.linkCount).toBe(6)
  })

  test('a refused link creates no tag', async () => {
    const link = await createLink(env, key, { slug: 'taken-one' })
    const again = await env.request('/v1/links', {
      method: 'POST',
      key,
      json: { destinationUrl: 'https://example.com/x', slug: link.slug, tags: ['never-made'] },
    })
    expect(again.status).toBe(409)
    expect(await tagNamed(env, key, 'never-made')).toBeUndefined()
  })
})

describe('GET /v1/tags', () => {
  test("lists by name, bytewise, with pagination; only the workspace's own", async () => {
    const page1 = await env.request('/v1/tags?perPage=2', { key })
    const b = await body(page1)
    expect(b.meta.pagination).toMatchObject({ page: 1, perPage: 2 })
    expect(b.meta.pagination.total).toBeGreaterThan(2)
    const names = (await listTags(env, key)).map((t) => t.name)
    expect(names).toEqual([...names].sort((a, z) => (Buffer.from(a) < Buffer.from(z) ? -1 : 1)))
    // Another workspace's tags never show.
    expect((await listTags(env, otherKey)).map((t) => t.name)).toEqual(['launch'])
  })
})

describe('PATCH /v1/tags/{id}', () => {
  test('a rename rewrites every link carrying it (tags, link_tags, search text, updatedAt) and nothing else', async () => {
    const a = await createLink(env, key, { tags: ['spring', 'keep'], title: 'Spring' })
    const b = await createLink(env, key, { tags: ['keep', 'spring', 'İstanbul'], title: 'İzmir İİ' })
    const untouched = await createLink(env, key, { tags: ['keep'] })
    const elsewhere = await createLink(env, otherKey, { tags: ['spring'] })
    clock.advance(5_000)
    const tag = (await tagNamed(env, key, 'spring'))!
    const res = await env.request(`/v1/tags/${tag.id}`, { method: 'PATCH', key, json: { name: 'Summer' } })
    expect(res.status).toBe(200)
    expect((await body(res)).data).toMatchObject({ id: tag.id, name: 'Summer', linkCount: 2 })

    const sa = await storedLink(env, a.id)
    expect(sa.tags).toEqual(['Summer', 'keep'])
    // The title "Spring" is no tag line: it stays in the search text.
    expect(sa.searchText.split('\n')).toContain('spring')
    expect(sa.updatedAt).toBe(clock.now())
    const sb = await storedLink(env, b.id)
    expect(sb.tags).toEqual(['keep', 'Summer', 'İstanbul'])
    const su = await storedLink(env, untouched.id)
    expect(su.updatedAt).toBeLessThan(clock.now())
    expect((await storedLink(env, elsewhere.id)).tags).toEqual(['spring'])

    // The list filters and search see the new name at once.
    const byTag = await body(await env.request('/v1/links?tag=Summer', { key }))
    expect(byTag.data.map((l: { id: string }) => l.id).sort()).toEqual([a.id, b.id].sort())
    expect((await body(await env.request('/v1/links?tag=spring', { key }))).data).toHaveLength(0)
    const found = await body(await env.request('/v1/links?search=summer', { key }))
    expect(found.data.map((l: { id: string }) => l.id).sort()).toEqual([a.id, b.id].sort())
    const event = (await storedEvents(env)).findLast((e) => e.type === 'tag.updated')!
    expect(event.data).toMatchObject({ id: tag.id, name: 'Summer', previousName: 'spring', linksChanged: 2, changes: ['name'] })
  })

  test('renaming a tag with non-ASCII letters keeps the search text exact', async () => {
    const link = await createLink(env, key, { tags: ['İstanbul-x', 'Ünï'], title: 'Çay İİİ\nline two' })
    const tag = (await tagNamed(env, key, 'İstanbul-x'))!
    expect((await env.request(`/v1/tags/${tag.id}`, { method: 'PATCH', key, json: { name: 'ÅNKARA' } })).status).toBe(200)
    expect((await storedLink(env, link.id)).tags).toEqual(['ÅNKARA', 'Ünï'])
    const other = (await tagNamed(env, key, 'Ünï'))!
    expect((await env.request(`/v1/tags/${other.id}`, { method: 'PATCH', key, json: { name: 'uni' } })).status).toBe(200)
    expect((await storedLink(env, link.id)).tags).toEqual(['ÅNKARA', 'uni'])
  })

  test('names holding quotes, commas, backslashes and brackets are renamed as whole names', async () => {
    const odd = ['a", "b', 'x\\', '", "', '[q]', 'plain']
    const link = await createLink(env, key, { tags: odd })
    for (const [from, to] of [
      ['", "', 'c, d'],
      ['a", "b', '"quoted"'],
      ['x\\', 'y\\"'],
    ] as const) {
      const tag = (await tagNamed(env, key, from))!
      expect((await env.request(`/v1/tags/${tag.id}`, { method: 'PATCH', key, json: { name: to } })).status).toBe(200)
    }
    expect((await storedLink(env, link.id)).tags).toEqual(['"quoted"', 'y\\"', 'c, d', '[q]', 'plain'])
    const gone = (await tagNamed(env, key, '[q]'))!
    expect((await env.request(`/v1/tags/${gone.id}`, { method: 'DELETE', key })).status).toBe(200)
    expect((await storedLink(env, link.id)).tags).toEqual(['"quoted"', 'y\\"', 'c, d', 'plain'])
  })

  test('a rename to a name another tag has is 409 tag_exists and changes nothing', async () => {
    const link = await createLink(env, key, { tags: ['dup-a', 'dup-b'] })
    const tag = (await tagNamed(env, key, 'dup-a'))!
    const res = await env.request(`/v1/tags/${tag.id}`, { method: 'PATCH', key, json: { name: 'dup-b' } })
    expect(res.status).toBe(409)
    expect((await body(res)).error.code).toBe('tag_exists')
    expect((await storedLink(env, link.id)).tags).toEqual(['dup-a', 'dup-b'])
  })

  test('recolour and clearing the colour; a link is untouched', async () => {
    const link = await createLink(env, key, { tags: ['paint'] })
    const tag = (await tagNamed(env, key, 'paint'))!
    const before = await storedLink(env, link.id)
    clock.advance(1_000)
    const res = await env.request(`/v1/tags/${tag.id}`, { method: 'PATCH', key, json: { color: '#00FF7f' } })
    expect((await body(res)).data).toMatchObject({ name: 'paint', color: '#00ff7f', linkCount: 1 })
    expect((await storedLink(env, link.id)).updatedAt).toBe(before.updatedAt)
    const cleared = await env.request(`/v1/tags/${tag.id}`, { method: 'PATCH', key, json: { color: null } })
    expect((await body(cleared)).data.color).toBeNull()
  })

  test('a change that changes nothing writes nothing and sends no event', async () => {
    await createLink(env, key, { tags: ['still'] })
    const tag = (await tagNamed(env, key, 'still'))!
    const before = (await storedEvents(env)).length
    for (const json of [{}, { name: 'still' }, { name: ' still ', color: null }]) {
      const res = await env.request(`/v1/tags/${tag.id}`, { method: 'PATCH', key, json })
      expect((await body(res)).data).toMatchObject({ id: tag.id, name: 'still', color: null, linkCount: 1 })
    }
    expect((await storedEvents(env)).length).toBe(before)
  })

  test("another workspace's tag and an unknown id are 404", async () => {
    const theirs = (await listTags(env, otherKey))[0]!
    expect((await env.request(`/v1/tags/${theirs.id}`, { method: 'PATCH', key, json: { color: '#000000' } })).status).toBe(404)
    expect((await env.request('/v1/tags/tag_nope', { method: 'DELETE', key })).status).toBe(404)
  })
})

describe('DELETE /v1/tags/{id}', () => {
  test('removes the tag from every link carrying it, in the workspace only', async () => {
    const a = await createLink(env, key, { tags: ['gone', 'stay'] })
    const b = await createLink(env, key, { tags: ['gone'] })
    const elsewhere = await createLink(env, otherKey, { tags: ['gone'] })
    clock.advance(1_000)
    const tag = (await tagNamed(env, key, 'gone'))!
    const res = await env.request(`/v1/tags/${tag.id}`, { method: 'DELETE', key })
    expect(res.status).toBe(200)
    expect((await body(res)).data).toEqual({ id: tag.id, deleted: true, linksChanged: 2 })
    expect((await storedLink(env, a.id)).tags).toEqual(['stay'])
    const sb = await storedLink(env, b.id)
    expect(sb.tags).toEqual([])
    expect(sb.updatedAt).toBe(clock.now())
    expect((await storedLink(env, elsewhere.id)).tags).toEqual(['gone'])
    expect(await tagNamed(env, key, 'gone')).toBeUndefined()
    expect(await rawRows(env, 'SELECT 1 FROM tags WHERE id = ?', tag.id)).toHaveLength(0)
    const event = (await storedEvents(env)).findLast((e) => e.type === 'tag.deleted')!
    expect(event.data).toMatchObject({ id: tag.id, name: 'gone', linksChanged: 2 })
    expect((await env.request(`/v1/tags/${tag.id}`, { method: 'DELETE', key })).status).toBe(404)
  })
})
