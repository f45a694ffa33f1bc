// The pipeline end to end with a real receiver on 127.0.0.1: outbox event -> fan-out -> deliver job -> signed
// request, verified on the receiver with the standardwebhooks and stripe packages exactly as a receiver would;
// headers, modes, filters, templates, Slack and Discord bodies, the stored request (redacted) and response,
// the delivery list and its filters, secret rotation.
import { describe, expect, test } from 'bun:test'
import { body } from '../helpers'
import { deliveries, delivery, expectRefusedByBoth, makeTestKey, sharedWorld, stripeVerifies, verifyBoth, type Env, type Receiver } from './_webhooks'

let env: Env
let rx: Receiver
sharedWorld((w) => ({ env, rx } = w))

describe('a delivery', () => {
  test('is signed so both receiver libraries verify it, with the envelope as body and the contract headers', async () => {
    const ep = await env.createEndpoint({
      url: rx.url('/plain'),
      events: ['link.created'],
      customHeaders: [{ name: 'Authorization', value: 'Bearer receiver-token-9876' }],
    })
    const eventId = await env.emit('link.created')
    expect(await env.run()).toBeGreaterThan(0)
    expect(rx.received).toHaveLength(1)
    const req = rx.received[0]!
    expect(req.method).toBe('POST')
    expect(req.path).toBe('/plain')
    const parsed = (await verifyBoth(req, ep.secret)) as any
    expect(parsed).toMatchObject({ id: eventId, type: 'link.created', mode: 'live', data: { slug: 'launch' } })
    expect(parsed.timestamp).toMatch(/Z$/)
    expect(req.headers['content-type']).toBe('application/json')
    expect(req.headers['user-agent']).toStartWith('lnk-webhooks/')
    expect(req.headers['x-service-event']).toBe('link.created')
    expect(req.headers.authorization).toBe('Bearer receiver-token-9876')
    expect(req.headers['webhook-id']).toMatch(/^msg_/)
    expect(Number(req.headers['webhook-timestamp'])).toBe(Math.floor(env.clock.now() / 1000))
    expect(req.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    // Another secret verifies nothing.
    await expectRefusedByBoth(req, 'whsec_' + Buffer.alloc(32, 7).toString('base64'))

    const [d] = await deliveries(env, ep.id)
    expect(d).toMatchObject({
      endpointId: ep.id,
      event: 'link.created',
      eventId,
      status: 'success',
      responseStatus: 200,
      attempt: 1,
      maxAttempts: 10,
      batchSize: 1,
      nextAttemptAt: null,
      errorMessage: null,
      replayOfId: null,
      replayable: true,
    })
    expect(d.idempotencyKey).toBe(req.headers['webhook-id'])
    expect(d.deliveredAt).toBe(new Date(env.clock.now()).toISOString())
    expect(Number.isInteger(d.duration)).toBe(true)

    // The exact request is stored; credentials and signatures only as a hint.
    const detail = await delivery(env, ep.id, d.id)
    expect(detail.request.body).toBe(req.body)
    expect(detail.request.url).toBe(rx.url('/plain'))
    expect(detail.request.method).toBe('POST')
    expect(detail.request.headers.Authorization).toBe('…9876')
    expect(detail.request.headers['webhook-signature']).toMatch(/^….{4}$/)
    expect(detail.request.headers['x-service-signature']).toMatch(/^….{4}$/)
    expect(detail.request.headers['webhook-id']).toBe(req.headers['webhook-id'])
    expect(JSON.stringify(detail)).not.toContain('receiver-token')
    expect(JSON.stringify(detail)).not.toContain(req.headers['webhook-signature']!.slice(3, 30))
    expect(detail.response).toMatchObject({ status: 200, body: 'ok', bodyTruncated: false })
    expect(detail.payload).toEqual(parsed)
    expect(detail.attempts).toHaveLength(1)
    expect(detail.attempts[0]).toMatchObject({ attempt: 1, responseStatus: 200, errorMessage: null, address: '127.0.0.1' })
  })

  test('goes only to active endpoints of the same mode whose events match', async () => {
    const testKey = await makeTestKey(env)
    const live = await env.createEndpoint({ url: rx.url('/live'), events: ['link.*'] })
    const sandbox = await env.createEndpoint({ url: rx.url('/test'), events: ['*'] }, testKey)
    const paused = await env.createEndpoint({ url: rx.url('/paused'), events: ['*'], isActive: false })
    const other = await env.createEndpoint({ url: rx.url('/other'), events: ['conversion.created'] })
    await env.emit('link.deleted', { id: 'x', slug: 's', domain: 'd', shortUrl: 'u', destinationUrl: 'https://e.example' }, 'test')
    await env.emit('link.updated', { id: 'y', changes: ['title'] }, 'live')
    await env.run()
    const paths = rx.received.map((r) => `${r.path} ${r.headers['x-service-event']}`).sort()
    expect(paths).toEqual(expect.arrayContaining(['/live link.updated', '/test link.deleted']))
    expect(paths.some((p) => p.startsWith('/paused') || p.startsWith('/other'))).toBe(false)
    const sandboxRecv = rx.received.find((r) => r.path === '/test')!
    expect(((await verifyBoth(sandboxRecv, sandbox.secret)) as any).mode).toBe('test')
    expect((await deliveries(env, sandbox.id))[0].maxAttempts).toBe(4)
    expect(await deliveries(env, paused.id)).toEqual([])
    expect(await deliveries(env, other.id)).toEqual([])
    await env.api(`/webhooks/${live.id}`, { method: 'DELETE' })
  })

  test('an event published before an endpoint existed is not delivered to it', async () => {
    await env.emit('link.created')
    await env.run()
    const ep = await env.createEndpoint({ url: rx.url('/late'), events: ['*'] })
    await env.run()
    expect(await deliveries(env, ep.id)).toEqual([])
  })

  test('redirects are failures and are not followed', async () => {
    rx.answer = (r) => (r.path === '/moved' ? { status: 302, headers: { location: rx.url('/target') } } : { status: 200 })
    const ep = await env.createEndpoint({ url: rx.url('/moved'), events: ['link.created'] })
    await env.emit('link.created')
    await env.run()
    expect(rx.received.filter((r) => r.path === '/moved')).toHaveLength(1)
    expect(rx.received.filter((r) => r.path === '/target')).toHaveLength(0)
    const [d] = await deliveries(env, ep.id)
    expect(d.status).toBe('failed')
    expect(d.responseStatus).toBe(302)
    expect(d.errorMessage).toContain('302')
    await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })
  })

  test('the response body is stored up to 16 KiB', async () => {
    rx.answer = () => ({ status: 500, body: 'x'.repeat(40_000), headers: { 'x-trace': 'abc' } })
    const ep = await env.createEndpoint({ url: rx.url('/big'), events: ['link.created'] })
    await env.emit('link.created')
    await env.run()
    const [d] = await deliveries(env, ep.id)
    const detail = await delivery(env, ep.id, d.id)
    expect(detail.response.status).toBe(500)
    expect(detail.response.body.length).toBe(16 * 1024)
    expect(detail.response.bodyTruncated).toBe(true)
    expect(detail.response.headers['x-trace']).toBe('abc')
    await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })
  })
})

