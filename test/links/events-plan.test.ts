// Outbox events of link writes (same transaction, right mode), the monthly plan allowance (test links never
// count), Idempotency-Key on POST /v1/links, and permissions.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { body, makeKey, setup, type TestEnv } from '../helpers'
import { account, countLinks, expectLinkShape, fullBody, outboxOf, sql } from './_links'

const clock = new ManualClock(Date.UTC(2026, 4, 20, 12, 0, 0))
let env: TestEnv
beforeAll(async () => {
  env = await setup({ clock, env: { LNK_PLAN_LINKS_PER_MONTH: '3' } })
})
afterAll(() => env.cleanup())

type Api = Awaited<ReturnType<typeof account>>
const url = (i: number | string) => `https://example.com/e/${i}`

describe('events', () => {
  test('link.created carries the Link (no secret) in live mode for the workspace', async () => {
    const api = await account(env)
    const link = await api.make(fullBody('evt-created', { folderId: await api.folder() }))
    const events = await outboxOf(env, api.workspaceId, 'link.created')
    expect(events).toHaveLength(1)
    // Its two new tag names became tags in the same transaction (contract 7.3).
    expect((await outboxOf(env, api.workspaceId, 'tag.created')).map((e) => e.data.name).sort()).toEqual(['alpha', 'beta'])
    const [event] = events
    expect(event!.type).toBe('link.created')
    expect(event!.mode).toBe('live')
    expect(event!.workspace_id).toBe(api.workspaceId)
    expect(event!.data).toEqual(link)
    expectLinkShape(event!.data)
    // Storage itself: the event's text as stored.
    const raw = (await sql<{ data: string }>(env, 'SELECT data FROM outbox WHERE workspace_id = ?', api.workspaceId))[0]!.data
    expect(raw).not.toContain('correct horse battery staple')
    expect(raw).not.toContain('$argon2id$')
  })

  test('include=qr is not part of the event', async () => {
    const api = await account(env)
    const link = await api.make({ include: ['qr'] })
    expect(link.qr).toBeDefined()
    const [event] = await outboxOf(env, api.workspaceId, 'link.created')
    expect(event!.data).not.toHaveProperty('qr')
    expect(event!.data.id).toBe(link.id)
  })

  test('link.updated lists the sent fields in data.changes and carries the new state', async () => {
    const api = await account(env)
    const link = await api.make({ slug: 'evt-upd', title: 'old' })
    clock.advance(1000)
    const res = await api.patch(link.id, { title: 'new', tags: ['t'], expiresAt: null })
    expect(res.status).toBe(200)
    const updated = (await body(res)).data
    const events = await outboxOf(env, api.workspaceId, 'link.updated')
    expect(events).toHaveLength(1)
    const { changes, ...data } = events[0]!.data
    expect([...changes].sort()).toEqual(['expiresAt', 'tags', 'title'])
    expect(data).toEqual(updated)
    expect(events[0]!.mode).toBe('live')
    expect(events[0]!.workspace_id).toBe(api.workspaceId)
  })

  test('link.updated for a password change names the field and never carries the password', async () => {
    const api = await account(env)
    const link = await api.make({ slug: 'evt-pw' })
    expect((await api.patch(link.id, { password: 'hunter2-hunter2' })).status).toBe(200)
    const [event] = await outboxOf(env, api.workspaceId, 'link.updated')
    expect(event!.data.changes).toEqual(['password'])
    expect(event!.data.hasPassword).toBe(true)
    const raw = JSON.stringify(event!.data)
    expect(raw).not.toContain('hunter2')
    expect(raw).not.toContain('$argon2id$')
  })

  test('link.deleted carries the reference of the removed link', async () => {
    const api = await account(env)
    const link = await api.make({ slug: 'evt-del' })
    expect((await api.del(link.id)).status).toBe(200)
    const events = await outboxOf(env, api.workspaceId)
    expect(events.map((e) => e.type)).toEqual(['link.created', 'link.deleted'])
    expect(events[1]!.mode).toBe('live')
    expect(events[1]!.data).toEqual({ id: link.id, slug: 'evt-del', domain: 'localhost:8080', shortUrl: link.shortUrl, destinationUrl: link.destinationUrl })
  })

  test("test links' events are in test mode: created, updated, deleted", async () => {
    const api = await account(env)
    const testKey = (await makeKey(env.rt, api.workspaceSlug, '*', 'test')).key
    const link = await api.make({ slug: 'evt-test' }, testKey)
    expect((await api.patch(link.id, { title: 'x' }, testKey)).status).toBe(200)
    expect((await api.del(link.id, testKey)).status).toBe(200)
    const events = await outboxOf(env, api.workspaceId)
    expect(events.map((e) => [e.type, e.mode])).toEqual([
      ['link.created', 'test'],
      ['link.updated', 'test'],
      ['link.deleted', 'test'],
    ])
  })

  test('a live key changing a test link still reports test mode', async () => {
    const api = await account(env)
    const testKey = (await makeKey(env.rt, api.workspaceSlug, '*', 'test')).key
    const link = await api.make({ slug: 'evt-test-live' }, testKey)
    expect((await api.patch(link.id, { title: 'x' })).status).toBe(200)
    expect((await api.del(link.id)).status).toBe(200)
    expect((await outboxOf(env, api.workspaceId)).map((e) => e.mode)).toEqual(['test', 'test', 'test'])
  })

  test('a refused create (slug_taken) writes no link and no event', async () => {
    const api = await account(env)
    await api.make({ slug: 'evt-taken' })
    const links = await countLinks(env)
    const events = (await outboxOf(env, api.workspaceId)).length
    const res = await api.create({ destinationUrl: url(1), slug: 'evt-taken' })
    expect(res.status).toBe(409)
    expect(await countLinks(env)).toBe(links)
    expect((await outboxOf(env, api.workspaceId)).length).toBe(events)
  })

  test('a refused create (validation) writes no link and no event', async () => {
    const api = await account(env)
    expect((await api.create({ destinationUrl: 'ftp://x', slug: 'evt-invalid' })).status).toBe(400)
    expect(await countLinks(env, api.workspaceId)).toBe(0)
    expect(await outboxOf(env, api.workspaceId)).toEqual([])
  })

  test('a refused PATCH (slug_taken or validation) writes no event', async () => {
    const api = await account(env)
    await api.make({ slug: 'evt-occupied' })
    const link = await api.make({ slug: 'evt-mover' })
    expect((await api.patch(link.id, { slug: 'evt-occupied' })).status).toBe(409)
    expect((await api.patch(link.id, { slug: 'v1' })).status).toBe(400)
    expect((await api.patch(link.id, { include: ['svg'] })).status).toBe(400)
    expect((await api.patch(link.id, { colour: 'red' })).status).toBe(400)
    expect(await outboxOf(env, api.workspaceId, 'link.updated')).toEqual([])
  })

  test('a refused DELETE writes no event', async () => {
    const api = await account(env)
    const other = await account(env)
    const theirs = await other.make({ slug: 'evt-theirs' })
    expect((await api.del(theirs.id)).status).toBe(404)
    expect((await api.del('00000000-0000-4000-8000-000000000000')).status).toBe(404)
    expect(await outboxOf(env, api.workspaceId)).toEqual([])
    expect(await outboxOf(env, other.workspaceId, 'link.deleted')).toEqual([])
  })
})

