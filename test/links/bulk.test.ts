// POST /v1/links/bulk: 1 to 1000 inputs, one result per input in order, a bad item never rejects the
// others, and the valid ones are committed together with their link.created events.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { body, makeKey, setup, type TestEnv } from '../helpers'
import { account, BASE62_7, countLinks, expectedFromFull, expectLinkShape, fullBody, outboxOf } from './_links'

const clock = new ManualClock(Date.UTC(2026, 8, 15, 9, 30, 0))
let env: TestEnv
beforeAll(async () => {
  env = await setup({ clock })
})
afterAll(() => env.cleanup())

type Api = Awaited<ReturnType<typeof account>>

async function bulk(api: Api, links: unknown[], headers: Record<string, string> = {}) {
  const res = await api.bulk({ links }, api.key, headers)
  const payload = await body(res)
  if (res.status !== 200) throw new Error(`bulk answered ${res.status}: ${JSON.stringify(payload).slice(0, 500)}`)
  expect(payload.success).toBe(true)
  return { res, data: payload.data as { created: number; failed: number; results: any[] } }
}

const url = (i: number | string) => `https://example.com/item/${i}`

describe('size limits', () => {
  for (const [name, json] of [
    ['an empty links array', { links: [] }],
    ['1001 links', { links: Array.from({ length: 1001 }, (_, i) => ({ destinationUrl: url(i) })) }],
    ['no links field', {}],
    ['links as an object', { links: { destinationUrl: url(0) } }],
    ['links as a string', { links: 'https://example.com/' }],
    ['an unknown top-level field', { links: [{ destinationUrl: url(0) }], dryRun: true }],
  ] as const) {
    test(`${name} is 400 and creates nothing`, async () => {
      const api = await account(env)
      const res = await api.bulk(json)
      expect(res.status).toBe(400)
      const payload = await body(res)
      expect(payload.success).toBe(false)
      expect(payload.error.code).toBe('validation_failed')
      expect(await countLinks(env, api.workspaceId)).toBe(0)
      expect(await outboxOf(env, api.workspaceId)).toEqual([])
    })
  }

  test('1000 links in one call all succeed, are stored and each has its event', async () => {
    const api = await account(env)
    const { data } = await bulk(
      api,
      Array.from({ length: 1000 }, (_, i) => ({ destinationUrl: url(i), tags: [`n${i}`] })),
    )
    expect(data.created).toBe(1000)
    expect(data.failed).toBe(0)
    expect(data.results).toHaveLength(1000)
    data.results.forEach((r, i) => {
      expect(r.ok).toBe(true)
      expect(r.link.destinationUrl).toBe(url(i))
      expect(r.link.tags).toEqual([`n${i}`])
      expect(r.link.slug).toMatch(BASE62_7)
    })
    expect(new Set(data.results.map((r) => r.link.slug)).size).toBe(1000)
    expect(new Set(data.results.map((r) => r.link.id)).size).toBe(1000)
    expect(await countLinks(env, api.workspaceId)).toBe(1000)
    const events = await outboxOf(env, api.workspaceId, 'link.created')
    expect(events).toHaveLength(1000)
    expect(new Set(events.map((e) => e.data.id))).toEqual(new Set(data.results.map((r) => r.link.id)))
    const listed = await body(await api.list('?perPage=1'))
    expect(listed.meta.pagination.total).toBe(1000)
  }, 60_000)

  test('a single link works', async () => {
    const api = await account(env)
    const { data } = await bulk(api, [{ destinationUrl: url('one') }])
    expect(data).toMatchObject({ created: 1, failed: 0 })
    expectLinkShape(data.results[0].link)
  })
})