describe('filters and templates, end to end', () => {
  test('rules over the envelope decide which events go; match any and all', async () => {
    const all = await env.createEndpoint({
      url: rx.url('/all'),
      events: ['link.*'],
      filters: {
        match: 'all',
        events: null,
        rules: [
          { field: 'data.domain', op: 'eq', value: 'lnk.example' },
          { field: 'data.totalClicks', op: 'gte', value: 10 },
        ],
      },
    })
    const any = await env.createEndpoint({
      url: rx.url('/any'),
      events: ['*'],
      filters: {
        match: 'any',
        events: ['link.created'],
        rules: [
          { field: 'data.tags', op: 'contains', value: 'vip' },
          { field: 'data.title', op: 'not_exists' },
        ],
      },
    })
    await env.emit('link.created', { domain: 'lnk.example', totalClicks: 12, tags: [], title: 'T' }) // all yes, any no
    await env.emit('link.created', { domain: 'other.example', totalClicks: 50, tags: ['vip'], title: 'T' }) // all no, any yes
    await env.emit('link.created', { domain: 'lnk.example', totalClicks: 3 }) // all no, any yes (no title)
    await env.emit('link.updated', { domain: 'lnk.example', totalClicks: 99, tags: ['vip'] }) // all yes, any no (filters.events)
    await env.run()
    const byPath = (p: string) => rx.received.filter((r) => r.path === p).map((r) => JSON.parse(r.body).data)
    expect(byPath('/all').sort((a, b) => a.totalClicks - b.totalClicks)).toEqual([
      { domain: 'lnk.example', totalClicks: 12, tags: [], title: 'T' },
      { domain: 'lnk.example', totalClicks: 99, tags: ['vip'] },
    ])
    expect(byPath('/any').sort((a, b) => a.totalClicks - b.totalClicks)).toEqual([
      { domain: 'lnk.example', totalClicks: 3 },
      { domain: 'other.example', totalClicks: 50, tags: ['vip'], title: 'T' },
    ])
    for (const id of [all.id, any.id]) await env.api(`/webhooks/${id}`, { method: 'DELETE' })
  })

  test('a template shapes the body; a lone placeholder keeps its type; the signature covers what was sent', async () => {
    const ep = await env.createEndpoint({
      url: rx.url('/tpl'),
      events: ['link.created'],
      transform: {
        kind: 'template',
        template: {
          text: 'New link {{ data.shortUrl }} ({{data.totalClicks}} clicks)',
          clicks: '{{data.totalClicks}}',
          tags: '{{ data.tags }}',
          missing: '{{data.nope}}',
          fixed: true,
        },
      },
    })
    await env.emit('link.created')
    await env.run()
    const req = rx.received.find((r) => r.path === '/tpl')!
    expect(await verifyBoth(req, ep.secret)).toEqual({
      text: 'New link https://lnk.example/launch (3 clicks)',
      clicks: 3,
      tags: ['spring'],
      missing: null,
      fixed: true,
    })
    const [d] = await deliveries(env, ep.id)
    // The stored payload is the envelope; the request holds the template output.
    const detail = await delivery(env, ep.id, d.id)
    expect(detail.payload.type).toBe('link.created')
    expect(JSON.parse(detail.request.body).clicks).toBe(3)
    await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })
  })

  test('Slack and Discord endpoints get a message of that service, signed like any delivery', async () => {
    const slack = await env.createEndpoint({ url: rx.url('/slack'), events: ['link.created'], format: 'slack' })
    const discord = await env.createEndpoint({ url: rx.url('/discord'), events: ['link.created'], format: 'discord' })
    await env.emit('link.created', { slug: 'launch', shortUrl: 'https://lnk.example/launch', title: '@everyone look' })
    await env.run()
    const s = (await verifyBoth(rx.received.find((r) => r.path === '/slack')!, slack.secret)) as any
    expect(typeof s.text).toBe('string')
    expect(s.text).toContain('https://lnk.example/launch')
    expect(Array.isArray(s.blocks)).toBe(true)
    const d = (await verifyBoth(rx.received.find((r) => r.path === '/discord')!, discord.secret)) as any
    expect(d.allowed_mentions).toEqual({ parse: [] })
    expect(Array.isArray(d.embeds)).toBe(true)
    expect(d.content.length).toBeLessThanOrEqual(2000)
    expect(JSON.stringify(d)).not.toContain('@everyone')
    for (const id of [slack.id, discord.id]) await env.api(`/webhooks/${id}`, { method: 'DELETE' })
  })
})

