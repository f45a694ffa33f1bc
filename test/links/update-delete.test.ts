// GET, PATCH and DELETE /v1/links/{id}: reads, partial updates (null clears), slug changes, flags, deletion,
// and workspace isolation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app'
import { iso, ManualClock } from '../../src/platform/clock'
import { silentLogger } from '../../src/platform/log'
import { openRuntime } from '../../src/runtime'
import { body, setup, type TestEnv } from '../helpers'
import { account, countLinks, expectLinkShape, expectValidation, fullBody, outboxOf, sql } from './_links'

const START = Date.UTC(2026, 6, 1, 10, 0, 0)
const clock = new ManualClock(START)
let env: TestEnv
let api: Awaited<ReturnType<typeof account>>
let other: Awaited<ReturnType<typeof account>>
beforeAll(async () => {
  env = await setup({ clock, env: { LNK_SHORT_DOMAINS: 'localhost:8080,go.example' } })
  api = await account(env)
  other = await account(env)
})
afterAll(() => env.cleanup())

let n = 0
/** A link with every field set, created one second before the test moves on. */
async function fullLink(overrides: Record<string, unknown> = {}) {
  const link = await api.make(fullBody(`full-${++n}`, { folderId: await api.folder(), ...overrides }))
  clock.advance(1000)
  return link
}

async function patch(id: string, json: unknown) {
  const res = await api.patch(id, json)
  const payload = await body(res)
  if (res.status !== 200) throw new Error(`PATCH answered ${res.status}: ${JSON.stringify(payload)}`)
  expect(payload.success).toBe(true)
  return payload.data
}

const read = async (id: string) => (await body(await api.get(id))).data

describe('GET /v1/links/{id}', () => {
  test('answers the link', async () => {
    const link = await fullLink()
    const res = await api.get(link.id)
    expect(res.status).toBe(200)
    const payload = await body(res)
    expect(payload.success).toBe(true)
    expectLinkShape(payload.data)
    expect(payload.data).toEqual(link)
  })

  test('?include=qr attaches the qr object', async () => {
    const link = await fullLink()
    const res = await api.get(link.id, '?include=qr')
    expect(res.status).toBe(200)
    const data = (await body(res)).data
    expect(data.qr.svg.startsWith('<svg')).toBe(true)
    expect(data.qr.png).toBe(`http://localhost:8080/v1/qr/render?data=${encodeURIComponent(link.shortUrl)}&size=512`)
    const { qr: _qr, ...rest } = data
    expect(rest).toEqual(link)
    expect((await api.get(link.id, '?include=svg')).status).toBe(400)
  })

  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '123', 'x'.repeat(300), "1' OR '1'='1", '%00']) {
    test(`unknown or malformed id ${JSON.stringify(id.slice(0, 40))} is 404 not_found`, async () => {
      const res = await api.get(encodeURIComponent(id))
      expect(res.status).toBe(404)
      const payload = await body(res)
      expect(payload.success).toBe(false)
      expect(payload.error.code).toBe('not_found')
    })
  }

  test("another workspace's link is 404, for GET, PATCH and DELETE, and stays untouched", async () => {
    const theirs = await other.make({ slug: 'theirs-1', title: 'theirs' })
    for (const res of [await api.get(theirs.id), await api.patch(theirs.id, { title: 'hijacked' }), await api.del(theirs.id)]) {
      expect(res.status).toBe(404)
      expect((await body(res)).error.code).toBe('not_found')
    }
    expect((await body(await other.get(theirs.id))).data).toEqual(theirs)
  })
})

