// REST-hook subscriptions (/zapier/subscriptions) against a real receiver on 127.0.0.1: what subscribing
// accepts and refuses, signed calls through the webhook pipeline, deliveries of a subscription, idempotent
// unsubscribe, removal on 410, retries, permissions and test keys.
import { afterEach, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { SUBSCRIBABLE_EVENTS } from '../../src/modules/automations/model'
import { body, makeKey } from '../helpers'
import { makeTestKey, receiver, verifyBoth, webhooksEnv, type Env } from '../webhooks/_webhooks'

const T0 = Date.UTC(2026, 5, 1, 9, 0, 0)
const cleanups: (() => void)[] = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

/** The clock starts at T0, or now for tests whose receivers check signature timestamps. */
async function world(answer: Parameters<typeof receiver>[0] = () => ({ status: 200 }), env: Record<string, string> = {}, start = T0) {
  const e = await webhooksEnv({ clock: new ManualClock(start), env })
  const rx = receiver(answer)
  cleanups.push(
    () => rx.stop(),
    () => e.cleanup(),
  )
  return { env: e, rx }
}

async function subscribeOk(env: Env, json: Record<string, unknown>, key?: string) {
  const res = await env.api('/zapier/subscriptions', { method: 'POST', json, ...(key ? { key } : {}) })
  const payload = await body(res)
  expect(res.status, JSON.stringify(payload)).toBe(201)
  return payload.data
}

async function subscriptions(env: Env, key?: string) {
  const res = await env.api('/zapier/subscriptions', key ? { key } : {})
  expect(res.status).toBe(200)
  return (await body(res)).data as any[]
}

async function hookDeliveries(env: Env, id: string, query = '') {
  const res = await env.api(`/zapier/subscriptions/${id}/deliveries${query}`)
  expect(res.status).toBe(200)
  return (await body(res)).data as any[]
}

async function refused(env: Env, json: unknown) {
  const res = await env.api('/zapier/subscriptions', { method: 'POST', json })
  const payload = await body(res)
  return { status: res.status, code: payload.error?.code as string, message: payload.error?.message as string }
}

describe('subscribing', () => {
  test('answers 201 with data.id and a whsec_ secret shown once; the list has it without the secret', async () => {
    const { env, rx } = await world()
    const sub = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url() })
    expect(sub.id).toMatch(/^hook_/)
    expect(sub.secret).toMatch(/^whsec_/)
    expect(sub).toMatchObject({ event: 'link.created', hookUrl: rx.url(), mode: 'live', isActive: true, failureCount: 0, disabledReason: null })
    const listed = await subscriptions(env)
    expect(listed.map((s) => s.id)).toEqual([sub.id])
    expect(listed[0].secret).toBeUndefined()
  })

  test('takes the hook URL as hookUrl, targetUrl, target_url or url; several names must agree', async () => {
    const { env, rx } = await world()
    for (const field of ['hookUrl', 'targetUrl', 'target_url', 'url']) {
      const sub = await subscribeOk(env, { event: 'link.updated', [field]: rx.url(`/${field}`) })
      expect(sub.hookUrl).toBe(rx.url(`/${field}`))
    }
    await subscribeOk(env, { event: 'link.updated', hookUrl: rx.url(), targetUrl: rx.url() })
    const differ = await refused(env, { event: 'link.updated', hookUrl: rx.url('/a'), targetUrl: rx.url('/b') })
    expect(differ).toMatchObject({ status: 400, code: 'validation_failed' })
    expect(differ.message).toContain('targetUrl')
    const missing = await refused(env, { event: 'link.updated' })
    expect(missing).toMatchObject({ status: 400, code: 'validation_failed' })
    expect(missing.message).toContain('hookUrl')
    expect((await subscriptions(env)).length).toBe(5)
  })

  test('an unknown event, webhook.test or a pattern is refused with the subscribable names listed', async () => {
    const { env, rx } = await world()
    for (const event of ['link.exploded', 'webhook.test', 'link.*', 42]) {
      const r = await refused(env, { event, hookUrl: rx.url() })
      expect(r).toMatchObject({ status: 400, code: 'validation_failed' })
      expect(r.message).toContain('event')
      for (const name of SUBSCRIBABLE_EVENTS) expect(r.message).toContain(name)
    }
    expect(SUBSCRIBABLE_EVENTS).toContain('conversion.created')
    expect(SUBSCRIBABLE_EVENTS).toContain('domain.verified')
    expect(SUBSCRIBABLE_EVENTS).toContain('bridge_page.deleted')
    expect(SUBSCRIBABLE_EVENTS).not.toContain('webhook.test')
    expect(await subscriptions(env)).toEqual([])
  })

  test('https only, and never a private, link-local or metadata address unless the operator opted in', async () => {
    const { env } = await world(undefined, { LNK_WEBHOOK_ALLOW_HTTP: 'false', LNK_WEBHOOK_ALLOWED_CIDRS: '' })
    for (const url of [
      'http://example.com/hook',
      'https://10.0.0.7/hook',
      'https://169.254.169.254/latest',
      'https://127.0.0.1/hook',
      'ftp://example.com/x',
      'not a url',
    ]) {
      const r = await refused(env, { event: 'link.created', targetUrl: url })
      expect(r, url).toMatchObject({ status: 400, code: 'validation_failed' })
      expect(r.message, url).toContain('targetUrl')
    }
    const extra = await refused(env, { event: 'link.created', hookUrl: 'https://example.com/h', secret: 'mine' })
    expect(extra.status).toBe(400)
    expect(await subscriptions(env)).toEqual([])
  })

  test('permissions: automations:read lists, automations:write subscribes and unsubscribes', async () => {
    const { env, rx } = await world()
    const reader = (await makeKey(env.rt, env.workspaceId, 'automations:read')).key as string
    const writer = (await makeKey(env.rt, env.workspaceId, 'automations:write')).key as string
    const other = (await makeKey(env.rt, env.workspaceId, 'links:read')).key as string
    expect((await env.api('/zapier/subscriptions', { method: 'POST', key: reader, json: { event: 'link.created', hookUrl: rx.url() } })).status).toBe(403)
    const sub = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url() }, writer)
    expect((await subscriptions(env, reader)).map((s) => s.id)).toEqual([sub.id])
    expect((await env.api('/zapier/subscriptions', { key: other })).status).toBe(403)
    expect((await env.api('/zapier/samples?event=link.created', { key: other })).status).toBe(403)
    expect((await env.api(`/zapier/subscriptions/${sub.id}`, { method: 'DELETE', key: reader })).status).toBe(403)
    expect((await env.api(`/zapier/subscriptions/${sub.id}`, { method: 'DELETE', key: writer })).status).toBe(204)
  })
})

