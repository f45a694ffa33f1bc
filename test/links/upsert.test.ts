// externalId (contract 7.3): the field on create, PATCH and bulk create, unique within a workspace (409
// external_id_taken), links addressed as ext_{externalId} on read, change and delete; and PUT /links/upsert,
// which creates or changes a link found by externalId, or by domain + slug.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { body, makeKey, setup, type TestEnv } from '../helpers'
import { account, countLinks, expectValidation, outboxOf } from './_links'

let env: TestEnv
beforeAll(async () => {
  env = await setup({ env: { LNK_SHORT_DOMAINS: 'localhost:8080,go.example' } })
})
afterAll(() => env.cleanup())

type Api = Awaited<ReturnType<typeof account>>

const upsert = (json: unknown, key: string, headers: Record<string, string> = {}) => env.request('/v1/links/upsert', { method: 'PUT', key, json, headers })

async function expectError(res: Response, status: number, code: string) {
  const payload = await body(res)
  expect({ status: res.status, code: payload.error?.code }).toEqual({ status, code })
  return payload
}

describe('externalId', () => {
  let api: Api
  beforeAll(async () => {
    api = await account(env)
  })

  test('is stored on create, answered on every Link, and null when none was given', async () => {
    const link = await api.make({ externalId: 'crm-1' })
    expect(link.externalId).toBe('crm-1')
    expect((await api.make()).externalId).toBeNull()
    const listed = await body(await api.list())
    expect(listed.data.find((l: any) => l.id === link.id).externalId).toBe('crm-1')
    const [created] = await outboxOf(env, api.workspaceId, 'link.created')
    expect(created!.data.externalId).toBe('crm-1')
  })

  test('ext_{externalId} reads, changes and deletes the link it names', async () => {
    const link = await api.make({ externalId: 'order-7', title: 'before' })
    const read = await api.get('ext_order-7')
    expect(read.status).toBe(200)
    expect((await body(read)).data.id).toBe(link.id)

    const patched = await api.patch('ext_order-7', { title: 'after' })
    expect(patched.status).toBe(200)
    expect((await body(patched)).data).toMatchObject({ id: link.id, title: 'after', externalId: 'order-7' })
    const updated = (await outboxOf(env, api.workspaceId, 'link.updated')).filter((e) => e.data.id === link.id)
    expect(updated.map((e) => e.data.changes)).toEqual([['title']])

    const deleted = await api.del('ext_order-7')
    expect(await body(deleted)).toMatchObject({ success: true, data: { id: link.id, deleted: true } })
    await expectError(await api.get(link.id), 404, 'not_found')
    await expectError(await api.get('ext_order-7'), 404, 'not_found')
    expect((await outboxOf(env, api.workspaceId, 'link.deleted')).map((e) => e.data.id)).toContain(link.id)
  })

  test('an externalId with reserved characters is reached percent-encoded', async () => {
    const externalId = 'shop/order 42?café#1%'
    const link = await api.make({ externalId })
    const res = await api.get(`ext_${encodeURIComponent(externalId)}`)
    expect(res.status).toBe(200)
    expect((await body(res)).data).toMatchObject({ id: link.id, externalId })
  })

  test('is unique within a workspace (409 external_id_taken), case-sensitive, and free in other workspaces', async () => {
    const first = await api.make({ externalId: 'dup' })
    const before = await countLinks(env, api.workspaceId)
    const again = await api.create({ destinationUrl: 'https://example.com/x', externalId: 'dup' })
    const payload = await expectError(again, 409, 'external_id_taken')
    expect(payload.error.details).toEqual({ externalId: 'dup' })
    expect(await countLinks(env, api.workspaceId)).toBe(before)
    expect((await api.make({ externalId: 'DUP' })).externalId).toBe('DUP')
    const other = await account(env)
    expect((await other.make({ externalId: 'dup' })).externalId).toBe('dup')

    const second = await api.make({ externalId: 'free' })
    await expectError(await api.patch(second.id, { externalId: 'dup' }), 409, 'external_id_taken')
    expect((await body(await api.get(second.id))).data.externalId).toBe('free')
    expect((await body(await api.get('ext_dup'))).data.id).toBe(first.id)
  })

  test('PATCH null clears it, and the ext_ form then finds nothing', async () => {
    const link = await api.make({ externalId: 'to-clear' })
    expect((await body(await api.patch(link.id, { externalId: null }))).data.externalId).toBeNull()
    await expectError(await api.get('ext_to-clear'), 404, 'not_found')
    expect((await api.make({ externalId: 'to-clear' })).id).not.toBe(link.id)
  })

  test('1 to 255 characters without control characters', async () => {
    for (const bad of ['', 'x'.repeat(256), 'tab\there', 'nl\n', 'del\u007f']) {
      await expectValidation(await api.create({ destinationUrl: 'https://example.com/', externalId: bad }), 'externalId')
    }
    expect((await api.make({ externalId: 'y'.repeat(255) })).externalId).toBe('y'.repeat(255))
  })

  test('a reference no link can carry is 404, an overlong one included; a NUL is refused as everywhere; a malformed escape 400', async () => {
    for (const ref of [`ext_${'z'.repeat(256)}`, 'ext_', 'ext_%7F']) await expectError(await api.get(ref), 404, 'not_found')
    await expectError(await api.get('ext_%00'), 400, 'validation_failed')
    await expectValidation(await api.get('ext_%ZZ'), 'id')
    const res = await env.request('/v1/links/bulk/delete', { method: 'POST', key: api.key, json: { ids: ['ext_\u0000'] } })
    expect({ status: res.status, issues: (await body(res)).error.details.issues }).toEqual({
      status: 400,
      issues: [{ path: 'ids.0', message: 'must not contain the NUL character (U+0000)' }],
    })
  })

  test('bulk create: the first of two inputs with one externalId wins, the other is external_id_taken', async () => {
    const res = await api.bulk({
      links: [
        { destinationUrl: 'https://example.com/a', externalId: 'batch-1' },
        { destinationUrl: 'https://example.com/b', externalId: 'batch-1' },
        { destinationUrl: 'https://example.com/c', externalId: 'batch-2' },
      ],
    })
    const { data } = await body(res)
    expect(data.results.map((r: any) => r.ok)).toEqual([true, false, true])
    expect(data.results[1].error.code).toBe('external_id_taken')
    expect((await body(await api.get('ext_batch-1'))).data.destinationUrl).toBe('https://example.com/a')
  })

  test('a test key does not reach a live link by its externalId', async () => {
    await api.make({ externalId: 'live-only' })
    const testKey = (await makeKey(env.rt, api.workspaceSlug, '*', 'test')).key
    await expectError(await api.get('ext_live-only', '', testKey), 404, 'not_found')
    await expectError(await env.request('/v1/links/ext_live-only', { method: 'DELETE', key: testKey }), 404, 'not_found')
    expect((await api.get('ext_live-only')).status).toBe(200)
  })
})