describe('PATCH /v1/links/{id}', () => {
  test('changes only the fields sent (and updatedAt)', async () => {
    const before = await fullLink()
    const after = await patch(before.id, { title: 'New title' })
    expect(after).toEqual({ ...before, title: 'New title', updatedAt: iso(clock.now()) })
    expect(await read(before.id)).toEqual(after)
  })

  test('several fields at once, every other field kept', async () => {
    const before = await fullLink()
    const change = {
      destinationUrl: 'https://example.org/new',
      description: 'changed',
      tags: ['gamma'],
      redirectStatus: 301,
      clickLimit: 5,
      utmSource: 'ads',
      twitterCard: 'player',
      publicStatsEnabled: false,
      conversionTracking: false,
      expiresAt: '2030-01-01T00:00:00.000Z',
      domain: 'go.example',
    }
    const after = await patch(before.id, change)
    expect(after).toEqual({ ...before, ...change, shortUrl: `http://go.example/${before.slug}`, updatedAt: iso(clock.now()) })
    expect(await read(before.id)).toEqual(after)
  })

  test('null clears every nullable field', async () => {
    const before = await fullLink()
    const nulls = {
      title: null,
      description: null,
      folderId: null,
      campaignId: null,
      fallbackUrl: null,
      expiresAt: null,
      clickLimit: null,
      uniqueIpLimit: null,
      utmSource: null,
      utmMedium: null,
      utmCampaign: null,
      utmTerm: null,
      utmContent: null,
      ogTitle: null,
      ogDescription: null,
      ogImageUrl: null,
      twitterCard: null,
    }
    const after = await patch(before.id, { ...nulls, password: null })
    expect(after).toEqual({ ...before, ...nulls, hasPassword: false, updatedAt: iso(clock.now()) })
    const [row] = await sql<{ password_hash: string | null }>(env, 'SELECT password_hash FROM links WHERE id = ?', before.id)
    expect(row!.password_hash).toBeNull()
  })

  test('a password can be set and changed; it is hashed with argon2id and never returned', async () => {
    const link = await api.make({ slug: 'pw-later' })
    expect(link.hasPassword).toBe(false)
    const res = await api.patch(link.id, { password: 'first secret' })
    const text = await res.text()
    expect(res.status).toBe(200)
    expect(text).not.toContain('first secret')
    expect(JSON.parse(text).data.hasPassword).toBe(true)
    const hash = async () => (await sql<{ password_hash: string }>(env, 'SELECT password_hash FROM links WHERE id = ?', link.id))[0]!.password_hash
    expect((await hash()).startsWith('$argon2id$')).toBe(true)
    expect(await Bun.password.verify('first secret', await hash())).toBe(true)
    await patch(link.id, { password: 'second secret' })
    expect(await Bun.password.verify('second secret', await hash())).toBe(true)
    expect(await Bun.password.verify('first secret', await hash())).toBe(false)
    // A PATCH that does not mention the password keeps it.
    await patch(link.id, { title: 'still protected' })
    expect(await Bun.password.verify('second secret', await hash())).toBe(true)
    expect((await read(link.id)).hasPassword).toBe(true)
  })

  test('an empty body changes nothing but updatedAt', async () => {
    const before = await fullLink()
    const after = await patch(before.id, {})
    expect(after).toEqual({ ...before, updatedAt: iso(clock.now()) })
    expect(after.updatedAt).not.toBe(before.updatedAt)
  })

  test('no body at all changes nothing but updatedAt', async () => {
    const before = await fullLink()
    const res = await env.request(`/v1/links/${before.id}`, { method: 'PATCH', key: api.key })
    expect(res.status).toBe(200)
    expect((await body(res)).data).toEqual({ ...before, updatedAt: iso(clock.now()) })
  })

  test('the slug changes when free; the old slug is free again', async () => {
    const before = await fullLink()
    const after = await patch(before.id, { slug: 'renamed-Slug' })
    expect(after).toEqual({ ...before, slug: 'renamed-Slug', shortUrl: 'http://localhost:8080/renamed-Slug', updatedAt: iso(clock.now()) })
    expect((await api.create({ destinationUrl: 'https://example.com/', slug: before.slug })).status).toBe(201)
  })

  test('the slug may be set to its current value', async () => {
    const before = await fullLink()
    const after = await patch(before.id, { slug: before.slug })
    expect(after.slug).toBe(before.slug)
  })

  test('a slug in use is 409 slug_taken and changes nothing', async () => {
    const taken = await api.make({ slug: 'occupied' })
    const theirs = await other.make({ slug: 'occupied-by-them' })
    const before = await fullLink()
    for (const slug of [taken.slug, theirs.slug]) {
      const res = await api.patch(before.id, { slug, title: 'must not stick' })
      expect(res.status).toBe(409)
      const payload = await body(res)
      expect(payload.success).toBe(false)
      expect(payload.error.code).toBe('slug_taken')
    }
    expect(await read(before.id)).toEqual(before)
  })

  test('moving to a domain where the slug is taken is 409 slug_taken', async () => {
    await api.make({ slug: 'clash', domain: 'go.example' })
    const before = await api.make({ slug: 'clash' })
    const res = await api.patch(before.id, { domain: 'go.example' })
    expect(res.status).toBe(409)
    expect((await body(res)).error.code).toBe('slug_taken')
    expect(await read(before.id)).toEqual(before)
  })

  test('slugs stay case-sensitive on PATCH', async () => {
    await api.make({ slug: 'CaseSlug' })
    const link = await api.make({ slug: 'case-source' })
    expect((await patch(link.id, { slug: 'caseslug' })).slug).toBe('caseslug')
  })

  test('isActive and isArchived flags change and read back', async () => {
    const before = await fullLink()
    const off = await patch(before.id, { isActive: false })
    expect(off).toEqual({ ...before, isActive: false, updatedAt: iso(clock.now()) })
    clock.advance(1000)
    const archived = await patch(before.id, { isArchived: true })
    expect(archived).toEqual({ ...before, isActive: false, isArchived: true, updatedAt: iso(clock.now()) })
    clock.advance(1000)
    const back = await patch(before.id, { isActive: true, isArchived: false })
    expect(back).toEqual({ ...before, updatedAt: iso(clock.now()) })
  })

  describe('refusals change nothing', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['include other than qr', { include: ['svg'] }, 'include'],
      ['an unknown field', { colour: 'red' }, 'colour'],
      ['a read-only field of the wrong type', { totalClicks: 'many' }, 'totalClicks'],
      ['a reserved slug', { slug: 'v1' }, 'slug'],
      ['a reserved slug in capitals', { slug: 'HEALTHZ' }, 'slug'],
      ['a malformed slug', { slug: 'a b' }, 'slug'],
      ['an empty slug', { slug: '' }, 'slug'],
      ['a 65-character slug', { slug: 'c'.repeat(65) }, 'slug'],
      ['an ftp destination', { destinationUrl: 'ftp://example.com/' }, 'destinationUrl'],
      ['a relative destination', { destinationUrl: '/x' }, 'destinationUrl'],
      ['a null destination', { destinationUrl: null }, 'destinationUrl'],
      ['a looping destination', { destinationUrl: 'http://localhost:8080/loop' }, 'destinationUrl'],
      ['a looping fallback', { fallbackUrl: 'https://go.example/loop' }, 'fallbackUrl'],
      ['a javascript: fallback', { fallbackUrl: 'javascript:alert(1)' }, 'fallbackUrl'],
      ['a too long destination', { destinationUrl: `https://example.com/${'a'.repeat(2030)}` }, 'destinationUrl'],
      ['a domain outside the pool', { domain: 'evil.example' }, 'domain'],
      ['an expiry in the past', { expiresAt: iso(START - 1) }, 'expiresAt'],
      ['redirectStatus 303', { redirectStatus: 303 }, 'redirectStatus'],
      ['clickLimit 0', { clickLimit: 0 }, 'clickLimit'],
      ['a non-boolean isActive', { isActive: 'no' }, 'isActive'],
      ['a null isArchived', { isArchived: null }, 'isArchived'],
    ]
    for (const [name, json, field] of cases) {
      test(`${name} is 400`, async () => {
        const before = await fullLink()
        await expectValidation(await api.patch(before.id, { title: 'must not stick', ...json }), field)
        expect(await read(before.id)).toEqual(before)
      })
    }
  })

  test('include: ["qr"] in the body returns the link with its qr object; include changes nothing', async () => {
    const before = await fullLink()
    const data = await patch(before.id, { include: ['qr'], title: 'with qr' })
    expect(data.qr.svg.startsWith('<svg')).toBe(true)
    expect(data.qr.png).toBe(`http://localhost:8080/v1/qr/render?data=${encodeURIComponent(before.shortUrl)}&size=512`)
    const { qr: _qr, ...rest } = data
    expect(rest).toEqual({ ...before, title: 'with qr', updatedAt: iso(clock.now()) })
    expect(await patch(before.id, { title: 'without' })).not.toHaveProperty('qr')
    expect((await patch(before.id, { include: [] })).title).toBe('without')
  })

  describe('a Link sent back as fetched', () => {
    test('is accepted: read-only fields are ignored, writable ones applied', async () => {
      const before = await fullLink()
      const fetched = (await body(await api.get(before.id, '?include=qr'))).data
      const data = await patch(before.id, { ...fetched, title: 'edited copy' })
      const { qr: _qr, ...rest } = data
      expect(rest).toEqual({ ...before, title: 'edited copy', updatedAt: iso(clock.now()) })
      expect(await read(before.id)).toEqual({ ...before, title: 'edited copy', updatedAt: iso(clock.now()) })
    })

    test('read-only fields with other values change nothing', async () => {
      const before = await fullLink()
      const data = await patch(before.id, {
        id: '00000000-0000-4000-8000-000000000000',
        shortUrl: 'http://elsewhere.example/x',
        hasPassword: false,
        totalClicks: 1000,
        uniqueClicks: 999,
        isTest: true,
        createdAt: '2020-01-01T00:00:00.000Z',
        updatedAt: '2020-01-01T00:00:00.000Z',
        qr: { svg: '<svg/>', png: 'http://elsewhere.example/qr.png' },
      })
      expect(data).toEqual({ ...before, updatedAt: iso(clock.now()) })
      expect(await sql(env, 'SELECT is_test, password_hash IS NOT NULL AS p FROM links WHERE id = ?', before.id)).toEqual([{ is_test: 0, p: 1 }])
    })

    test('an expiry that has passed since, sent back unchanged, is no change; a new past one is still 400', async () => {
      const link = await api.make({ slug: `expiring-${++n}`, expiresAt: iso(clock.now() + 60_000) })
      clock.advance(120_000)
      const fetched = await read(link.id)
      expect((await patch(link.id, { ...fetched, title: 'after expiry' })).expiresAt).toBe(link.expiresAt)
      await expectValidation(await api.patch(link.id, { expiresAt: iso(clock.now() - 1000) }), 'expiresAt')
    })

    test('a domain dropped from LNK_SHORT_DOMAINS since, sent back unchanged, is no change; moving to it is 400', async () => {
      const link = await api.make({ slug: `moved-${++n}`, domain: 'go.example' })
      // The same data, served by an instance whose pool no longer has go.example.
      const rt = await openRuntime({ ...env.config, shortDomains: ['localhost:8080'] }, { clock, log: silentLogger })
      try {
        const app = createApp(rt)
        const send = (id: string, json: unknown) =>
          app.handle(
            new Request(`http://localhost:8080/v1/links/${id}`, {
              method: 'PATCH',
              headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
              body: JSON.stringify(json),
            }),
          )
        const res = await send(link.id, { ...link, title: 'still on go.example' })
        expect(res.status).toBe(200)
        expect((await body(res)).data).toMatchObject({ domain: 'go.example', title: 'still on go.example' })
        const other = await api.make({ slug: `stays-${n}` })
        await expectValidation(await send(other.id, { domain: 'go.example' }), 'domain')
      } finally {
        await rt.close()
      }
    })

    test('the link.updated event names only the fields that are applied', async () => {
      const before = await fullLink()
      const fetched = await read(before.id)
      await patch(before.id, { include: ['qr'], id: before.id, totalClicks: 5, isTest: false, title: 'evented' })
      await patch(before.id, { ...fetched, title: 'evented again' })
      const events = (await outboxOf(env, api.workspaceId, 'link.updated')).filter((e) => e.data.id === before.id)
      expect(events.map((e) => e.data.changes)).toEqual([
        ['title'],
        Object.keys(fetched).filter(
          (f) => !['id', 'shortUrl', 'hasPassword', 'totalClicks', 'uniqueClicks', 'isTest', 'createdAt', 'updatedAt', 'lastClickedAt'].includes(f),
        ),
      ])
    })
  })

  test('URLs are checked by the service: an IDN host and an unescaped space are accepted, non-strings refused', async () => {
    const before = await fullLink()
    const odd = 'https://bücher.example/a b|c'
    expect((await patch(before.id, { destinationUrl: odd, fallbackUrl: odd, ogImageUrl: odd })).destinationUrl).toBe(odd)
    for (const field of ['destinationUrl', 'fallbackUrl', 'ogImageUrl']) {
      await expectValidation(await api.patch(before.id, { [field]: 42 }), field)
      const empty = await expectValidation(await api.patch(before.id, { [field]: '' }), field)
      expect(empty.error.message).toContain('absolute URL')
    }
  })

  test('PATCH of an unknown id is 404', async () => {
    const res = await api.patch('00000000-0000-4000-8000-000000000000', { title: 'x' })
    expect(res.status).toBe(404)
    expect((await body(res)).error.code).toBe('not_found')
  })
})

