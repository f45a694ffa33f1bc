// Who sees which tags (contract 7.3, spec section 1): a key with tag scope filters sees and changes only its
// tags; a key limited to some domains counts only their links and cannot rename or delete; a test key counts
// test links, may create tags but not change or delete them (they are shared with live links); permissions.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { body, bootstrapAccount, makeKey, setup, storedEvents, type TestEnv } from '../helpers'
import { createLink, listTags, storedLink, tagNamed } from './_tags'

let env: TestEnv
let owner: string
let tagScoped: string
let domainScoped: string
let testKey: string
let reader: string
let workspace: string

beforeAll(async () => {
  env = await setup({ env: { LNK_SHORT_DOMAINS: 'go.example,lnk.example' } })
  const acct = await bootstrapAccount(env.rt)
  owner = acct.apiKey.key
  workspace = acct.workspace.slug
  const k1 = await makeKey(env.rt, workspace, 'links:read,links:write')
  await env.rt.modules.identity.repo.updateKey(k1.id, { scopeFilters: { tags: ['team-a', 'team-b'] } })
  tagScoped = k1.key
  const k2 = await makeKey(env.rt, workspace, 'links:read,links:write')
  await env.rt.modules.identity.repo.updateKey(k2.id, { scopeFilters: { domains: ['go.example'] } })
  domainScoped = k2.key
  testKey = (await makeKey(env.rt, workspace, 'links:read,links:write', 'test')).key
  reader = (await makeKey(env.rt, workspace, 'links:read')).key
  await createLink(env, owner, { domain: 'go.example', tags: ['team-a', 'other'] })
  await createLink(env, owner, { domain: 'lnk.example', tags: ['team-a'] })
  await createLink(env, testKey, { domain: 'go.example', tags: ['team-a', 'sandbox-only'] })
})
afterAll(() => env.cleanup())

test('a live key counts live links; mode=test and mode=all count the others', async () => {
  const live = await listTags(env, owner)
  expect(live.find((t) => t.name === 'team-a')?.linkCount).toBe(2)
  expect(live.find((t) => t.name === 'sandbox-only')?.linkCount).toBe(0)
  expect((await listTags(env, owner, '?mode=test')).find((t) => t.name === 'team-a')?.linkCount).toBe(1)
  expect((await listTags(env, owner, '?mode=all')).find((t) => t.name === 'team-a')?.linkCount).toBe(3)
})

test('a test key lists every tag of the workspace, counting test links only; mode=live is refused', async () => {
  const tags = await listTags(env, testKey)
  expect(tags.map((t) => t.name).sort()).toEqual(['other', 'sandbox-only', 'team-a'])
  expect(tags.find((t) => t.name === 'team-a')?.linkCount).toBe(1)
  expect(tags.find((t) => t.name === 'other')?.linkCount).toBe(0)
  const refused = await env.request('/v1/tags?mode=live', { key: testKey })
  expect(refused.status).toBe(403)
  expect((await body(refused)).error.code).toBe('forbidden')
})

test('a test key creates tags, in test mode, but cannot rename, recolour or delete one', async () => {
  const res = await env.request('/v1/tags', { method: 'POST', key: testKey, json: { name: 'made-in-test' } })
  expect(res.status).toBe(201)
  const made = (await storedEvents(env)).filter((e) => e.type === 'tag.created' && ['made-in-test', 'sandbox-only'].includes(e.data.name as string))
  expect(made.map((e) => e.mode)).toEqual(['test', 'test'])
  const tag = (await tagNamed(env, owner, 'team-a'))!
  for (const init of [{ method: 'PATCH', json: { name: 'renamed' } }, { method: 'PATCH', json: { color: '#123456' } }, { method: 'DELETE' }]) {
    const refused = await env.request(`/v1/tags/${tag.id}`, { ...init, key: testKey })
    expect(refused.status).toBe(403)
    expect((await body(refused)).error).toMatchObject({ code: 'forbidden', details: { keyMode: 'test' } })
  }
  expect((await tagNamed(env, owner, 'team-a'))!.name).toBe('team-a')
})