describe('mixed batches', () => {
  test('one result per input, in order; bad items never reject the others', async () => {
    const api = await account(env)
    await api.make({ slug: 'already-taken' })
    const other = await account(env)
    await other.make({ slug: 'taken-elsewhere' })
    const linksBefore = await countLinks(env, api.workspaceId)
    const eventsBefore = (await outboxOf(env, api.workspaceId, 'link.created')).length

    const inputs: unknown[] = [
      { destinationUrl: url('first'), slug: 'bulk-first' }, // 0 ok
      42, // 1 wrong type
      { destinationUrl: 5 }, // 2 wrong field type
      { destinationUrl: 'ftp://example.com/file' }, // 3 bad URL
      { destinationUrl: url('reserved'), slug: 'v1' }, // 4 reserved slug
      { destinationUrl: url('dup-a'), slug: 'dup' }, // 5 ok (first claim)
      { destinationUrl: url('dup-b'), slug: 'dup' }, // 6 duplicate within the batch
      { destinationUrl: url('taken'), slug: 'already-taken' }, // 7 taken before
      { destinationUrl: url('unknown'), colour: 'red' }, // 8 unknown field
      null, // 9
      'https://example.com/string', // 10
      { destinationUrl: url('qr'), include: ['qr'] }, // 11 ok with qr
      {}, // 12 no destinationUrl
      { destinationUrl: 'http://localhost:8080/loop' }, // 13 loop
      { destinationUrl: url('past'), expiresAt: '2000-01-01T00:00:00.000Z' }, // 14 expired
      { destinationUrl: url('reserved-upper'), slug: 'HEALTHZ' }, // 15 reserved in capitals
      { destinationUrl: url('elsewhere'), slug: 'taken-elsewhere' }, // 16 taken by another workspace
      { destinationUrl: url('domain'), domain: 'evil.example' }, // 17 domain not in pool
      { destinationUrl: url('status'), redirectStatus: 303 }, // 18
      { destinationUrl: url('include'), include: ['svg'] }, // 19
      [{ destinationUrl: url('nested') }], // 20 an array
      { destinationUrl: url('last') }, // 21 ok
    ]
    const expected: (string | true)[] = [
      true,
      'validation_failed',
      'validation_failed',
      'validation_failed',
      'validation_failed',
      true,
      'slug_taken',
      'slug_taken',
      'validation_failed',
      'validation_failed',
      'validation_failed',
      true,
      'validation_failed',
      'validation_failed',
      'validation_failed',
      'validation_failed',
      'slug_taken',
      'validation_failed',
      'validation_failed',
      'validation_failed',
      'validation_failed',
      true,
    ]
    const { data } = await bulk(api, inputs)
    expect(data.results).toHaveLength(inputs.length)
    expect(data.results.map((r) => (r.ok ? true : r.error.code))).toEqual(expected)
    for (const r of data.results) {
      expect(typeof r.ok).toBe('boolean')
      if (r.ok) {
        expect(r).not.toHaveProperty('error')
        expectLinkShape(r.link)
      } else {
        expect(r).not.toHaveProperty('link')
        expect(typeof r.error.message).toBe('string')
        expect(r.error.message.length).toBeGreaterThan(0)
      }
    }
    expect(data.results[0].link).toMatchObject({ slug: 'bulk-first', destinationUrl: url('first') })
    expect(data.results[5].link).toMatchObject({ slug: 'dup', destinationUrl: url('dup-a') })
    expect(data.results[11].link.qr.svg.startsWith('<svg')).toBe(true)
    expect(data.results[11].link.qr.png).toBe(`http://localhost:8080/v1/qr/render?data=${encodeURIComponent(data.results[11].link.shortUrl)}&size=512`)
    expect(data.results[0].link).not.toHaveProperty('qr')
    expect(data.results[21].link.destinationUrl).toBe(url('last'))

    const created = expected.filter((e) => e === true).length
    expect(data.created).toBe(created)
    expect(data.failed).toBe(inputs.length - created)
    expect(await countLinks(env, api.workspaceId)).toBe(linksBefore + created)
    const events = (await outboxOf(env, api.workspaceId, 'link.created')).slice(eventsBefore)
    expect(events.map((e) => e.data.id)).toEqual(data.results.filter((r) => r.ok).map((r) => r.link.id))
    // The links read back as answered.
    for (const r of data.results.filter((x) => x.ok)) {
      const { qr: _qr, ...stored } = r.link
      expect((await body(await api.get(r.link.id))).data).toEqual(stored)
    }
  })

  test('errors of invalid items name the field', async () => {
    const api = await account(env)
    const { data } = await bulk(api, [
      { destinationUrl: 'javascript:alert(1)' },
      { destinationUrl: url(1), slug: 'a b' },
      { destinationUrl: url(2), clickLimit: 0 },
    ])
    expect(data.created).toBe(0)
    expect(data.failed).toBe(3)
    const named = data.results.map((r) => `${r.error.message} ${JSON.stringify(r.error.details ?? {})}`)
    expect(named[0]).toContain('destinationUrl')
    expect(named[1]).toContain('slug')
    expect(named[2]).toContain('clickLimit')
  })

  test('a batch where every item fails answers 200 with created 0 and writes nothing', async () => {
    const api = await account(env)
    const { data } = await bulk(api, [1, 'x', { slug: 'qr', destinationUrl: url(1) }])
    expect(data).toMatchObject({ created: 0, failed: 3 })
    expect(await countLinks(env, api.workspaceId)).toBe(0)
    expect(await outboxOf(env, api.workspaceId)).toEqual([])
  })

  test('every create field is accepted and stored in a bulk item', async () => {
    const api = await account(env)
    const sent = fullBody('bulk-full', { folderId: await api.folder() })
    const { data } = await bulk(api, [sent])
    expect(data.results[0].ok).toBe(true)
    expect(data.results[0].link).toMatchObject(expectedFromFull(sent))
    expect((await body(await api.get(data.results[0].link.id))).data).toMatchObject(expectedFromFull(sent))
  })

  test('generated slugs in one batch never collide and avoid the ones asked for', async () => {
    const api = await account(env)
    const { data } = await bulk(
      api,
      Array.from({ length: 200 }, (_, i) => ({ destinationUrl: url(i) })),
    )
    expect(data.created).toBe(200)
    expect(new Set(data.results.map((r) => r.link.slug)).size).toBe(200)
  })

  test('a test key creates test links in bulk', async () => {
    const api = await account(env)
    const testKey = (await makeKey(env.rt, api.workspaceSlug, '*', 'test')).key
    const res = await api.bulk({ links: [{ destinationUrl: url(1) }, { destinationUrl: url(2) }] }, testKey)
    expect(res.status).toBe(200)
    const data = (await body(res)).data
    expect(data.results.map((r: any) => r.link.isTest)).toEqual([true, true])
    expect((await outboxOf(env, api.workspaceId, 'link.created')).map((e) => e.mode)).toEqual(['test', 'test'])
  })
})