describe('plan allowance (LNK_PLAN_LINKS_PER_MONTH=3)', () => {
  async function fill(api: Api, n = 3) {
    for (let i = 0; i < n; i++) await api.make({ destinationUrl: url(`fill-${i}`) })
  }

  test('the 4th live link of the month is 403 plan_limit_reached, with no link and no event', async () => {
    clock.set(Date.UTC(2026, 4, 20, 12, 0, 0))
    const api = await account(env)
    await fill(api)
    const res = await api.create({ destinationUrl: url('fourth'), slug: 'fourth' })
    expect(res.status).toBe(403)
    const payload = await body(res)
    expect(payload.success).toBe(false)
    expect(payload.error.code).toBe('plan_limit_reached')
    expect(typeof payload.error.message).toBe('string')
    expect(await countLinks(env, api.workspaceId)).toBe(3)
    expect(await outboxOf(env, api.workspaceId)).toHaveLength(3)
    // The slug asked for was not taken by the refused create.
    expect(await sql(env, "SELECT id FROM links WHERE slug = 'fourth'")).toEqual([])
  })

  test('test links never count: five after the allowance is used, and five before it', async () => {
    clock.set(Date.UTC(2026, 4, 20, 12, 0, 0))
    const api = await account(env)
    const testKey = (await makeKey(env.rt, api.workspaceSlug, '*', 'test')).key
    for (let i = 0; i < 5; i++) expect((await api.make({ destinationUrl: url(`before-${i}`) }, testKey)).isTest).toBe(true)
    await fill(api)
    expect((await api.create({ destinationUrl: url('over') })).status).toBe(403)
    for (let i = 0; i < 5; i++) {
      const res = await api.create({ destinationUrl: url(`after-${i}`) }, testKey)
      expect(res.status).toBe(201)
      expect((await body(res)).data.isTest).toBe(true)
    }
    expect(await countLinks(env, api.workspaceId)).toBe(13)
  })

  test('the allowance is per workspace', async () => {
    clock.set(Date.UTC(2026, 4, 20, 12, 0, 0))
    const a = await account(env)
    const b = await account(env)
    await fill(a)
    expect((await a.create({ destinationUrl: url('a4') })).status).toBe(403)
    await fill(b)
    expect((await b.create({ destinationUrl: url('b4') })).status).toBe(403)
  })

  test('refused creates (slug taken, invalid) do not use the allowance', async () => {
    clock.set(Date.UTC(2026, 4, 20, 12, 0, 0))
    const api = await account(env)
    await api.make({ slug: 'plan-taken' })
    expect((await api.create({ destinationUrl: url(1), slug: 'plan-taken' })).status).toBe(409)
    expect((await api.create({ destinationUrl: 'ftp://x' })).status).toBe(400)
    expect((await api.create({ destinationUrl: url(2) })).status).toBe(201)
    expect((await api.create({ destinationUrl: url(3) })).status).toBe(201)
    expect((await api.create({ destinationUrl: url(4) })).status).toBe(403)
  })

  test('a new UTC month resets it', async () => {
    clock.set(Date.UTC(2026, 4, 31, 23, 59, 59, 999))
    const api = await account(env)
    await fill(api)
    expect((await api.create({ destinationUrl: url('may') })).status).toBe(403)
    clock.advance(1) // 2026-06-01T00:00:00.000Z
    for (let i = 0; i < 3; i++) expect((await api.create({ destinationUrl: url(`june-${i}`) })).status).toBe(201)
    expect((await api.create({ destinationUrl: url('june-4') })).status).toBe(403)
    clock.set(Date.UTC(2026, 6, 1))
    expect((await api.create({ destinationUrl: url('july') })).status).toBe(201)
  })

  test('a month is the UTC month, not a 30-day window', async () => {
    clock.set(Date.UTC(2026, 1, 28, 23, 0, 0))
    const api = await account(env)
    await fill(api)
    clock.set(Date.UTC(2026, 2, 1, 0, 0, 0))
    expect((await api.create({ destinationUrl: url('march') })).status).toBe(201)
  })

  test('deleting a link does not give its allowance back within the month', async () => {
    clock.set(Date.UTC(2026, 4, 20, 12, 0, 0))
    const api = await account(env)
    await fill(api)
    const [first] = (await body(await api.list())).data
    expect((await api.del(first.id)).status).toBe(200)
    expect((await api.create({ destinationUrl: url('after-delete') })).status).toBe(403)
  })

  test('bulk respects the allowance per item; test keys are not limited', async () => {
    clock.set(Date.UTC(2026, 4, 20, 12, 0, 0))
    const api = await account(env)
    await api.make({ destinationUrl: url('used-1') })
    const res = await api.bulk({
      links: [{ destinationUrl: url(1) }, 'bad', { destinationUrl: url(2) }, { destinationUrl: url(3) }, { destinationUrl: url(4), slug: 'over-limit' }],
    })
    expect(res.status).toBe(200)
    const data = (await body(res)).data
    expect(data.results.map((r: any) => (r.ok ? 'ok' : r.error.code))).toEqual(['ok', 'validation_failed', 'ok', 'plan_limit_reached', 'plan_limit_reached'])
    expect(data.created).toBe(2)
    expect(data.failed).toBe(3)
    expect(await countLinks(env, api.workspaceId)).toBe(3)
    expect(await outboxOf(env, api.workspaceId, 'link.created')).toHaveLength(3)
    expect(await sql(env, "SELECT id FROM links WHERE slug = 'over-limit'")).toEqual([])

    const testKey = (await makeKey(env.rt, api.workspaceSlug, '*', 'test')).key
    const sandbox = await api.bulk({ links: Array.from({ length: 5 }, (_, i) => ({ destinationUrl: url(`sb-${i}`) })) }, testKey)
    expect((await body(sandbox)).data).toMatchObject({ created: 5, failed: 0 })
  })

  test('a bulk over an empty allowance creates exactly the allowance', async () => {
    clock.set(Date.UTC(2026, 4, 20, 12, 0, 0))
    const api = await account(env)
    const res = await api.bulk({ links: Array.from({ length: 10 }, (_, i) => ({ destinationUrl: url(i) })) })
    const data = (await body(res)).data
    expect(data).toMatchObject({ created: 3, failed: 7 })
    expect(data.results.slice(0, 3).every((r: any) => r.ok)).toBe(true)
    expect(data.results.slice(3).every((r: any) => r.error.code === 'plan_limit_reached')).toBe(true)
  })

  test('10 concurrent creates never exceed the allowance', async () => {
    clock.set(Date.UTC(2026, 4, 20, 12, 0, 0))
    const api = await account(env)
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => api.create({ destinationUrl: url(`race-${i}`) })))
    const statuses = results.map((r) => r.status).sort()
    expect(statuses).toEqual([201, 201, 201, 403, 403, 403, 403, 403, 403, 403])
    expect(await countLinks(env, api.workspaceId)).toBe(3)
    expect(await outboxOf(env, api.workspaceId, 'link.created')).toHaveLength(3)
  })

  test('concurrent bulks never exceed the allowance either', async () => {
    clock.set(Date.UTC(2026, 4, 20, 12, 0, 0))
    const api = await account(env)
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, b) => api.bulk({ links: [{ destinationUrl: url(`b${b}-1`) }, { destinationUrl: url(`b${b}-2`) }] })),
    )
    const created = (await Promise.all(results.map((r) => body(r)))).reduce((sum, p) => sum + p.data.created, 0)
    expect(created).toBe(3)
    expect(await countLinks(env, api.workspaceId)).toBe(3)
  })
})

