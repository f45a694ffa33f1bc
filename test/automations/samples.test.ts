// GET /zapier/samples end to end: real events delivered to a real receiver on 127.0.0.1 through the webhook
// pipeline come back as samples (the very envelopes the receiver got), newest first, at most 3, one per
// event; the outbox tops them up; modes and workspaces never mix; a synthetic envelope only when nothing
// real exists; the catalogue; flat=1; the query's refusals; the permission. Over HTTP (app.handle, checked
// against the OpenAPI document) and, for the service's own contract, through direct calls.
import { afterEach, describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { EVENT_CATALOGUE } from '../../src/modules/webhooks/model'
import { engineOf } from '../../src/db/store'
import { pruneDispatched } from '../../src/events/outbox'
import type { Caller } from '../../src/modules/identity/caller'
import { listSamples } from '../../src/modules/automations/samples'
import { body, bootstrapAccount, makeKey } from '../helpers'
import { makeTestKey, receiver, webhooksEnv, type Env, type Receiver } from '../webhooks/_webhooks'

let env: Env
let rx: Receiver
const cleanups: (() => void | Promise<void>)[] = []

afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

async function world() {
  env = await webhooksEnv()
  rx = receiver()
  cleanups.push(
    () => env.cleanup(),
    () => rx.stop(),
  )
}

async function samples(query = '', key = env.key): Promise<any[]> {
  const res = await env.api(`/zapier/samples${query}`, { key })
  expect(res.status).toBe(200)
  return (await body(res)).data
}

async function createLink(slug: string, key = env.key) {
  env.clock.advance(1000)
  const res = await env.api('/links', { method: 'POST', key, json: { destinationUrl: `https://example.com/${slug}`, slug } })
  expect(res.status).toBe(201)
  return (await body(res)).data
}

/** Runs the worker until the receiver holds `n` requests (bounded), and answers the parsed bodies. */
async function delivered(n: number): Promise<any[]> {
  for (let i = 0; i < 20 && rx.received.length < n; i++) await env.run()
  expect(rx.received).toHaveLength(n)
  return rx.received.map((r) => JSON.parse(r.body))
}

/** The caller a request with this key would be, for direct calls of the service. */
async function callerOf(keyId: string): Promise<Caller> {
  const identity = env.rt.modules.identity.ctx.identity
  const key = (await identity.findKey(keyId))!
  const user = (await identity.findUser(key.userId))!
  const workspace = (await identity.findWorkspace(key.workspaceId))!
  return { key, user, workspace, role: 'owner', mode: key.mode, ip: null }
}

async function bootstrapCaller() {
  const [key] = await env.rt.modules.identity.ctx.identity.listKeys(env.workspaceId, 'live')
  return callerOf(key!.id)
}

/** Drops every dispatched event from the outbox, as the three-day pruning does: then only deliveries remember them. */
async function pruneOutbox() {
  const before = env.clock.now() + 1
  await pruneDispatched(engineOf(env.rt.store), before)
}

/** The events' ids, oldest event first: deliveries run side by side, so a receiver may get them in another order. */
const uniqueIds = (envelopes: any[]) => [...new Set([...envelopes].sort((a, b) => a.timestamp.localeCompare(b.timestamp)).map((e) => e.id))]

describe('real events', () => {
  test('the delivered envelopes, newest first, at most 3, one per event however many endpoints got it', async () => {
    await world()
    await env.createEndpoint({ url: rx.url('/one'), events: ['link.created'] })
    await env.createEndpoint({ url: rx.url('/two'), events: ['link.*'] })
    for (const slug of ['first', 'second', 'third', 'fourth']) await createLink(slug)
    const got = await delivered(8)
    const ids = uniqueIds(got)
    expect(ids).toHaveLength(4)
    await pruneOutbox()

    const data = await samples('?event=link.created')
    expect(data.map((s) => s.id)).toEqual([ids[3], ids[2], ids[1]])
    // Exactly what the receiver was sent: full envelopes with their ids, not flagged as samples.
    for (const s of data) expect(s).toEqual(got.find((g) => g.id === s.id))
    expect(data.map((s) => s.data.slug)).toEqual(['fourth', 'third', 'second'])
    expect(data.every((s) => !('sample' in s))).toBe(true)

    // The service gives the same answer to a direct call.
    const direct = await listSamples(env.rt.modules.automations.ctx.samples, await bootstrapCaller(), { event: 'link.created' })
    expect(direct).toEqual(data)

    // Another type the endpoints never got has no real sample yet.
    const updated = await samples('?event=link.updated')
    expect(updated).toHaveLength(1)
    expect(updated[0]).toMatchObject({ id: 'evt_sample_link_updated', sample: true, mode: 'live' })
  })

  test('a replay of an old delivery does not make its event look recent', async () => {
    await world()
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    for (const slug of ['a1', 'a2', 'a3', 'a4']) await createLink(slug)
    const ids = uniqueIds(await delivered(4))
    const list = (await body(await env.api(`/webhooks/${ep.id}/deliveries?event=link.created`))).data as any[]
    const oldest = list.find((d) => d.eventId === ids[0])
    env.clock.advance(1000)
    expect((await env.api(`/webhooks/${ep.id}/deliveries/${oldest.id}/replay`, { method: 'POST' })).status).toBe(201)
    await delivered(5)
    await pruneOutbox()
    expect(JSON.parse(rx.received[4]!.body).id).toBe(ids[0])
    expect((await samples('?event=link.created')).map((s) => s.id)).toEqual([ids[3], ids[2], ids[1]])
  })

  test('events no endpoint took come from the outbox, merged with delivered ones, newest first, no repeats', async () => {
    await world()
    env.clock.advance(1000)
    const early = await env.emit('link.created', { id: 'l-early', slug: 'early' })
    await env.run() // dispatched to nobody: only the outbox holds it
    await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await createLink('sent')
    const [sent] = await delivered(1)
    env.clock.advance(1000)
    const pending = await env.emit('link.created', { id: 'l-pending', slug: 'pending' }) // not dispatched yet

    const data = await samples('?event=link.created')
    expect(data.map((s) => s.id)).toEqual([pending, sent.id, early])
    expect(data[1]).toEqual(sent)
    expect(data[0]).toMatchObject({ type: 'link.created', mode: 'live', data: { slug: 'pending' } })
    expect(data[2].timestamp < data[1].timestamp).toBe(true)
  })

  test('calls made to REST-hook subscriptions are real deliveries too', async () => {
    await world()
    const res = await env.api('/zapier/subscriptions', { method: 'POST', json: { event: 'link.created', hookUrl: rx.url('/zap') } })
    expect(res.status).toBe(201)
    await createLink('zapped')
    const [sent] = await delivered(1)
    expect(rx.received[0]!.path).toBe('/zap')
    await pruneOutbox()
    expect(await samples('?event=link.created')).toEqual([sent])
  })

  test('a test ping is a real webhook.test event: it is the sample of webhook.test', async () => {
    await world()
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    expect((await env.api(`/webhooks/${ep.id}/test`, { method: 'POST' })).status).toBe(200)
    const [ping] = await delivered(1)
    expect(ping.type).toBe('webhook.test')
    expect(await samples('?event=webhook.test')).toEqual([ping])
  })

  test('test keys see test events only, live keys live events only', async () => {
    await world()
    const testKey = await makeTestKey(env)
    await env.createEndpoint({ url: rx.url('/live'), events: ['link.created'] })
    await env.createEndpoint({ url: rx.url('/test'), events: ['link.created'] }, testKey)
    await createLink('live-one')
    await createLink('test-one', testKey)
    const got = await delivered(2)
    const live = got.find((g) => g.mode === 'live')
    const sandbox = got.find((g) => g.mode === 'test')

    expect(await samples('?event=link.created')).toEqual([live])
    expect(await samples('?event=link.created', testKey)).toEqual([sandbox])
    // No test event of this type yet: the synthetic one, in the key's mode.
    const none = await samples('?event=link.deleted', testKey)
    expect(none).toHaveLength(1)
    expect(none[0]).toMatchObject({ id: 'evt_sample_link_deleted', mode: 'test', sample: true })
  })

  test("another workspace's events never appear, delivered or in the outbox", async () => {
    await world()
    await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await createLink('mine')
    const [mine] = await delivered(1)
    env.clock.advance(1000)
    await env.emit('link.created', { id: 'l-outbox', slug: 'outbox-only' })

    const other = await bootstrapAccount(env.rt)
    const theirs = await samples('?event=link.created', other.apiKey.key)
    expect(theirs).toHaveLength(1)
    expect(theirs[0]).toMatchObject({ id: 'evt_sample_link_created', sample: true })

    await createLink('theirs', other.apiKey.key)
    await env.run()
    const ours = await samples('?event=link.created')
    expect(ours.map((s) => s.data.slug)).toEqual(['outbox-only', 'mine'])
    expect(ours[1]).toEqual(mine)
    expect((await samples('?event=link.created', other.apiKey.key)).map((s) => s.data.slug)).toEqual(['theirs'])
  })
})

describe('synthetic samples and the catalogue', () => {
  test('without real events: exactly one synthetic envelope that validates, the same on every call', async () => {
    await world()
    for (const def of EVENT_CATALOGUE) {
      const data = await samples(`?event=${def.type}`)
      expect(data).toHaveLength(1)
      expect(data[0]).toMatchObject({
        id: `evt_sample_${def.type.replace('.', '_')}`,
        type: def.type,
        mode: 'live',
        sample: true,
        timestamp: new Date(env.clock.now()).toISOString(),
      })
      expect(Value.Check(def.data, data[0].data)).toBe(true)
      expect(await samples(`?event=${def.type}`)).toEqual(data)
    }
  })

  test("without event: the whole catalogue as {event, description, sample}, in the key's mode", async () => {
    await world()
    const data = await samples()
    expect(data.map((d) => d.event)).toEqual(EVENT_CATALOGUE.map((e) => e.type))
    for (const [i, def] of EVENT_CATALOGUE.entries()) {
      expect(Object.keys(data[i]!)).toEqual(['event', 'description', 'sample'])
      expect(data[i].description).toBe(def.description)
      expect(data[i].sample).toMatchObject({ type: def.type, sample: true, mode: 'live' })
      expect(Value.Check(def.data, data[i].sample.data)).toBe(true)
    }
    const testKey = await makeTestKey(env)
    expect((await samples('', testKey)).every((d) => d.sample.mode === 'test')).toBe(true)
  })
})

describe('flat=1', () => {
  test('flattens real envelopes with __, keeping arrays', async () => {
    await world()
    await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await createLink('flat-one')
    const [sent] = await delivered(1)
    const [flat] = await samples('?event=link.created&flat=1')
    expect(flat).toMatchObject({ id: sent.id, type: 'link.created', mode: 'live', data__slug: 'flat-one', data__id: sent.data.id, data__tags: sent.data.tags })
    expect(Object.keys(flat).filter((k) => k.startsWith('data__'))).toHaveLength(Object.keys(sent.data).length)
    expect('data' in flat).toBe(false)
    expect(await samples('?event=link.created&flat=0')).toEqual([sent])
  })

  test('flattens each synthetic sample, in the catalogue too', async () => {
    await world()
    const [clicked] = await samples('?event=link.clicked&flat=1')
    expect(clicked).toMatchObject({ id: 'evt_sample_link_clicked', sample: true })
    expect(clicked.data__click__id).toMatch(/^clk_/)
    expect(clicked.data__link__shortUrl).toMatch(/^https:\/\//)
    const catalogue = await samples('?flat=1')
    const domain = catalogue.find((d) => d.event === 'domain.created').sample
    expect(Array.isArray(domain.data__records)).toBe(true)
    expect(domain.data__records[0]).toHaveProperty('type')
    expect(domain.data__httpCheck__url).toMatch(/^http/)
  })
})

describe('refusals', () => {
  test('an unknown event: 400 validation_failed naming event and listing the valid names', async () => {
    await world()
    const res = await env.api('/zapier/samples?event=link.exploded')
    expect(res.status).toBe(400)
    const err = (await body(res)).error
    expect(err.code).toBe('validation_failed')
    expect(err.details.location).toBe('query')
    expect(err.details.issues.map((i: any) => i.path)).toEqual(['event'])
    for (const def of EVENT_CATALOGUE) expect(err.details.issues[0].message).toContain(def.type)
    expect((await env.api('/zapier/samples?event=')).status).toBe(400)
  })

  test('flat other than 1 or 0: 400 naming flat; both problems at once', async () => {
    await world()
    const res = await env.api('/zapier/samples?event=link.created&flat=yes')
    expect(res.status).toBe(400)
    expect((await body(res)).error.details.issues.map((i: any) => i.path)).toEqual(['flat'])
    const both = await env.api('/zapier/samples?event=nope&flat=2')
    expect(both.status).toBe(400)
    expect((await body(both)).error.details.issues.map((i: any) => i.path)).toEqual(['event', 'flat'])
  })

  test('needs automations:read: a key without it gets 403, one with only it gets the samples', async () => {
    await world()
    const linksOnly = (await makeKey(env.rt, env.workspaceId, 'links:read')).key
    const res = await env.api('/zapier/samples?event=link.created', { key: linksOnly })
    expect(res.status).toBe(403)
    expect((await body(res)).error.code).toBe('forbidden')
    const reader = (await makeKey(env.rt, env.workspaceId, 'automations:read')).key
    expect(await samples('?event=link.created', reader)).toHaveLength(1)
    expect((await env.request('/v1/zapier/samples')).status).toBe(401)
  })
})