describe('Idempotency-Key', () => {
  test('a replay answers the same results with Idempotent-Replayed: true and creates nothing', async () => {
    const api = await account(env)
    const links = [{ destinationUrl: url(1) }, { destinationUrl: url(2), slug: 'idem-bulk' }, { destinationUrl: 'ftp://x' }]
    const first = await api.bulk({ links }, api.key, { 'idempotency-key': 'bulk-1' })
    expect(first.status).toBe(200)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const firstJson = await body(first)
    const linkCount = await countLinks(env, api.workspaceId)
    const eventCount = (await outboxOf(env, api.workspaceId)).length
    expect(linkCount).toBe(2)

    const again = await api.bulk({ links }, api.key, { 'idempotency-key': 'bulk-1' })
    expect(again.status).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await body(again)).toEqual(firstJson)
    expect(await countLinks(env, api.workspaceId)).toBe(linkCount)
    expect((await outboxOf(env, api.workspaceId)).length).toBe(eventCount)
  })

  test('the same key with another body is 409 conflict', async () => {
    const api = await account(env)
    expect((await api.bulk({ links: [{ destinationUrl: url(1) }] }, api.key, { 'idempotency-key': 'bulk-2' })).status).toBe(200)
    const res = await api.bulk({ links: [{ destinationUrl: url(2) }] }, api.key, { 'idempotency-key': 'bulk-2' })
    expect(res.status).toBe(409)
    expect((await body(res)).error.code).toBe('conflict')
    expect(await countLinks(env, api.workspaceId)).toBe(1)
  })

  test('the same key on POST /v1/links is another request: no replay across paths', async () => {
    const api = await account(env)
    expect((await api.bulk({ links: [{ destinationUrl: url(1) }] }, api.key, { 'idempotency-key': 'cross' })).status).toBe(200)
    const single = await api.create({ destinationUrl: url(1) }, api.key, { 'idempotency-key': 'cross' })
    // Either refused as a conflict or executed; never the bulk answer replayed as a Link.
    expect(single.headers.get('idempotent-replayed')).toBeNull()
    expect([201, 409]).toContain(single.status)
  })
})
