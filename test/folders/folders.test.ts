// Folders over HTTP (contract 7.3): create, list with link counts, read, rename, delete (refused while it holds
// links, or moving or deleting them in one step), their events, a link's folderId checked against the
// workspace's folders, and what test keys may do.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { makeKey, rawRows, setup, type TestEnv } from '../helpers'
import { account, eventsOf, expectIssue } from './_folders'

let env: TestEnv
beforeAll(async () => {
  env = await setup()
})
afterAll(() => env.cleanup())

describe('a folder', () => {
  test('is created, listed by name with its link count, read, renamed and described', async () => {
    const api = await account(env)
    const zeta = await api.folder('  Zeta  ', 'last by name')
    expect(zeta).toEqual({
      id: expect.stringMatching(/^fld_[0-9A-Za-z]{20}$/),
      name: 'Zeta',
      description: 'last by name',
      linkCount: 0,
      createdAt: expect.any(String),
      updatedAt: zeta.createdAt,
    })
    const alpha = await api.folder('Alpha')
    expect(alpha.description).toBeNull()
    await api.link({ folderId: alpha.id })
    await api.link({ folderId: alpha.id })
    await api.link({ folderId: zeta.id })
    await api.link()

    const list = await api.call('/folders')
    expect(list.status).toBe(200)
    expect(list.body.data.map((f: any) => [f.name, f.linkCount])).toEqual([
      ['Alpha', 2],
      ['Zeta', 1],
    ])
    expect((await api.call(`/folders/${alpha.id}`)).body.data).toMatchObject({ id: alpha.id, name: 'Alpha', linkCount: 2 })

    const renamed = await api.call(`/folders/${zeta.id}`, { method: 'PATCH', json: { name: 'Beta', description: null } })
    expect(renamed.status).toBe(200)
    expect(renamed.body.data).toMatchObject({ id: zeta.id, name: 'Beta', description: null, linkCount: 1 })
    const described = await api.call(`/folders/${zeta.id}`, { method: 'PATCH', json: { description: 'now described' } })
    expect(described.body.data).toMatchObject({ name: 'Beta', description: 'now described' })
    // The links keep their folder: a folder is addressed by id, so a rename touches no link.
    const links = (await api.call('/links')).body.data
    expect(links.filter((l: any) => l.folderId === zeta.id)).toHaveLength(1)
  })

  test('names are trimmed and must not be blank; unknown fields and long names are refused', async () => {
    const api = await account(env)
    expectIssue(await api.call('/folders', { method: 'POST', json: { name: '   ' } }), 'name')
    expectIssue(await api.call('/folders', { method: 'POST', json: { name: 'x'.repeat(101) } }), 'name')
    expectIssue(await api.call('/folders', { method: 'POST', json: { name: 'ok', color: 'red' } }), 'color')
    const f = await api.folder('Keep')
    expectIssue(await api.call(`/folders/${f.id}`, { method: 'PATCH', json: { name: '' } }), 'name')
    expect((await api.call(`/folders/${f.id}`)).body.data.name).toBe('Keep')
    const [row] = await rawRows(env, 'SELECT count(*) AS n FROM folders WHERE workspace_id = ?', api.workspaceId)
    expect(row.n).toBe(1)
  })

  test("another workspace's folder, an unknown id and a malformed id are 404", async () => {
    const api = await account(env)
    const other = await account(env)
    const theirs = await other.folder('Theirs')
    for (const id of [theirs.id, 'fld_doesnotexist', 'not-a-folder']) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const res = await api.call(`/folders/${id}`, { method, json: method === 'PATCH' ? { name: 'x' } : undefined })
        expect({ id, method, status: res.status, code: res.body.error.code }).toEqual({ id, method, status: 404, code: 'not_found' })
      }
    }
    expect((await api.call('/folders')).body.data).toEqual([])
    expect((await other.call(`/folders/${theirs.id}`)).body.data.name).toBe('Theirs')
  })

  test('folder events: created, updated with the fields sent, deleted', async () => {
    const api = await account(env)
    const f = await api.folder('Events')
    await api.call(`/folders/${f.id}`, { method: 'PATCH', json: { name: 'Renamed' } })
    await api.call(`/folders/${f.id}`, { method: 'DELETE' })
    const events = await eventsOf(env, api.workspaceId, 'folder.created', 'folder.updated', 'folder.deleted')
    expect(events.map((e) => [e.type, e.mode])).toEqual([
      ['folder.created', 'live'],
      ['folder.updated', 'live'],
      ['folder.deleted', 'live'],
    ])
    expect(events[0]!.data).toEqual({ id: f.id, name: 'Events', description: null, createdAt: f.createdAt, updatedAt: f.updatedAt })
    expect(events[1]!.data).toMatchObject({ id: f.id, name: 'Renamed', changes: ['name'] })
    expect(events[2]!.data).toMatchObject({ id: f.id, name: 'Renamed', movedLinks: 0, deletedLinks: 0, moveTo: null })
  })

  test('creation honours Idempotency-Key: the same key and body answer the first folder again', async () => {
    const api = await account(env)
    const send = () => env.request('/v1/folders', { method: 'POST', key: api.key, json: { name: 'Once' }, headers: { 'idempotency-key': 'folder-once-1' } })
    const first = await send()
    const again = await send()
    expect([first.status, again.status]).toEqual([201, 201])
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(((await again.json()) as any).data.id).toBe(((await first.json()) as any).data.id)
    expect((await api.call('/folders')).body.data).toHaveLength(1)
    expect(await eventsOf(env, api.workspaceId, 'folder.created')).toHaveLength(1)
  })

  test('reads need links:read and changes links:write', async () => {
    const api = await account(env)
    const f = await api.folder('Perms')
    const reader = (await makeKey(env.rt, api.workspaceSlug, 'links:read')).key
    const none = (await makeKey(env.rt, api.workspaceSlug, 'analytics:read')).key
    expect((await api.call('/folders', { key: reader })).status).toBe(200)
    for (const [method, path] of [
      ['POST', '/folders'],
      ['PATCH', `/folders/${f.id}`],
      ['DELETE', `/folders/${f.id}`],
    ] as const) {
      const res = await api.call(path, { method, key: reader, json: method === 'DELETE' ? undefined : { name: 'x' } })
      expect({ method, status: res.status, code: res.body.error.code }).toEqual({ method, status: 403, code: 'forbidden' })
    }
    expect((await api.call('/folders', { key: none })).status).toBe(403)
    expect((await api.call(`/folders/${f.id}`)).body.data.name).toBe('Perms')
  })
})