describe('DELETE /v1/links/{id}', () => {
  test('answers {id, deleted: true}; then GET is 404 and the slug can be reused', async () => {
    const link = await api.make({ slug: 'to-delete' })
    const before = await countLinks(env)
    const res = await api.del(link.id)
    expect(res.status).toBe(200)
    expect(await body(res)).toEqual({ success: true, data: { id: link.id, deleted: true } })
    expect(await countLinks(env)).toBe(before - 1)
    const gone = await api.get(link.id)
    expect(gone.status).toBe(404)
    expect((await body(gone)).error.code).toBe('not_found')
    expect((await api.patch(link.id, { title: 'x' })).status).toBe(404)
    const again = await api.del(link.id)
    expect(again.status).toBe(404)
    expect((await body(again)).error.code).toBe('not_found')
    const reused = await api.make({ slug: 'to-delete', destinationUrl: 'https://example.com/reused' })
    expect(reused.id).not.toBe(link.id)
    expect((await read(reused.id)).destinationUrl).toBe('https://example.com/reused')
  })

  test('a deleted link leaves the list', async () => {
    const link = await api.make({ slug: 'listed-then-deleted', title: 'unique-title-to-delete' })
    expect((await body(await api.list('?search=unique-title-to-delete'))).data).toHaveLength(1)
    expect((await api.del(link.id)).status).toBe(200)
    const page = await body(await api.list('?search=unique-title-to-delete'))
    expect(page.data).toEqual([])
    expect(page.meta.pagination.total).toBe(0)
  })

  test('the full link is removed, password hash included', async () => {
    const link = await fullLink()
    expect((await api.del(link.id)).status).toBe(200)
    expect(await sql(env, 'SELECT id FROM links WHERE id = ?', link.id)).toEqual([])
  })
})