describe('calls to the hook', () => {
  test('each event of the type is POSTed as its envelope, signed in both schemes with a webhook-id of its own', async () => {
    const { env, rx } = await world(undefined, {}, Date.now())
    const sub = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url() })
    const first = await env.emit('link.created')
    await env.emit('link.updated')
    const second = await env.emit('link.created')
    await env.run()
    expect(rx.received.length).toBe(2)
    const bodies = (await Promise.all(rx.received.map((r) => verifyBoth(r, sub.secret)))) as any[]
    expect(bodies.map((b) => b.id).sort()).toEqual([first, second].sort())
    for (const b of bodies) expect(b).toMatchObject({ type: 'link.created', mode: 'live', data: { slug: 'launch' } })
    const ids = rx.received.map((r) => r.headers['webhook-id'])
    expect(new Set(ids).size).toBe(2)
    expect(rx.received[0]!.headers['x-service-event']).toBe('link.created')

    const listed = await hookDeliveries(env, sub.id)
    expect(listed.length).toBe(2)
    for (const d of listed) expect(d).toMatchObject({ endpointId: sub.id, event: 'link.created', status: 'success', attempt: 1 })
    expect(listed.map((d) => d.idempotencyKey).sort()).toEqual([...ids].sort())
    const detail = await env.api(`/zapier/subscriptions/${sub.id}/deliveries/${listed[0].id}`)
    expect(detail.status).toBe(200)
    expect((await body(detail)).data.attempts.length).toBe(1)
    expect((await hookDeliveries(env, sub.id, '?status=failed')).length).toBe(0)
  })

  test('domain, bridge page and conversion events are subscribable and delivered', async () => {
    const { env, rx } = await world()
    const types = ['domain.created', 'domain.verified', 'bridge_page.created', 'bridge_page.deleted', 'conversion.created']
    for (const event of types) await subscribeOk(env, { event, hookUrl: rx.url(`/${event}`) })
    for (const event of types) await env.emit(event, { id: event })
    await env.run()
    expect(rx.received.map((r) => r.path).sort()).toEqual(types.map((t) => `/${t}`).sort())
    for (const r of rx.received) expect(JSON.parse(r.body).type).toBe(r.path.slice(1))
  })

  test('subscriptions are not webhook endpoints, and endpoints are not subscriptions', async () => {
    const { env, rx } = await world()
    const sub = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url() })
    const endpoint = await env.createEndpoint({ url: rx.url('/ep'), events: ['link.created'] })
    const listed = await env.api('/webhooks')
    expect((await body(listed)).data.map((e: any) => e.id)).toEqual([endpoint.id])
    expect((await env.api(`/webhooks/${sub.id}`)).status).toBe(404)
    expect((await env.api(`/webhooks/${sub.id}/deliveries`)).status).toBe(404)
    expect((await env.api(`/webhooks/${sub.id}`, { method: 'DELETE' })).status).toBe(404)
    expect((await env.api(`/zapier/subscriptions/${endpoint.id}`, { method: 'DELETE' })).status).toBe(404)
    expect((await env.api(`/zapier/subscriptions/${endpoint.id}/deliveries`)).status).toBe(404)
    expect((await subscriptions(env)).map((s) => s.id)).toEqual([sub.id])
  })

  test('other failures retry on the webhook schedule; a success afterwards resets the failure count', async () => {
    let fail = true
    const { env, rx } = await world(() => ({ status: fail ? 503 : 200 }))
    const sub = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url() })
    await env.emit('link.created')
    await env.run()
    let [d] = await hookDeliveries(env, sub.id)
    expect(d).toMatchObject({ status: 'failed', attempt: 1, responseStatus: 503 })
    const wait = Date.parse(d.nextAttemptAt) - env.clock.now()
    expect(wait).toBeGreaterThanOrEqual(4000)
    expect(wait).toBeLessThanOrEqual(6000)
    expect((await subscriptions(env))[0].failureCount).toBe(1)
    fail = false
    env.clock.set(Date.parse(d.nextAttemptAt))
    await env.run()
    ;[d] = await hookDeliveries(env, sub.id)
    expect(d).toMatchObject({ status: 'success', attempt: 2 })
    expect(rx.received.length).toBe(2)
    expect(rx.received[0]!.headers['webhook-id']).toBe(rx.received[1]!.headers['webhook-id'])
    expect((await subscriptions(env))[0].failureCount).toBe(0)
  })
})