describe("a link's folderId", () => {
  test('must name a folder of the workspace, on create, PATCH and bulk create; null clears it', async () => {
    const api = await account(env)
    const other = await account(env)
    const mine = await api.folder('Mine')
    const theirs = await other.folder('Theirs')
    for (const folderId of [theirs.id, 'fld_unknown', 'free-form label']) {
      expectIssue(await api.call('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/', folderId } }), 'folderId')
    }
    const link = await api.link({ folderId: mine.id })
    expect(link.folderId).toBe(mine.id)
    expectIssue(await api.call(`/links/${link.id}`, { method: 'PATCH', json: { folderId: theirs.id } }), 'folderId')
    // The link sent back as fetched is no change, and is not checked again.
    expect((await api.call(`/links/${link.id}`, { method: 'PATCH', json: { folderId: mine.id, title: 't' } })).status).toBe(200)
    const cleared = await api.call(`/links/${link.id}`, { method: 'PATCH', json: { folderId: null } })
    expect(cleared.body.data.folderId).toBeNull()

    const bulk = await api.call('/links/bulk', {
      method: 'POST',
      json: {
        links: [
          { destinationUrl: 'https://example.com/1', folderId: mine.id },
          { destinationUrl: 'https://example.com/2', folderId: theirs.id },
          { destinationUrl: 'https://example.com/3' },
        ],
      },
    })
    expect(bulk.status).toBe(200)
    expect(bulk.body.data.results.map((r: any) => r.ok)).toEqual([true, false, true])
    expect(bulk.body.data.results[0].link.folderId).toBe(mine.id)
    const refused = bulk.body.data.results[1].error
    expect(refused.code).toBe('validation_failed')
    expect(refused.details.issues.map((i: any) => i.path)).toContain('folderId')
    expect((await api.call(`/folders/${mine.id}`)).body.data.linkCount).toBe(1)
  })
})