describe('Idempotency-Key on POST /v1/links', () => {
  test('a replay answers the same link with Idempotent-Replayed: true and creates nothing', async () => {
    clock.set(Date.UTC(2026, 7, 3, 12, 0, 0))
    const api = await account(env)
    const sent = { destinationUrl: url('idem'), title: 'once', include: ['qr'] }
    const first = await api.create(sent, api.key, { 'idempotency-key': 'create-link-1' })
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const firstJson = await body(first)
    const again = await api.create({ title: 'once', include: ['qr'], destinationUrl: url('idem') }, api.key, { 'idempotency-key': 'create-link-1' })
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await body(again)).toEqual(firstJson)
    expect(await countLinks(env, api.workspaceId)).toBe(1)
    expect(await outboxOf(env, api.workspaceId)).toHaveLength(1)
  })

  test('a replay does not use the allowance again', async () => {
    clock.set(Date.UTC(2026, 7, 3, 12, 0, 0))
    const api = await account(env)
    for (let i = 0; i < 3; i++) {
      expect((await api.create({ destinationUrl: url('same') }, api.key, { 'idempotency-key': 'same-key' })).status).toBe(201)
    }
    expect((await api.create({ destinationUrl: url('two') })).status).toBe(201)
    expect((await api.create({ destinationUrl: url('three') })).status).toBe(201)
    expect(await countLinks(env, api.workspaceId)).toBe(3)
  })

  test('the same key with another body is 409 conflict and creates nothing', async () => {
    clock.set(Date.UTC(2026, 7, 3, 12, 0, 0))
    const api = await account(env)
    expect((await api.create({ destinationUrl: url('a') }, api.key, { 'idempotency-key': 'create-link-2' })).status).toBe(201)
    const res = await api.create({ destinationUrl: url('b') }, api.key, { 'idempotency-key': 'create-link-2' })
    expect(res.status).toBe(409)
    const payload = await body(res)
    expect(payload.error.code).toBe('conflict')
    expect(await countLinks(env, api.workspaceId)).toBe(1)
  })

  test('a refused create is not stored: the key may be used again once the problem is fixed', async () => {
    clock.set(Date.UTC(2026, 7, 3, 12, 0, 0))
    const api = await account(env)
    expect((await api.create({ destinationUrl: 'ftp://x' }, api.key, { 'idempotency-key': 'create-link-3' })).status).toBe(400)
    await api.make({ slug: 'idem-taken' })
    const taken = await api.create({ destinationUrl: url(1), slug: 'idem-taken' }, api.key, { 'idempotency-key': 'create-link-4' })
    expect(taken.status).toBe(409)
    expect((await body(taken)).error.code).toBe('slug_taken')
    const fixed = await api.create({ destinationUrl: url(1), slug: 'idem-free' }, api.key, { 'idempotency-key': 'create-link-4' })
    expect(fixed.status).toBe(201)
    expect(fixed.headers.get('idempotent-replayed')).toBeNull()
  })

  test('without the header, two identical POSTs create two links', async () => {
    clock.set(Date.UTC(2026, 7, 3, 12, 0, 0))
    const api = await account(env)
    await api.make({ destinationUrl: url('twice') })
    await api.make({ destinationUrl: url('twice') })
    expect(await countLinks(env, api.workspaceId)).toBe(2)
  })
})