describe('unsubscribing and removal', () => {
  test('DELETE answers 204, again 204, and 404 for an id never issued; nothing is sent afterwards', async () => {
    const { env, rx } = await world()
    const sub = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url() })
    const keep = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url('/keep') })
    const del = await env.api(`/zapier/subscriptions/${sub.id}`, { method: 'DELETE' })
    expect(del.status).toBe(204)
    expect(await del.text()).toBe('')
    expect((await env.api(`/zapier/subscriptions/${sub.id}`, { method: 'DELETE' })).status).toBe(204)
    const unknown = await env.api('/zapier/subscriptions/hook_doesnotexist', { method: 'DELETE' })
    expect(unknown.status).toBe(404)
    expect((await body(unknown)).error.code).toBe('not_found')
    expect((await subscriptions(env)).map((s) => s.id)).toEqual([keep.id])
    await env.emit('link.created')
    await env.run()
    expect(rx.received.map((r) => r.path)).toEqual(['/keep'])
    // The removed subscription's history stays readable.
    expect(await hookDeliveries(env, sub.id)).toEqual([])
  })

  test('unsubscribing drops the calls still waiting: their deliveries become dead at once', async () => {
    const { env, rx } = await world(() => ({ status: 500 }))
    const sub = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url() })
    await env.emit('link.created')
    await env.run()
    expect((await hookDeliveries(env, sub.id))[0].status).toBe('failed')
    expect((await env.api(`/zapier/subscriptions/${sub.id}`, { method: 'DELETE' })).status).toBe(204)
    const [d] = await hookDeliveries(env, sub.id)
    expect(d).toMatchObject({ status: 'dead', nextAttemptAt: null })
    expect(d.errorMessage).toContain('removed')
    env.clock.advance(60_000)
    await env.run()
    expect(rx.received.length).toBe(1)
  })

  test('a target answering 410 removes the subscription at once and its waiting calls become dead', async () => {
    const { env, rx } = await world((req) => ({ status: req.path === '/gone' ? 410 : 500 }))
    const sub = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url('/flaky') })
    const gone = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url('/gone') })
    await env.emit('link.created')
    await env.run()
    // First event: the flaky one failed and waits for a retry; the gone one answered 410 and is removed.
    expect((await subscriptions(env)).map((s) => s.id)).toEqual([sub.id])
    const [g] = await hookDeliveries(env, gone.id)
    expect(g).toMatchObject({ status: 'dead', responseStatus: 410, nextAttemptAt: null })
    expect(g.errorMessage).toContain('410')
    expect((await env.api(`/zapier/subscriptions/${gone.id}`, { method: 'DELETE' })).status).toBe(204)
    await env.emit('link.created')
    await env.run()
    expect(rx.received.filter((r) => r.path === '/gone').length).toBe(1)
  })

  test('a 410 while other calls of the same subscription wait for a retry kills them too', async () => {
    let status = 500
    const { env, rx } = await world(() => ({ status }))
    const sub = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url() })
    await env.emit('link.created')
    await env.run()
    status = 410
    await env.emit('link.created')
    await env.run()
    const all = await hookDeliveries(env, sub.id)
    expect(all.map((d) => d.status)).toEqual(['dead', 'dead'])
    expect(await subscriptions(env)).toEqual([])
    env.clock.advance(3_600_000)
    await env.run()
    expect(rx.received.length).toBe(2)
  })
})

