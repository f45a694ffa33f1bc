// PATCH /v1/links/bulk and POST /v1/links/bulk/delete (contract 7.3): up to 1000 ids (UUIDs or
// ext_{externalId}), one result per id in order, a bad id never holds up the others, each changed link emits
// its event, and a test key reaches test links only.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { body, makeKey, setup, type TestEnv } from '../helpers'
import { account, countLinks, expectLinkShape, expectValidation, outboxOf, sql } from './_links'

let env: TestEnv
beforeAll(async () => {
  env = await setup({ env: { LNK_SHORT_DOMAINS: 'localhost:8080,go.example' } })
})
afterAll(() => env.cleanup())

const bulkPatch = (json: unknown, key: string) => env.request('/v1/links/bulk', { method: 'PATCH', key, json })
const bulkDelete = (json: unknown, key: string, headers: Record<string, string> = {}) =>
  env.request('/v1/links/bulk/delete', { method: 'POST', key, json, headers })

async function ok200(res: Response) {
  const payload = await body(res)
  if (res.status !== 200) throw new Error(`answered ${res.status}: ${JSON.stringify(payload).slice(0, 500)}`)
  expect(payload.success).toBe(true)
  return payload.data
}

const MISSING = '01890000-0000-7000-8000-000000000000'

describe('PATCH /links/bulk', () => {
  test('sets the fields on every link named, by id or ext_, in order, each with its link.updated event', async () => {
    const api = await account(env)
    const a = await api.make({ title: 'a', tags: ['old'] })
    const b = await api.make({ title: 'b', externalId: 'crm/b' })
    const c = await api.make({ title: 'c', description: 'stays' })
    const data = await ok200(await bulkPatch({ ids: [c.id, 'ext_crm/b', a.id], set: { title: 'Renamed', tags: ['new', 'sale'] } }, api.key))
    expect(data).toMatchObject({ updated: 3, failed: 0 })
    expect(data.results.map((r: any) => [r.id, r.ok, r.link.id])).toEqual([
      [c.id, true, c.id],
      ['ext_crm/b', true, b.id],
      [a.id, true, a.id],
    ])
    for (const r of data.results) {
      expectLinkShape(r.link)
      expect(r.link).toMatchObject({ title: 'Renamed', tags: ['new', 'sale'] })
    }
    expect((await body(await api.get(c.id))).data).toMatchObject({ title: 'Renamed', description: 'stays', tags: ['new', 'sale'] })
    // The tag filter reads link_tags, which the change rewrote.
    expect((await body(await api.list('?tag=sale'))).meta.pagination.total).toBe(3)
    expect((await body(await api.list('?tag=old'))).meta.pagination.total).toBe(0)
    const events = await outboxOf(env, api.workspaceId, 'link.updated')
    expect(events.map((e) => [e.data.id, e.data.changes, e.data.title])).toEqual([
      [c.id, ['title', 'tags'], 'Renamed'],
      [b.id, ['title', 'tags'], 'Renamed'],
      [a.id, ['title', 'tags'], 'Renamed'],
    ])
  })

  test('one bad id never holds up the others: unknown, malformed, another workspace, ext_ unknown', async () => {
    const api = await account(env)
    const other = await account(env)
    const foreign = await other.make({ title: 'theirs' })
    const good = await api.make()
    const good2 = await api.make({ externalId: 'e2' })
    const ids = [MISSING, good.id, 'not-a-link', foreign.id, 'ext_nope', 'ext_e2']
    const data = await ok200(await bulkPatch({ ids, set: { isArchived: true } }, api.key))
    expect(data).toMatchObject({ updated: 2, failed: 4 })
    expect(data.results.map((r: any) => [r.id, r.ok, r.ok ? r.link.isArchived : r.error.code])).toEqual([
      [MISSING, false, 'not_found'],
      [good.id, true, true],
      ['not-a-link', false, 'not_found'],
      [foreign.id, false, 'not_found'],
      ['ext_nope', false, 'not_found'],
      ['ext_e2', true, true],
    ])
    expect(data.results[5].link.id).toBe(good2.id)
    for (const r of data.results.filter((x: any) => !x.ok)) expect(typeof r.error.message).toBe('string')
    expect((await body(await other.get(foreign.id))).data.isArchived).toBe(false)
    expect(await outboxOf(env, other.workspaceId, 'link.updated')).toEqual([])
  })

  test('a refusal of one link (slug taken on the new domain) leaves the others changed', async () => {
    const api = await account(env)
    await api.make({ slug: 'clash', domain: 'go.example' })
    const movers = [await api.make({ slug: 'clash' }), await api.make({ slug: 'free-one' })]
    const data = await ok200(await bulkPatch({ ids: movers.map((l) => l.id), set: { domain: 'go.example' } }, api.key))
    expect(data.results.map((r: any) => (r.ok ? r.link.shortUrl : r.error.code))).toEqual(['slug_taken', 'http://go.example/free-one'])
    expect(data.results[0].error.details).toEqual({ slug: 'clash', domain: 'go.example' })
    expect((await body(await api.get(movers[0]!.id))).data.domain).toBe('localhost:8080')
    // The redirect serves the moved link on its new domain at once.
    const visit = await env.app.handle(new Request('http://go.example/free-one'))
    expect(visit.status).toBe(302)
  })

  test('field rules hold per link: a looping destination is validation_failed for each id', async () => {
    const api = await account(env)
    const link = await api.make()
    const data = await ok200(await bulkPatch({ ids: [link.id], set: { destinationUrl: 'http://go.example/loop' } }, api.key))
    expect(data.results[0]).toMatchObject({ id: link.id, ok: false, error: { code: 'validation_failed' } })
    expect(data.results[0].error.details.issues.map((i: any) => i.path)).toEqual(['destinationUrl'])
  })

  test('a password is hashed once for every link, and each link then asks for it', async () => {
    const api = await account(env)
    const links = [await api.make(), await api.make()]
    const data = await ok200(await bulkPatch({ ids: links.map((l) => l.id), set: { password: 'open sesame' } }, api.key))
    expect(data.results.map((r: any) => r.link.hasPassword)).toEqual([true, true])
    const hashes = await sql<{ password_hash: string }>(env, 'SELECT password_hash FROM links WHERE workspace_id = ?', api.workspaceId)
    expect(hashes).toHaveLength(2)
    expect(new Set(hashes.map((h) => h.password_hash)).size).toBe(1)
    expect(await Bun.password.verify('open sesame', hashes[0]!.password_hash)).toBe(true)
    const events = await outboxOf(env, api.workspaceId, 'link.updated')
    expect(events.map((e) => e.data.changes)).toEqual([['password'], ['password']])
    expect((await env.request(`/${links[0].slug}`)).status).toBe(200)
  })

  test('a test key changes test links only; a live key changes test links it names', async () => {
    const api = await account(env)
    const live = await api.make({ title: 'live' })
    const testKey = (await makeKey(env.rt, api.workspaceSlug, '*', 'test')).key
    const sandboxed = await api.make({ title: 'test' }, testKey)
    const data = await ok200(await bulkPatch({ ids: [live.id, sandboxed.id], set: { title: 'by test key' } }, testKey))
    expect(data.results.map((r: any) => (r.ok ? r.link.title : r.error.code))).toEqual(['not_found', 'by test key'])
    expect((await body(await api.get(live.id))).data.title).toBe('live')
    const byLive = await ok200(await bulkPatch({ ids: [sandboxed.id], set: { title: 'by live key' } }, api.key))
    expect(byLive.results[0].link).toMatchObject({ title: 'by live key', isTest: true })
    const modes = (await outboxOf(env, api.workspaceId, 'link.updated')).map((e) => e.mode)
    expect(modes).toEqual(['test', 'test'])
  })

  test('a scoped key: links outside its scope are out_of_scope, and it cannot move links out of it', async () => {
    const api = await account(env)
    const mine = await api.make({ tags: ['team-a'] })
    const theirs = await api.make({ tags: ['team-b'] })
    const k = await makeKey(env.rt, api.workspaceSlug, 'links:read,links:write')
    await env.rt.modules.identity.repo.updateKey(k.id, { scopeFilters: { tags: ['team-a'] } })
    const data = await ok200(await bulkPatch({ ids: [mine.id, theirs.id], set: { title: 'x' } }, k.key))
    expect(data.results.map((r: any) => (r.ok ? 'ok' : r.error.code))).toEqual(['ok', 'out_of_scope'])
    const away = await ok200(await bulkPatch({ ids: [mine.id], set: { tags: ['team-b'] } }, k.key))
    expect(away.results[0].error.code).toBe('out_of_scope')
  })

  for (const [name, json, field] of [
    ['no ids', { ids: [], set: { title: 'x' } }, 'ids'],
    ['1001 ids', { ids: Array.from({ length: 1001 }, () => MISSING), set: { title: 'x' } }, 'ids'],
    ['an empty set', { ids: [MISSING], set: {} }, 'set'],
    ['a slug in set', { ids: [MISSING], set: { slug: 'one-link-only' } }, 'set.slug'],
    ['an externalId in set', { ids: [MISSING], set: { externalId: 'x' } }, 'set.externalId'],
    ['a read-only field in set', { ids: [MISSING], set: { totalClicks: 3 } }, 'set.totalClicks'],
    ['a bad value in set', { ids: [MISSING], set: { redirectStatus: 303 } }, 'set.redirectStatus'],
    ['an unknown top-level field', { ids: [MISSING], set: { title: 'x' }, dryRun: true }, 'dryRun'],
  ] as const) {
    test(`${name} is 400 validation_failed and changes nothing`, async () => {
      const api = await account(env)
      await api.make()
      await expectValidation(await bulkPatch(json, api.key), field)
      expect(await outboxOf(env, api.workspaceId, 'link.updated')).toEqual([])
    })
  }

  test('links:read is not enough', async () => {
    const api = await account(env)
    const reader = (await makeKey(env.rt, api.workspaceSlug, 'links:read')).key
    const res = await bulkPatch({ ids: [MISSING], set: { title: 'x' } }, reader)
    expect({ status: res.status, code: (await body(res)).error.code }).toEqual({ status: 403, code: 'forbidden' })
  })
})