describe('secret rotation as receivers see it', () => {
  test('during the grace both secrets verify; after grace false only the new one', async () => {
    const ep = await env.createEndpoint({ url: rx.url('/rot'), events: ['link.created'] })
    const rotated = (await body(await env.api(`/webhooks/${ep.id}/rotate-secret`, { method: 'POST', json: {} }))).data
    await env.emit('link.created')
    await env.run()
    let req = rx.received.filter((r) => r.path === '/rot').at(-1)!
    await verifyBoth(req, ep.secret)
    await verifyBoth(req, rotated.secret)
    expect(req.headers['webhook-signature']!.split(' ')).toHaveLength(2)
    expect(req.headers['x-service-signature']!.split(',')).toHaveLength(3)

    const hard = (await body(await env.api(`/webhooks/${ep.id}/rotate-secret`, { method: 'POST', json: { grace: false } }))).data
    await env.emit('link.created')
    await env.run()
    req = rx.received.filter((r) => r.path === '/rot').at(-1)!
    await verifyBoth(req, hard.secret)
    await expectRefusedByBoth(req, rotated.secret)
    await expectRefusedByBoth(req, ep.secret)
    expect(req.headers['webhook-signature']!.split(' ')).toHaveLength(1)
    await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })
  })

  test('the old secret stops signing when its 24 h grace ends', async () => {
    const ep = await env.createEndpoint({ url: rx.url('/rot2'), events: ['link.created'] })
    const rotated = (await body(await env.api(`/webhooks/${ep.id}/rotate-secret`, { method: 'POST' }))).data
    env.clock.advance(24 * 3_600_000 + 1)
    await env.emit('link.created')
    await env.run()
    const req = rx.received.filter((r) => r.path === '/rot2').at(-1)!
    // Verified here by the Stripe package with a tolerance matching the moved clock (standardwebhooks
    // checks against the real time only); the count of signatures shows the old secret is gone.
    expect(req.headers['webhook-signature']!.split(' ')).toHaveLength(1)
    expect(await stripeVerifies(req, rotated.secret)).toBe(true)
    expect(await stripeVerifies(req, ep.secret)).toBe(false)
    env.clock.set(Date.now())
    await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })
  })
})

