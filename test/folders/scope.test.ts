// Keys whose scopeFilters name folders (contract 7.3): they see only those folders and the links filed in them,
// in lists, reads, writes and analytics, like the domain and tag scopes; the api-keys routes check and keep
// the list; domain and tag scopes narrow a folder's count and guard what its deletion would touch.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { setup, type TestEnv } from '../helpers'
import { visit } from '../redirect/_redirect'
import { account, expectIssue } from './_folders'

let env: TestEnv
let api: Awaited<ReturnType<typeof account>>
let inside: any
let outside: any
let insideLinks: any[]
let outsideLink: any
let unfiled: any
let scoped: string

/** A key of api's workspace made through the API with these settings; answers its secret. */
async function keyWith(json: Record<string, unknown>, k = api.key): Promise<string> {
  const res = await api.call('/api-keys', { method: 'POST', key: k, json: { name: 'scoped', ...json } })
  expect(res.status).toBe(201)
  return res.body.data.key
}

beforeAll(async () => {
  env = await setup({ env: { LNK_SHORT_DOMAINS: 'localhost:8080,go.example' } })
  api = await account(env)
  inside = await api.folder('Inside')
  outside = await api.folder('Outside')
  insideLinks = [await api.link({ folderId: inside.id, slug: 'in-1', tags: ['red'] }), await api.link({ folderId: inside.id, slug: 'in-2' })]
  outsideLink = await api.link({ folderId: outside.id, slug: 'out-1' })
  unfiled = await api.link({ slug: 'none-1' })
  scoped = await keyWith({ permissions: ['links:read', 'links:write', 'analytics:read', 'api_keys:write'], scopeFilters: { folders: [inside.id] } })
  // One click on each link, counted before the analytics questions below.
  for (const slug of ['in-1', 'in-2', 'in-2', 'out-1', 'none-1']) expect((await visit(env, slug, { ip: '8.8.8.8' })).status).toBe(302)
  await env.rt.modules.clicks.buffer.flush()
})
afterAll(() => env.cleanup())

describe('the api-keys routes', () => {
  test('keep the folder list, refuse what is not a folder id, and never widen a scoped key', async () => {
    const res = await api.call('/api-keys', { method: 'POST', json: { name: 'f', scopeFilters: { folders: [inside.id, inside.id] } } })
    expect(res.status).toBe(201)
    expect(res.body.data.scopeFilters).toEqual({ folders: [inside.id] })
    const id = res.body.data.id
    const changed = await api.call(`/api-keys/${id}`, { method: 'PATCH', json: { scopeFilters: { folders: [outside.id], tags: ['red'] } } })
    expect(changed.body.data.scopeFilters).toEqual({ tags: ['red'], folders: [outside.id] })
    expectIssue(await api.call('/api-keys', { method: 'POST', json: { name: 'f', scopeFilters: { folders: ['marketing'] } } }), 'scopeFilters.folders.0')
    expectIssue(await api.call('/api-keys', { method: 'POST', json: { name: 'f', scopeFilters: { folders: [] } } }), 'scopeFilters')

    // The scoped key passes its folders on, and cannot make a key for another folder.
    const child = await api.call('/api-keys', { method: 'POST', key: scoped, json: { name: 'child', permissions: ['links:read'] } })
    expect(child.body.data.scopeFilters).toEqual({ folders: [inside.id] })
    const wider = await api.call('/api-keys', {
      method: 'POST',
      key: scoped,
      json: { name: 'wider', permissions: ['links:read'], scopeFilters: { folders: [inside.id, outside.id] } },
    })
    expect({ status: wider.status, code: wider.body.error.code }).toEqual({ status: 403, code: 'forbidden' })
  })
})