describe('POST /links/bulk/delete', () => {
  test('deletes each link named, in order; repeats and unknown ids are not_found; each deletion has its event', async () => {
    const api = await account(env)
    const a = await api.make()
    const b = await api.make({ externalId: 'gone-b' })
    const keep = await api.make()
    expect((await env.request(`/${a.slug}`)).status).toBe(302)
    const data = await ok200(await bulkDelete({ ids: [a.id, 'ext_gone-b', MISSING, a.id] }, api.key))
    expect(data).toMatchObject({ deleted: 2, failed: 2 })
    expect(data.results.map((r: any) => [r.id, r.ok, r.ok ? r.deleted : r.error.code])).toEqual([
      [a.id, true, true],
      ['ext_gone-b', true, true],
      [MISSING, false, 'not_found'],
      [a.id, false, 'not_found'],
    ])
    expect(await countLinks(env, api.workspaceId)).toBe(1)
    expect((await api.get(keep.id)).status).toBe(200)
    expect((await outboxOf(env, api.workspaceId, 'link.deleted')).map((e) => e.data.id)).toEqual([a.id, b.id])
    // The redirect forgets them at once.
    expect((await env.request(`/${a.slug}`)).status).toBe(404)
    expect((await env.request(`/${b.slug}`)).status).toBe(404)
  })

  test('a test key deletes test links only', async () => {
    const api = await account(env)
    const live = await api.make()
    const testKey = (await makeKey(env.rt, api.workspaceSlug, '*', 'test')).key
    const sandboxed = await api.make({}, testKey)
    const data = await ok200(await bulkDelete({ ids: [live.id, sandboxed.id] }, testKey))
    expect(data.results.map((r: any) => (r.ok ? 'deleted' : r.error.code))).toEqual(['not_found', 'deleted'])
    expect((await api.get(live.id)).status).toBe(200)
  })

  test('Idempotency-Key replays the first answer instead of deleting again', async () => {
    const api = await account(env)
    const link = await api.make()
    const first = await ok200(await bulkDelete({ ids: [link.id] }, api.key, { 'idempotency-key': 'bd-1' }))
    const again = await bulkDelete({ ids: [link.id] }, api.key, { 'idempotency-key': 'bd-1' })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await ok200(again)).toEqual(first)
    expect(first.results[0]).toEqual({ id: link.id, ok: true, deleted: true })
  })

  test('no ids, or more than 1000, is 400', async () => {
    const api = await account(env)
    await expectValidation(await bulkDelete({ ids: [] }, api.key), 'ids')
    await expectValidation(await bulkDelete({ ids: Array.from({ length: 1001 }, () => MISSING) }, api.key), 'ids')
    await expectValidation(await bulkDelete({ ids: 'all' }, api.key), 'ids')
  })
})

describe('1000 links a call', () => {
  test('changes and then deletes 1000 links, each with its event', async () => {
    const api = await account(env)
    const made = await body(await api.bulk({ links: Array.from({ length: 1000 }, (_, i) => ({ destinationUrl: `https://example.com/${i}` })) }))
    const ids: string[] = made.data.results.map((r: any) => r.link.id)
    expect(ids).toHaveLength(1000)
    const changed = await ok200(await bulkPatch({ ids, set: { isArchived: true, campaignId: 'cmp_bulk' } }, api.key))
    expect(changed).toMatchObject({ updated: 1000, failed: 0 })
    expect(changed.results.map((r: any) => r.link.id)).toEqual(ids)
    expect((await body(await api.list('?archived=true&perPage=1'))).meta.pagination.total).toBe(1000)
    expect(await outboxOf(env, api.workspaceId, 'link.updated')).toHaveLength(1000)
    const gone = await ok200(await bulkDelete({ ids }, api.key))
    expect(gone).toMatchObject({ deleted: 1000, failed: 0 })
    expect(await countLinks(env, api.workspaceId)).toBe(0)
    expect(await outboxOf(env, api.workspaceId, 'link.deleted')).toHaveLength(1000)
  }, 120_000)
})