describe('PUT /links/upsert', () => {
  test('by externalId: 201 and link.created the first time, 200 and link.updated after, fields not sent unchanged', async () => {
    const api = await account(env)
    const first = await upsert({ externalId: 'sku-9', destinationUrl: 'https://example.com/v1', title: 'Kept', tags: ['a'] }, api.key)
    expect(first.status).toBe(201)
    const created = (await body(first)).data
    expect(created).toMatchObject({ externalId: 'sku-9', destinationUrl: 'https://example.com/v1', title: 'Kept', tags: ['a'] })

    const second = await upsert({ externalId: 'sku-9', destinationUrl: 'https://example.com/v2', tags: ['b'] }, api.key)
    expect(second.status).toBe(200)
    expect((await body(second)).data).toMatchObject({
      id: created.id,
      slug: created.slug,
      destinationUrl: 'https://example.com/v2',
      title: 'Kept',
      tags: ['b'],
    })
    expect(await countLinks(env, api.workspaceId)).toBe(1)
    expect((await outboxOf(env, api.workspaceId, 'link.created')).map((e) => e.data.id)).toEqual([created.id])
    const updated = await outboxOf(env, api.workspaceId, 'link.updated')
    expect(updated.map((e) => [e.data.id, e.data.changes])).toEqual([[created.id, ['externalId', 'destinationUrl', 'tags']]])
    // The redirect follows the change at once.
    const visit = await env.request(`/${created.slug}`)
    expect(visit.headers.get('location')).toBe('https://example.com/v2')
  })

  test('by domain + slug when no externalId is sent', async () => {
    const api = await account(env)
    const first = await upsert({ slug: 'spring-sale', domain: 'go.example', destinationUrl: 'https://example.com/1' }, api.key)
    expect(first.status).toBe(201)
    const id = (await body(first)).data.id
    // The same slug on the other domain is another link.
    const elsewhere = await upsert({ slug: 'spring-sale', destinationUrl: 'https://example.com/default' }, api.key)
    expect(elsewhere.status).toBe(201)
    expect((await body(elsewhere)).data.domain).toBe('localhost:8080')

    const again = await upsert({ slug: 'spring-sale', domain: 'GO.example', destinationUrl: 'https://example.com/2' }, api.key)
    expect(again.status).toBe(200)
    expect((await body(again)).data).toMatchObject({ id, domain: 'go.example', destinationUrl: 'https://example.com/2' })
    expect(await countLinks(env, api.workspaceId)).toBe(2)
  })

  test('needs externalId or slug; the create rules apply to both paths', async () => {
    const api = await account(env)
    await expectValidation(await upsert({ destinationUrl: 'https://example.com/' }, api.key), 'externalId')
    await expectValidation(await upsert({ slug: 's', domain: 'nul\u0000.example', destinationUrl: 'https://example.com/' }, api.key), 'domain')
    await expectValidation(await upsert({ externalId: 'e1', destinationUrl: 'http://localhost:8080/loop' }, api.key), 'destinationUrl')
    expect((await upsert({ externalId: 'e1', destinationUrl: 'https://example.com/' }, api.key)).status).toBe(201)
    await expectValidation(
      await upsert({ externalId: 'e1', destinationUrl: 'https://example.com/', expiresAt: '2001-01-01T00:00:00.000Z' }, api.key),
      'expiresAt',
    )
    await expectValidation(await upsert({ externalId: 'e1', destinationUrl: 'https://example.com/', unknownField: 1 }, api.key), 'unknownField')
    expect(await countLinks(env, api.workspaceId)).toBe(1)
  })

  test('changing a found link to a slug in use is 409 slug_taken', async () => {
    const api = await account(env)
    await api.make({ slug: 'taken' })
    expect((await upsert({ externalId: 'mover', destinationUrl: 'https://example.com/' }, api.key)).status).toBe(201)
    await expectError(await upsert({ externalId: 'mover', slug: 'taken', destinationUrl: 'https://example.com/' }, api.key), 409, 'slug_taken')
  })

  test('Idempotency-Key replays the first answer, status included', async () => {
    const api = await account(env)
    const json = { externalId: 'idem', destinationUrl: 'https://example.com/' }
    const first = await upsert(json, api.key, { 'idempotency-key': 'upsert-1' })
    expect(first.status).toBe(201)
    const again = await upsert(json, api.key, { 'idempotency-key': 'upsert-1' })
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect((await body(again)).data.id).toBe((await body(first)).data.id)
    await expectError(await upsert({ ...json, title: 'other' }, api.key, { 'idempotency-key': 'upsert-1' }), 409, 'conflict')
    expect(await outboxOf(env, api.workspaceId, 'link.updated')).toEqual([])
  })

  test('concurrent upserts of one externalId make one link: one 201, the others 200', async () => {
    const api = await account(env)
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => upsert({ externalId: 'race', destinationUrl: `https://example.com/${i}` }, api.key)))
    const statuses = answers.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 200, 200, 200, 200, 201])
    expect(await countLinks(env, api.workspaceId)).toBe(1)
    expect(await outboxOf(env, api.workspaceId, 'link.created')).toHaveLength(1)
  })

  test('a test key finds and makes test links only: a live link holding the externalId is 409 to it', async () => {
    const api = await account(env)
    const live = await api.make({ externalId: 'shared', title: 'live' })
    const testKey = (await makeKey(env.rt, api.workspaceSlug, '*', 'test')).key
    await expectError(await upsert({ externalId: 'shared', destinationUrl: 'https://example.com/t', title: 'test' }, testKey), 409, 'external_id_taken')
    expect((await body(await api.get(live.id))).data.title).toBe('live')
    const made = await upsert({ externalId: 'sandboxed', destinationUrl: 'https://example.com/t' }, testKey)
    expect(made.status).toBe(201)
    expect((await body(made)).data.isTest).toBe(true)
    expect((await upsert({ externalId: 'sandboxed', destinationUrl: 'https://example.com/u' }, testKey)).status).toBe(200)
  })

  test('a scoped key cannot change a link outside its scope, nor create one there', async () => {
    const api = await account(env)
    await api.make({ externalId: 'other-team', tags: ['team-b'] })
    const k = await makeKey(env.rt, api.workspaceSlug, 'links:read,links:write')
    await env.rt.modules.identity.repo.updateKey(k.id, { scopeFilters: { tags: ['team-a'] } })
    await expectError(await upsert({ externalId: 'other-team', destinationUrl: 'https://example.com/', tags: ['team-a'] }, k.key), 403, 'out_of_scope')
    await expectError(await upsert({ externalId: 'new', destinationUrl: 'https://example.com/' }, k.key), 403, 'out_of_scope')
    expect((await upsert({ externalId: 'new', destinationUrl: 'https://example.com/', tags: ['team-a'] }, k.key)).status).toBe(201)
  })

  test('links:read is not enough', async () => {
    const api = await account(env)
    const reader = (await makeKey(env.rt, api.workspaceSlug, 'links:read')).key
    await expectError(await upsert({ externalId: 'r', destinationUrl: 'https://example.com/' }, reader), 403, 'forbidden')
  })
})

describe('PUT /links/upsert and the plan allowance', () => {
  let limited: TestEnv
  beforeAll(async () => {
    limited = await setup({ env: { LNK_PLAN_LINKS_PER_MONTH: '1' } })
  })
  afterAll(() => limited.cleanup())

  test('a create counts and is refused past the allowance; a change of a found link is not', async () => {
    const api = await account(limited)
    const put = (json: unknown) => limited.request('/v1/links/upsert', { method: 'PUT', key: api.key, json })
    expect((await put({ externalId: 'one', destinationUrl: 'https://example.com/1' })).status).toBe(201)
    await expectError(await put({ externalId: 'two', destinationUrl: 'https://example.com/2' }), 403, 'plan_limit_reached')
    expect((await put({ externalId: 'one', destinationUrl: 'https://example.com/3' })).status).toBe(200)
    expect(await countLinks(limited, api.workspaceId)).toBe(1)
  })
})