describe('deleting a folder', () => {
  test('with links is refused (409 folder_not_empty), counting live and test links; an empty one goes', async () => {
    const api = await account(env)
    const held = await api.folder('Held')
    await api.link({ folderId: held.id }, api.testKey)
    const refused = await api.call(`/folders/${held.id}`, { method: 'DELETE' })
    expect(refused.status).toBe(409)
    expect(refused.body.error).toMatchObject({ code: 'folder_not_empty', details: { id: held.id, links: 1 } })
    expect((await api.call(`/folders/${held.id}`)).status).toBe(200)

    const empty = await api.folder('Empty')
    const gone = await api.call(`/folders/${empty.id}`, { method: 'DELETE' })
    expect(gone.body.data).toEqual({ id: empty.id, deleted: true, movedLinks: 0, deletedLinks: 0 })
    expect((await api.call(`/folders/${empty.id}`)).status).toBe(404)
    expect((await api.call(`/folders/${empty.id}`, { method: 'DELETE' })).status).toBe(404)
  })

  test('moveTo moves every link (live and test) into another folder, each with its link.updated event', async () => {
    const api = await account(env)
    const from = await api.folder('From')
    const to = await api.folder('To')
    const live = [await api.link({ folderId: from.id }), await api.link({ folderId: from.id })]
    const sandboxed = await api.link({ folderId: from.id }, api.testKey)
    const bystander = await api.link({ folderId: to.id })
    const res = await api.call(`/folders/${from.id}?moveTo=${to.id}`, { method: 'DELETE' })
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual({ id: from.id, deleted: true, movedLinks: 3, deletedLinks: 0 })
    for (const link of [...live, sandboxed, bystander]) expect((await api.call(`/links/${link.id}`)).body.data.folderId).toBe(to.id)
    expect((await api.call(`/folders/${to.id}`)).body.data.linkCount).toBe(3)
    expect((await api.call(`/folders/${to.id}`, { key: api.testKey })).body.data.linkCount).toBe(1)

    const updates = await eventsOf(env, api.workspaceId, 'link.updated')
    expect(updates.map((e) => [e.data.id, e.mode]).sort()).toEqual(
      [
        [live[0].id, 'live'],
        [live[1].id, 'live'],
        [sandboxed.id, 'test'],
      ].sort(),
    )
    for (const e of updates) expect(e.data).toMatchObject({ folderId: to.id, changes: ['folderId'] })
    const [deleted] = await eventsOf(env, api.workspaceId, 'folder.deleted')
    expect(deleted!.data).toMatchObject({ id: from.id, movedLinks: 3, deletedLinks: 0, moveTo: to.id })
  })

  test('deleteLinks=true deletes every link of the folder, each with its link.deleted event, and stops their redirects', async () => {
    const api = await account(env)
    const doomed = await api.folder('Doomed')
    const links = [await api.link({ folderId: doomed.id, slug: 'doomed-1' }), await api.link({ folderId: doomed.id }, api.testKey)]
    const kept = await api.link({ slug: 'kept-1' })
    expect((await env.request('/doomed-1', { redirect: 'manual' })).status).toBe(302)
    const res = await api.call(`/folders/${doomed.id}?deleteLinks=true`, { method: 'DELETE' })
    expect(res.body.data).toEqual({ id: doomed.id, deleted: true, movedLinks: 0, deletedLinks: 2 })
    for (const link of links) expect((await api.call(`/links/${link.id}`)).status).toBe(404)
    expect((await api.call(`/links/${kept.id}`)).status).toBe(200)
    expect((await env.request('/doomed-1', { redirect: 'manual' })).status).toBe(404)
    const deletedEvents = await eventsOf(env, api.workspaceId, 'link.deleted')
    expect(deletedEvents.map((e) => [e.data.id, e.mode]).sort()).toEqual(
      [
        [links[0].id, 'live'],
        [links[1].id, 'test'],
      ].sort(),
    )
    expect(deletedEvents[0]!.data).toEqual({
      id: expect.any(String),
      slug: expect.any(String),
      domain: expect.any(String),
      shortUrl: expect.any(String),
      destinationUrl: 'https://example.com/',
    })
  })

  test('moveTo must be another folder of the workspace, and not sent with deleteLinks', async () => {
    const api = await account(env)
    const other = await account(env)
    const f = await api.folder('Source')
    const target = await api.folder('Target')
    await api.link({ folderId: f.id })
    const theirs = await other.folder('Theirs')
    for (const query of [`moveTo=${f.id}`, `moveTo=${theirs.id}`, 'moveTo=fld_nope', `moveTo=${target.id}&deleteLinks=true`]) {
      const res = await api.call(`/folders/${f.id}?${query}`, { method: 'DELETE' })
      expectIssue(res, 'moveTo')
    }
    expect((await api.call(`/folders/${f.id}`)).body.data.linkCount).toBe(1)
    expect((await api.call(`/folders/${theirs.id}`, { key: other.key })).status).toBe(200)
  })
})

describe('test keys', () => {
  test('read folders (counting test links) and file test links in them, but never change folders', async () => {
    const api = await account(env)
    const f = await api.folder('Shared')
    await api.link({ folderId: f.id })
    await api.link({ folderId: f.id })
    const sandboxed = await api.link({ folderId: f.id }, api.testKey)
    expect(sandboxed).toMatchObject({ isTest: true, folderId: f.id })
    const seen = await api.call('/folders', { key: api.testKey })
    expect(seen.body.data.map((x: any) => [x.id, x.linkCount])).toEqual([[f.id, 1]])
    expect((await api.call('/folders')).body.data.map((x: any) => x.linkCount)).toEqual([2])
    for (const [method, path] of [
      ['POST', '/folders'],
      ['PATCH', `/folders/${f.id}`],
      ['DELETE', `/folders/${f.id}?deleteLinks=true`],
    ] as const) {
      const res = await api.call(path, { method, key: api.testKey, json: method === 'DELETE' ? undefined : { name: 'x' } })
      expect({ method, status: res.status, code: res.body.error.code }).toEqual({ method, status: 403, code: 'forbidden' })
    }
    expect((await api.call(`/folders/${f.id}`)).body.data).toMatchObject({ name: 'Shared', linkCount: 2 })
  })
})
