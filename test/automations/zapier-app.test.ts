// The Zapier app of integrations/zapier, run by zapier-platform-core's own tester (createAppTester: the code
// Zapier runs for each step, with the app's middleware and core's checks, minus Zapier's cloud) against a real
// lnk listening on 127.0.0.1: connect, subscribe, an event made through the API reaching the hook signed,
// perform on what arrived, performList, unsubscribe, and a hook answering 410. Nothing leaves the machine:
// core sends its logs only when given a logging token, and the app turns off core's patching of node:http.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { SUBSCRIBABLE_EVENTS as SUBSCRIBABLE } from '../../src/modules/automations/model'
import { bootstrapAccount, makeKey } from '../helpers'
import { startLnk, type Lnk } from '../redirect/_server'
import { LOOPBACK_ENV, receiver, type Receiver, type Received } from '../webhooks/_webhooks'
import { app, appPackage, type Connection, coreVersion, hookBundle, run, schemaErrors, triggerFor } from './_zapier'

let lnk: Lnk
let rx: Receiver
let connection: Connection

beforeAll(async () => {
  lnk = await startLnk(LOOPBACK_ENV)
  rx = receiver((req) => ({ status: req.path === '/gone' ? 410 : 200 }))
  const account = await bootstrapAccount(lnk.env.rt)
  connection = { baseUrl: lnk.origin, apiKey: account.apiKey.key }
})

afterAll(async () => {
  rx?.stop()
  await lnk?.stop()
})

/** Calls lnk's API directly (what the test checks with, not what the app does). */
async function api(path: string, init: RequestInit & { json?: unknown; key?: string } = {}) {
  const headers = new Headers(init.headers)
  headers.set('authorization', `Bearer ${init.key ?? connection.apiKey}`)
  if (init.json !== undefined) headers.set('content-type', 'application/json')
  return fetch(`${lnk.origin}/v1${path}`, { ...init, headers, body: init.json === undefined ? init.body : JSON.stringify(init.json) })
}

async function createLink(slug: string, key?: string) {
  const res = await api('/links', { method: 'POST', key, json: { destinationUrl: `https://example.com/${slug}`, slug } })
  expect(res.status).toBe(201)
  return ((await res.json()) as any).data as { id: string; slug: string }
}

async function subscriptions(key?: string) {
  const res = await api('/zapier/subscriptions', { key })
  expect(res.status).toBe(200)
  return ((await res.json()) as any).data as { id: string; event: string; hookUrl: string }[]
}