describe('a key scoped to a folder', () => {
  test('lists and reads only that folder; others are 404 to read and 403 out_of_scope to change', async () => {
    const list = await api.call('/folders', { key: scoped })
    expect(list.body.data.map((f: any) => [f.id, f.linkCount])).toEqual([[inside.id, 2]])
    expect((await api.call(`/folders/${inside.id}`, { key: scoped })).status).toBe(200)
    const read = await api.call(`/folders/${outside.id}`, { key: scoped })
    expect({ status: read.status, code: read.body.error.code }).toEqual({ status: 404, code: 'not_found' })
    for (const [method, path, json] of [
      ['PATCH', `/folders/${outside.id}`, { name: 'taken over' }],
      ['DELETE', `/folders/${outside.id}?deleteLinks=true`, undefined],
      ['POST', '/folders', { name: 'new' }],
      ['DELETE', `/folders/${inside.id}?moveTo=${outside.id}`, undefined],
    ] as const) {
      const res = await api.call(path, { method, key: scoped, json })
      expect({ method, status: res.status, code: res.body.error.code }).toEqual({ method, status: 403, code: 'out_of_scope' })
    }
    expect((await api.call(`/folders/${outside.id}`)).body.data).toMatchObject({ name: 'Outside', linkCount: 1 })
    const renamed = await api.call(`/folders/${inside.id}`, { method: 'PATCH', key: scoped, json: { description: 'mine' } })
    expect(renamed.body.data).toMatchObject({ id: inside.id, description: 'mine' })
  })

  test('lists, reads and changes only the links filed in it', async () => {
    const list = await api.call('/links', { key: scoped })
    expect(list.body.data.map((l: any) => l.id).sort()).toEqual(insideLinks.map((l) => l.id).sort())
    expect(list.body.meta.pagination.total).toBe(2)
    for (const link of [outsideLink, unfiled]) {
      expect((await api.call(`/links/${link.id}`, { key: scoped })).status).toBe(404)
      const patch = await api.call(`/links/${link.id}`, { method: 'PATCH', key: scoped, json: { title: 'hijacked' } })
      expect({ status: patch.status, code: patch.body.error.code }).toEqual({ status: 403, code: 'out_of_scope' })
      expect((await api.call(`/links/${link.id}`, { method: 'DELETE', key: scoped })).status).toBe(403)
    }
    expect((await api.call(`/links/${insideLinks[1].id}`, { method: 'PATCH', key: scoped, json: { title: 'fine' } })).status).toBe(200)
  })

  test('creates links only in its folders, and cannot move one out', async () => {
    const unfiledTry = await api.call('/links', { method: 'POST', key: scoped, json: { destinationUrl: 'https://example.com/x' } })
    expect({ status: unfiledTry.status, code: unfiledTry.body.error.code }).toEqual({ status: 403, code: 'out_of_scope' })
    const elsewhere = await api.call('/links', { method: 'POST', key: scoped, json: { destinationUrl: 'https://example.com/x', folderId: outside.id } })
    expect(elsewhere.status).toBe(403)
    const made = await api.call('/links', { method: 'POST', key: scoped, json: { destinationUrl: 'https://example.com/x', folderId: inside.id } })
    expect(made.status).toBe(201)
    for (const folderId of [outside.id, null]) {
      const moved = await api.call(`/links/${made.body.data.id}`, { method: 'PATCH', key: scoped, json: { folderId } })
      expect({ folderId, status: moved.status, code: moved.body.error.code }).toEqual({ folderId, status: 403, code: 'out_of_scope' })
    }
    expect((await api.call(`/links/${made.body.data.id}`, { method: 'DELETE', key: scoped })).status).toBe(200)
  })

  test('sees the analytics of its folder’s links only', async () => {
    const mine = (await api.call('/analytics/overview', { key: scoped })).body.data.totals
    expect({ clicks: mine.clicks, links: mine.links }).toEqual({ clicks: 3, links: 2 })
    const all = (await api.call('/analytics/overview')).body.data.totals
    expect({ clicks: all.clicks, links: all.links }).toEqual({ clicks: 5, links: 4 })
    const top = (await api.call('/analytics/top-links', { key: scoped })).body.data.links
    expect(top.map((l: any) => l.slug).sort()).toEqual(['in-1', 'in-2'])
    expect((await api.call(`/analytics/overview?linkId=${outsideLink.id}`, { key: scoped })).status).toBe(404)
    const byFolder = (await api.call('/analytics/breakdown?dimension=folder', { key: scoped })).body.data.rows
    expect(byFolder.map((r: any) => [r.value, r.clicks])).toEqual([[inside.id, 3]])
  })
})

describe('domain and tag scopes', () => {
  test("narrow a folder's link count, and guard the links its deletion would move or delete", async () => {
    const red = await keyWith({ permissions: ['links:read', 'links:write'], scopeFilters: { tags: ['red'] } })
    const seen = (await api.call('/folders', { key: red })).body.data
    expect(seen.map((f: any) => [f.name, f.linkCount])).toEqual([
      ['Inside', 1],
      ['Outside', 0],
    ])
    const target = await api.folder('Target')
    for (const query of [`moveTo=${target.id}`, 'deleteLinks=true']) {
      const res = await api.call(`/folders/${inside.id}?${query}`, { method: 'DELETE', key: red })
      expect({ query, status: res.status, code: res.body.error.code, links: res.body.error.details?.links }).toEqual({
        query,
        status: 403,
        code: 'out_of_scope',
        links: 1,
      })
    }
    expect((await api.call(`/folders/${inside.id}`)).body.data.linkCount).toBe(2)
    for (const link of insideLinks) expect((await api.call(`/links/${link.id}`)).body.data.folderId).toBe(inside.id)
  })
})