describe('listing deliveries', () => {
  test('status, event, from/to, since, q and limit; newest first', async () => {
    rx.answer = (r) => (JSON.parse(r.body).data?.slug === 'bad' ? { status: 500 } : { status: 200 })
    const ep = await env.createEndpoint({ url: rx.url('/list'), events: ['link.created', 'link.deleted'] })
    const t0 = env.clock.now()
    await env.emit('link.created', { slug: 'one' })
    await env.run()
    env.clock.advance(1000)
    await env.emit('link.deleted', { slug: 'two' })
    await env.run()
    env.clock.advance(1000)
    const badId = await env.emit('link.created', { slug: 'bad' })
    await env.run()
    const all = await deliveries(env, ep.id)
    expect(all.map((d) => d.event)).toEqual(['link.created', 'link.deleted', 'link.created'])
    expect(all[0].eventId).toBe(badId)
    expect((await deliveries(env, ep.id, '?status=failed')).map((d) => d.eventId)).toEqual([badId])
    expect(await deliveries(env, ep.id, '?status=dead')).toEqual([])
    expect(await deliveries(env, ep.id, '?status=pending')).toEqual([])
    expect((await deliveries(env, ep.id, '?status=success')).length).toBe(2)
    expect((await deliveries(env, ep.id, '?status=all')).length).toBe(3)
    expect((await deliveries(env, ep.id, '?event=link.deleted')).length).toBe(1)
    const iso = (ms: number) => new Date(ms).toISOString()
    expect((await deliveries(env, ep.id, `?since=${iso(t0 + 1000)}`)).map((d) => d.event)).toEqual(['link.created'])
    expect((await deliveries(env, ep.id, `?from=${iso(t0 + 1000)}`)).length).toBe(2)
    expect((await deliveries(env, ep.id, `?to=${iso(t0 + 1000)}`)).length).toBe(1)
    expect((await deliveries(env, ep.id, '?q=two')).map((d) => d.event)).toEqual(['link.deleted'])
    expect((await deliveries(env, ep.id, `?q=${badId}`)).length).toBe(1)
    expect((await deliveries(env, ep.id, '?q=DELETED')).length).toBe(1)
    expect((await deliveries(env, ep.id, '?limit=1')).length).toBe(1)
    expect((await env.api(`/webhooks/${ep.id}/deliveries?limit=201`)).status).toBe(400)
    expect((await env.api(`/webhooks/${ep.id}/deliveries?status=retrying`)).status).toBe(400)
    expect((await env.api(`/webhooks/${ep.id}/deliveries?since=yesterday`)).status).toBe(400)
    await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })
  })
})