/** Waits (bounded) until the receiver holds `count` requests to `path`, and answers them. */
async function arrivals(path: string, count = 1, timeoutMs = 10_000): Promise<Received[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const got = rx.received.filter((r) => r.path === path)
    if (got.length >= count) return got
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} request(s) to ${path}; got ${got.length}`)
    await Bun.sleep(10)
  }
}

/** A subscription's deliveries, once `ready` holds for them (bounded wait). */
async function deliveriesWhen(id: string, ready: (list: any[]) => boolean, timeoutMs = 10_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const res = await api(`/zapier/subscriptions/${id}/deliveries`)
    expect(res.status).toBe(200)
    const list = ((await res.json()) as any).data as any[]
    if (ready(list)) return list
    if (Date.now() > deadline) throw new Error(`timed out waiting for the deliveries of ${id}: ${JSON.stringify(list.map((d) => d.status))}`)
    await Bun.sleep(10)
  }
}

/** Every key path into nested plain objects (arrays are not entered): data, data.link, data.link.id, … */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return []
  return Object.entries(value).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k
    return [path, ...keyPaths(v, path)]
  })
}

describe('the app definition', () => {
  test("passes core's schema validation", async () => {
    expect(await schemaErrors()).toEqual([])
  })

  test('has one instant trigger per subscribable catalogue event, and the core version it depends on', () => {
    const events = Object.values(app.triggers).map((t) => t.operation.sample.type)
    expect(events.sort()).toEqual([...SUBSCRIBABLE].sort())
    for (const [key, trigger] of Object.entries(app.triggers)) {
      expect(key).toBe(trigger.key)
      expect(trigger.operation.type).toBe('hook')
      for (const fn of ['performSubscribe', 'performUnsubscribe', 'perform', 'performList'] as const) expect(typeof trigger.operation[fn]).toBe('function')
    }
    expect(app.platformVersion).toBe(coreVersion)
    expect(appPackage.dependencies['zapier-platform-core']).toBe(coreVersion)
    expect(app.authentication.type).toBe('custom')
    expect(app.authentication.fields.map((f) => f.key).sort()).toEqual(['apiKey', 'baseUrl'])
  })

  test("each static sample is an envelope whose fields the server's own sample of that event has", async () => {
    // A new workspace has no events yet, so performList answers the server's synthetic sample.
    const fresh = await bootstrapAccount(lnk.env.rt)
    const freshConnection = { baseUrl: lnk.origin, apiKey: fresh.apiKey.key }
    for (const event of SUBSCRIBABLE) {
      const trigger = triggerFor(event)
      const listed = await run<any[]>(trigger.operation.performList, { authData: freshConnection })
      expect(listed).toHaveLength(1)
      expect(listed[0]).toMatchObject({ type: event, sample: true, mode: 'live' })
      expect(typeof listed[0].id).toBe('string')
      const serverPaths = new Set(keyPaths(listed[0]))
      const missing = keyPaths(trigger.operation.sample).filter((p) => !serverPaths.has(p))
      expect({ event, missing }).toEqual({ event, missing: [] })
    }
  })
})

describe('authentication', () => {
  test("the test step answers the key's workspace, and the label names it with the mode", async () => {
    const me = await run(app.authentication.test, { authData: connection })
    expect(me.apiKey.mode).toBe('live')
    const label = await run(app.authentication.connectionLabel, { authData: connection, inputData: me })
    expect(label).toBe(`${me.workspace.name} (live)`)
  })

  test('a server URL given with /v1 or a trailing slash reaches the same API', async () => {
    for (const baseUrl of [`${lnk.origin}/`, `${lnk.origin}/v1`, `${lnk.origin}/v1/`]) {
      const me = await run(app.authentication.test, { authData: { ...connection, baseUrl } })
      expect(me.apiKey.mode).toBe('live')
    }
  })

  test("a wrong key fails the test with lnk's code", async () => {
    const failed = run(app.authentication.test, { authData: { ...connection, apiKey: 'lnk_live_not_a_key' } })
    await expect(failed).rejects.toThrow(/\(unauthorized\)/)
  })
})

describe('a Zap on link.created', () => {
  const trigger = triggerFor('link.created')

  test('subscribe, receive a signed event, perform, list, unsubscribe', async () => {
    const hook = rx.url('/zap')
    const sub = await run(trigger.operation.performSubscribe, { authData: connection, targetUrl: hook })
    expect(sub).toMatchObject({ event: 'link.created', hookUrl: hook, mode: 'live', isActive: true })
    expect(sub.id).toMatch(/^hook_/)
    expect(sub.secret).toMatch(/^whsec_/)
    const listed = await subscriptions()
    expect(listed.map((s) => s.id)).toContain(sub.id)
    expect(listed.find((s) => s.id === sub.id)).not.toHaveProperty('secret')

    const link = await createLink('zap-one')
    const [call] = await arrivals('/zap')
    expect(call!.method).toBe('POST')
    expect(call!.headers['x-service-event']).toBe('link.created')
    // Signed with the secret the subscribe answered, as every webhook delivery is.
    const envelope = new Webhook(sub.secret).verify(call!.body, call!.headers) as any
    expect(envelope).toMatchObject({ type: 'link.created', mode: 'live', data: { id: link.id, slug: 'zap-one' } })
    expect(envelope.id).toMatch(/^evt_/)
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(call!.body, call!.headers)).toThrow()

    // perform hands Zapier the envelope; its id is what Zapier dedupes on.
    const performed = await run<any[]>(trigger.operation.perform, hookBundle(connection, call!, sub))
    expect(performed).toEqual([envelope])

    // The editor's "test trigger" now shows the real event, not the synthetic one.
    const samples = await run<any[]>(trigger.operation.performList, { authData: connection })
    expect(samples[0]).toEqual(envelope)
    expect(samples[0]).not.toHaveProperty('sample')

    // The attempt is recorded just after the receiver answered.
    const deliveries = await deliveriesWhen(sub.id, (list) => list.every((d) => d.status !== 'pending'))
    expect(deliveries.map((d) => [d.eventId, d.status])).toEqual([[envelope.id, 'success']])

    const gone = await run(trigger.operation.performUnsubscribe, { authData: connection, subscribeData: sub })
    expect(gone).toEqual({ id: sub.id, unsubscribed: true })
    expect((await subscriptions()).map((s) => s.id)).not.toContain(sub.id)
    // Zapier may call unsubscribe again (a retried step): still a success.
    expect(await run(trigger.operation.performUnsubscribe, { authData: connection, subscribeData: sub })).toEqual({ id: sub.id, unsubscribed: true })

    // The next link reaches a new subscription, and nothing more is sent to the old hook.
    const probe = await run(trigger.operation.performSubscribe, { authData: connection, targetUrl: rx.url('/probe') })
    await createLink('zap-two')
    const [second] = await arrivals('/probe')
    expect((new Webhook(probe.secret).verify(second!.body, second!.headers) as any).data.slug).toBe('zap-two')
    expect(rx.received.filter((r) => r.path === '/zap')).toHaveLength(1)
    expect(await deliveriesWhen(sub.id, () => true)).toHaveLength(1)
    await run(trigger.operation.performUnsubscribe, { authData: connection, subscribeData: probe })
  })

  test("a hook answering 410 is removed on lnk's side; unsubscribing it later still succeeds", async () => {
    const sub = await run(trigger.operation.performSubscribe, { authData: connection, targetUrl: rx.url('/gone') })
    expect((await subscriptions()).map((s) => s.id)).toContain(sub.id)
    await createLink('zap-gone')
    await arrivals('/gone')
    const deadline = Date.now() + 10_000
    while ((await subscriptions()).some((s) => s.id === sub.id)) {
      if (Date.now() > deadline) throw new Error('the subscription was not removed after the 410')
      await Bun.sleep(20)
    }
    expect((await deliveriesWhen(sub.id, () => true)).map((d) => d.status)).toEqual(['dead'])
    expect(rx.received.filter((r) => r.path === '/gone')).toHaveLength(1)
    expect(await run(trigger.operation.performUnsubscribe, { authData: connection, subscribeData: sub })).toEqual({ id: sub.id, unsubscribed: true })
  })

  test("lnk's refusal of a hook address reaches the user with its code", async () => {
    const refused = run(trigger.operation.performSubscribe, { authData: connection, targetUrl: 'not a url' })
    await expect(refused).rejects.toThrow(/\(validation_failed\)/)
  })

  test("a test key's subscription is a test one, listed for test keys only", async () => {
    const testKey = await makeKey(lnk.env.rt, (await workspace()).id, '*', 'test')
    const testConnection = { ...connection, apiKey: testKey.key as string }
    const sub = await run(trigger.operation.performSubscribe, { authData: testConnection, targetUrl: rx.url('/test-mode') })
    expect(sub.mode).toBe('test')
    expect((await subscriptions(testConnection.apiKey)).map((s) => s.id)).toEqual([sub.id])
    expect((await subscriptions()).map((s) => s.id)).not.toContain(sub.id)
    await createLink('zap-test-mode', testConnection.apiKey)
    const [call] = await arrivals('/test-mode')
    expect(new Webhook(sub.secret).verify(call!.body, call!.headers)).toMatchObject({ mode: 'test', data: { slug: 'zap-test-mode' } })
    await run(trigger.operation.performUnsubscribe, { authData: testConnection, subscribeData: sub })
  })
})

async function workspace() {
  const me = await run(app.authentication.test, { authData: connection })
  return me.workspace as { id: string }
}