describe('permissions', () => {
  let api: Api
  let link: any
  let readOnly: string
  beforeAll(async () => {
    clock.set(Date.UTC(2026, 9, 1, 12, 0, 0))
    api = await account(env)
    link = await api.make({ slug: 'perm-link' })
    readOnly = (await makeKey(env.rt, api.workspaceSlug, 'links:read')).key
  })

  test('a links:read key may list and read', async () => {
    expect((await api.list('', readOnly)).status).toBe(200)
    expect((await api.get(link.id, '', readOnly)).status).toBe(200)
    expect((await api.get(link.id, '?include=qr', readOnly)).status).toBe(200)
  })

  test('a links:read key gets 403 forbidden on every write, and nothing changes', async () => {
    const events = (await outboxOf(env, api.workspaceId)).length
    const writes = [
      await api.create({ destinationUrl: url('ro') }, readOnly),
      await api.bulk({ links: [{ destinationUrl: url('ro') }] }, readOnly),
      await api.patch(link.id, { title: 'ro' }, readOnly),
      await api.del(link.id, readOnly),
    ]
    for (const res of writes) {
      expect(res.status).toBe(403)
      const payload = await body(res)
      expect(payload.success).toBe(false)
      expect(payload.error.code).toBe('forbidden')
    }
    expect(await countLinks(env, api.workspaceId)).toBe(1)
    expect((await body(await api.get(link.id))).data).toEqual(link)
    expect((await outboxOf(env, api.workspaceId)).length).toBe(events)
  })

  test('a key without links permissions cannot read links either', async () => {
    const analytics = (await makeKey(env.rt, api.workspaceSlug, 'analytics:read')).key
    for (const res of [await api.list('', analytics), await api.get(link.id, '', analytics)]) {
      expect(res.status).toBe(403)
      expect((await body(res)).error.code).toBe('forbidden')
    }
  })

  test('without a key, or with an unknown key, every route is 401', async () => {
    const unknown = `lnk_live_${'A'.repeat(32)}`
    for (const key of [undefined, unknown]) {
      const calls = [
        env.request('/v1/links', { key }),
        env.request('/v1/links', { method: 'POST', key, json: { destinationUrl: url('anon') } }),
        env.request('/v1/links/bulk', { method: 'POST', key, json: { links: [{ destinationUrl: url('anon') }] } }),
        env.request(`/v1/links/${link.id}`, { key }),
        env.request(`/v1/links/${link.id}`, { method: 'PATCH', key, json: { title: 'anon' } }),
        env.request(`/v1/links/${link.id}`, { method: 'DELETE', key }),
      ]
      for (const res of await Promise.all(calls)) {
        expect(res.status).toBe(401)
        const payload = await body(res)
        expect(payload.success).toBe(false)
        expect(payload.error.code).toBe('unauthorized')
      }
    }
    expect(await countLinks(env, api.workspaceId)).toBe(1)
  })

  test('a request without a key learns nothing about the body: 401 even for an invalid one', async () => {
    const res = await env.request('/v1/links', { method: 'POST', json: { nonsense: true } })
    expect(res.status).toBe(401)
  })
})