test('a key with tag scope filters lists and changes only its tags', async () => {
  expect((await listTags(env, tagScoped)).map((t) => t.name)).toEqual(['team-a'])
  const other = (await tagNamed(env, owner, 'other'))!
  const out = await env.request(`/v1/tags/${other.id}`, { method: 'PATCH', key: tagScoped, json: { color: '#000000' } })
  expect(out.status).toBe(403)
  expect((await body(out)).error.code).toBe('out_of_scope')
  const outside = await env.request('/v1/tags', { method: 'POST', key: tagScoped, json: { name: 'team-z' } })
  expect((await body(outside)).error.code).toBe('out_of_scope')
  expect((await env.request('/v1/tags', { method: 'POST', key: tagScoped, json: { name: 'team-b' } })).status).toBe(201)
  const teamA = (await tagNamed(env, owner, 'team-a'))!
  const away = await env.request(`/v1/tags/${teamA.id}`, { method: 'PATCH', key: tagScoped, json: { name: 'team-q' } })
  expect((await body(away)).error.code).toBe('out_of_scope')
  expect((await env.request(`/v1/tags/${teamA.id}`, { method: 'PATCH', key: tagScoped, json: { color: '#abcdef' } })).status).toBe(200)
})

test('a key limited to domains counts links on them, may recolour, and cannot rename or delete', async () => {
  const teamA = (await listTags(env, domainScoped)).find((t) => t.name === 'team-a')!
  expect(teamA.linkCount).toBe(1)
  expect((await env.request(`/v1/tags/${teamA.id}`, { method: 'PATCH', key: domainScoped, json: { color: '#111111' } })).status).toBe(200)
  for (const init of [{ method: 'PATCH', json: { name: 'team-c' } }, { method: 'DELETE' }]) {
    const refused = await env.request(`/v1/tags/${teamA.id}`, { ...init, key: domainScoped })
    expect(refused.status).toBe(403)
    expect((await body(refused)).error.code).toBe('out_of_scope')
  }
})

test('links:read lists; every change needs links:write', async () => {
  expect((await env.request('/v1/tags', { key: reader })).status).toBe(200)
  const tag = (await tagNamed(env, owner, 'other'))!
  for (const [path, init] of [
    ['/v1/tags', { method: 'POST', json: { name: 'nope' } }],
    [`/v1/tags/${tag.id}`, { method: 'PATCH', json: { color: '#000000' } }],
    [`/v1/tags/${tag.id}`, { method: 'DELETE' }],
  ] as const) {
    const res = await env.request(path, { ...init, key: reader })
    expect(res.status).toBe(403)
    expect((await body(res)).error).toMatchObject({ code: 'forbidden', details: { required: 'links:write' } })
  }
  expect((await env.request('/v1/tags')).status).toBe(401)
})

test("a live key's rename reaches test links too", async () => {
  const link = await createLink(env, testKey, { tags: ['shared-name'] })
  const tag = (await tagNamed(env, owner, 'shared-name'))!
  expect((await env.request(`/v1/tags/${tag.id}`, { method: 'PATCH', key: owner, json: { name: 'shared-renamed' } })).status).toBe(200)
  expect((await storedLink(env, link.id)).tags).toEqual(['shared-renamed'])
})

test('a key limited to folders counts links in them, and cannot rename or delete', async () => {
  const folder = await env.request('/v1/folders', { method: 'POST', key: owner, json: { name: 'Campaigns' } })
  expect(folder.status).toBe(201)
  const folderId = (await body(folder)).data.id
  await createLink(env, owner, { tags: ['folder-tag'], folderId })
  await createLink(env, owner, { tags: ['folder-tag'] })
  const k = await makeKey(env.rt, workspace, 'links:read,links:write')
  await env.rt.modules.identity.repo.updateKey(k.id, { scopeFilters: { folders: [folderId] } })
  const tag = (await listTags(env, k.key)).find((t) => t.name === 'folder-tag')!
  expect(tag.linkCount).toBe(1)
  expect((await listTags(env, owner)).find((t) => t.name === 'folder-tag')!.linkCount).toBe(2)
  for (const init of [{ method: 'PATCH', json: { name: 'folder-tag-2' } }, { method: 'DELETE' }]) {
    const refused = await env.request(`/v1/tags/${tag.id}`, { ...init, key: k.key })
    expect(refused.status).toBe(403)
    expect((await body(refused)).error.message).toContain('folder scope filters')
  }
})