describe('test keys', () => {
  test('a test key subscribes to test events only; live and test lists are apart', async () => {
    const { env, rx } = await world()
    const testKey = await makeTestKey(env)
    const live = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url('/live') })
    const sandboxed = await subscribeOk(env, { event: 'link.created', hookUrl: rx.url('/test') }, testKey)
    expect(sandboxed.mode).toBe('test')
    expect((await subscriptions(env, testKey)).map((s) => s.id)).toEqual([sandboxed.id])
    expect((await subscriptions(env)).map((s) => s.id)).toEqual([live.id])
    expect((await env.api(`/zapier/subscriptions/${live.id}`, { method: 'DELETE', key: testKey })).status).toBe(404)
    await env.emit('link.created', undefined, 'test')
    await env.run()
    expect(rx.received.map((r) => r.path)).toEqual(['/test'])
    expect(JSON.parse(rx.received[0]!.body).mode).toBe('test')
    await env.emit('link.created', undefined, 'live')
    await env.run()
    expect(rx.received.map((r) => r.path)).toEqual(['/test', '/live'])
  })
})

test('an Idempotency-Key makes a retried subscribe answer the same subscription, not a second one', async () => {
  const { env, rx } = await world()
  const send = () =>
    env.api('/zapier/subscriptions', { method: 'POST', json: { event: 'link.created', hookUrl: rx.url() }, headers: { 'Idempotency-Key': 'zap-42' } })
  const first = await body(await send())
  const again = await send()
  expect(again.status).toBe(201)
  expect((await body(again)).data.id).toBe(first.data.id)
  expect((await subscriptions(env)).length).toBe(1)
})
