// Key scope filters on links: out-of-scope links are invisible to reads and 403 out_of_scope to writes.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { body, bootstrapAccount, makeKey, setup, type TestEnv } from '../helpers'

let env: TestEnv
let owner: string
let scoped: string
const ids: Record<string, string> = {}

beforeAll(async () => {
  env = await setup({ env: { LNK_SHORT_DOMAINS: 'go.example,lnk.example' } })
  const acct = await bootstrapAccount(env.rt)
  owner = acct.apiKey.key
  const k = await makeKey(env.rt, acct.workspace.slug, 'links:read,links:write')
  await env.rt.modules.identity.repo.updateKey(k.id, { scopeFilters: { domains: ['go.example'], tags: ['team-a'] } })
  scoped = k.key
  for (const [name, json] of Object.entries({
    inside: { destinationUrl: 'https://example.com/1', domain: 'go.example', tags: ['team-a', 'x'] },
    wrongTag: { destinationUrl: 'https://example.com/2', domain: 'go.example', tags: ['team-b'] },
    wrongDomain: { destinationUrl: 'https://example.com/3', domain: 'lnk.example', tags: ['team-a'] },
    untagged: { destinationUrl: 'https://example.com/4', domain: 'go.example' },
  })) {
    ids[name] = (await body(await env.request('/v1/links', { method: 'POST', key: owner, json }))).data.id
  }
})
afterAll(() => env.cleanup())

test('lists show only links on a scoped domain carrying a scoped tag', async () => {
  const scopedList = await body(await env.request('/v1/links', { key: scoped }))
  expect(scopedList.data.map((l: any) => l.id)).toEqual([ids.inside])
  expect(scopedList.meta.pagination.total).toBe(1)
  const all = await body(await env.request('/v1/links', { key: owner }))
  expect(all.meta.pagination.total).toBe(4)
})

test('reads of out-of-scope links are 404, as if they did not exist; QR too', async () => {
  expect((await env.request(`/v1/links/${ids.inside}`, { key: scoped })).status).toBe(200)
  for (const name of ['wrongTag', 'wrongDomain', 'untagged']) {
    const res = await env.request(`/v1/links/${ids[name]}`, { key: scoped })
    expect(res.status).toBe(404)
    expect((await body(res)).error.code).toBe('not_found')
    expect((await env.request(`/v1/qr/${ids[name]}`, { key: scoped })).status).toBe(404)
  }
})

test('writes to out-of-scope links are 403 out_of_scope and change nothing', async () => {
  for (const name of ['wrongTag', 'wrongDomain']) {
    const patch = await env.request(`/v1/links/${ids[name]}`, { method: 'PATCH', key: scoped, json: { title: 'hijacked' } })
    expect(patch.status).toBe(403)
    expect((await body(patch)).error.code).toBe('out_of_scope')
    const del = await env.request(`/v1/links/${ids[name]}`, { method: 'DELETE', key: scoped })
    expect(del.status).toBe(403)
    expect((await body(del)).error.code).toBe('out_of_scope')
    expect((await body(await env.request(`/v1/links/${ids[name]}`, { key: owner }))).data.title).toBeNull()
  }
})

test('a scoped key creates only links inside its scope, and cannot move one out of it', async () => {
  const outside = await env.request('/v1/links', {
    method: 'POST',
    key: scoped,
    json: { destinationUrl: 'https://example.com/5', domain: 'lnk.example', tags: ['team-a'] },
  })
  expect(outside.status).toBe(403)
  expect((await body(outside)).error.code).toBe('out_of_scope')
  const noTag = await env.request('/v1/links', { method: 'POST', key: scoped, json: { destinationUrl: 'https://example.com/6', domain: 'go.example' } })
  expect(noTag.status).toBe(403)
  const inside = await env.request('/v1/links', {
    method: 'POST',
    key: scoped,
    json: { destinationUrl: 'https://example.com/7', domain: 'go.example', tags: ['team-a'] },
  })
  expect(inside.status).toBe(201)
  const moved = await env.request(`/v1/links/${ids.inside}`, { method: 'PATCH', key: scoped, json: { tags: ['team-b'] } })
  expect(moved.status).toBe(403)
  expect((await body(moved)).error.code).toBe('out_of_scope')
  const fine = await env.request(`/v1/links/${ids.inside}`, { method: 'PATCH', key: scoped, json: { title: 'ok', tags: ['team-a', 'y'] } })
  expect(fine.status).toBe(200)
})

test('bulk: out-of-scope items fail one by one, the rest are created', async () => {
  const res = await body(
    await env.request('/v1/links/bulk', {
      method: 'POST',
      key: scoped,
      json: {
        links: [
          { destinationUrl: 'https://example.com/8', domain: 'go.example', tags: ['team-a'] },
          { destinationUrl: 'https://example.com/9', domain: 'lnk.example', tags: ['team-a'] },
        ],
      },
    }),
  )
  expect(res.data.results.map((r: any) => r.ok)).toEqual([true, false])
  expect(res.data.results[1].error.code).toBe('out_of_scope')
})
