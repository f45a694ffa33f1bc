// Retries, driven by the injected clock (no sleeping for a schedule): the contract schedule with its jitter
// bounds, Retry-After, dead after maxAttempts, 410 and auto-disable, paused endpoints, the concurrency cap,
// restart-resume, replay, replay-all, test pings and SSRF refusal at send.
import { afterEach, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { engineOf } from '../../src/db/store'
import { createOutbox } from '../../src/events/outbox'
import { createApp } from '../../src/app'
import { silentLogger } from '../../src/platform/log'
import { nextAttemptAt, parseRetryAfter, retryDelay, RETRY_DELAYS_MS } from '../../src/modules/webhooks/schedule'
import { openRuntime } from '../../src/runtime'
import { body } from '../helpers'
import { deliveries, delivery, endpoint, receiver, state, webhooksEnv, type Env } from './_webhooks'

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0)
const cleanups: (() => void | Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c()
})

async function world(answer: Parameters<typeof receiver>[0] = () => ({ status: 500 }), env: Record<string, string> = {}) {
  const e = await webhooksEnv({ clock: new ManualClock(T0), env })
  const rx = receiver(answer)
  cleanups.push(
    () => rx.stop(),
    () => e.cleanup(),
  )
  return { env: e, rx }
}

/** Dispatches the outbox to the webhooks fan-out alone: the deliveries are made and queued, none is sent. */
async function fanOutOnly(env: Env) {
  const { store, clock, modules } = env.rt
  const now = () => clock.now()
  const outbox = createOutbox(engineOf(store, 'worker'), modules.webhooks.consumers ?? [], now)
  await outbox.drain()
}

/** Runs what is due `times` times, moving the clock by `stepMs` after each (deferred and retried attempts follow). */
async function drain(env: Env, times: number, stepMs: number) {
  for (let i = 0; i < times; i++) {
    await env.run()
    env.clock.advance(stepMs)
  }
}

/** Moves the clock to the delivery's nextAttemptAt and runs what is due. */
async function nextAttempt(env: Env, endpointId: string) {
  const [d] = await deliveries(env, endpointId)
  env.clock.set(Date.parse(d.nextAttemptAt))
  await env.run()
}

describe('the schedule', () => {
  test('delays are the contract schedule with ±20 % jitter', () => {
    const seconds = RETRY_DELAYS_MS.live.map((ms) => ms / 1000)
    expect(seconds).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400])
    expect(RETRY_DELAYS_MS.test.map((ms) => ms / 1000)).toEqual([5, 300, 1800])
    for (let n = 1; n <= 9; n++) {
      const base = RETRY_DELAYS_MS.live[n - 1]!
      expect(retryDelay('live', n, () => 0)).toBe(Math.round(base * 0.8))
      expect(retryDelay('live', n, () => 0.999999)).toBeLessThanOrEqual(Math.round(base * 1.2))
      expect(retryDelay('live', n, () => 0.5)).toBe(base)
      for (let i = 0; i < 50; i++) {
        const d = retryDelay('live', n)!
        expect(d).toBeGreaterThanOrEqual(base * 0.8)
        expect(d).toBeLessThanOrEqual(base * 1.2)
      }
    }
    expect(retryDelay('live', 10)).toBeNull()
    expect(retryDelay('test', 4)).toBeNull()
  })

  test('Retry-After: seconds or an HTTP date; unreadable ignored; longer than 24 h falls back to the schedule', () => {
    expect(parseRetryAfter('120', T0)).toBe(120_000)
    expect(parseRetryAfter(new Date(T0 + 3_600_000).toUTCString(), T0)).toBe(3_600_000)
    expect(parseRetryAfter(new Date(T0 - 5000).toUTCString(), T0)).toBe(0)
    expect(parseRetryAfter('soon', T0)).toBeNull()
    expect(parseRetryAfter(undefined, T0)).toBeNull()
    expect(nextAttemptAt('live', 1, T0, 120_000, () => 0.5)).toBe(T0 + 120_000)
    expect(nextAttemptAt('live', 1, T0, 0, () => 0.5)).toBe(T0 + 1000)
    expect(nextAttemptAt('live', 1, T0, 48 * 3_600_000, () => 0.5)).toBe(T0 + 5000)
    // Retry-After never adds attempts.
    expect(nextAttemptAt('live', 10, T0, 1000)).toBeNull()
  })
})

describe('retries end to end', () => {
  test('a live delivery is tried 10 times on the schedule with the same webhook-id, then dead', async () => {
    const { env, rx } = await world()
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await env.emit('link.created')
    await env.run()
    expect(rx.received).toHaveLength(1)
    for (let attempt = 1; attempt <= 9; attempt++) {
      const [d] = await deliveries(env, ep.id)
      expect(d).toMatchObject({ status: 'failed', attempt, maxAttempts: 10, responseStatus: 500, errorMessage: 'answered 500' })
      const delay = Date.parse(d.nextAttemptAt) - env.clock.now()
      const base = RETRY_DELAYS_MS.live[attempt - 1]!
      expect(delay).toBeGreaterThanOrEqual(base * 0.8)
      expect(delay).toBeLessThanOrEqual(base * 1.2)
      // Nothing happens before the time comes.
      env.clock.set(Date.parse(d.nextAttemptAt) - 1)
      await env.run()
      expect(rx.received).toHaveLength(attempt)
      await nextAttempt(env, ep.id)
      expect(rx.received).toHaveLength(attempt + 1)
    }
    const [d] = await deliveries(env, ep.id)
    expect(d).toMatchObject({ status: 'dead', attempt: 10, nextAttemptAt: null, replayable: true })
    expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(1)
    expect(rx.received[0]!.headers['webhook-id']).toBe(d.idempotencyKey)
    // Each retry is signed afresh, at its own time.
    expect(new Set(rx.received.map((r) => r.headers['webhook-timestamp'])).size).toBe(10)
    expect((await delivery(env, ep.id, d.id)).attempts.map((a: any) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect((await endpoint(env, ep.id)).failureCount).toBe(10)
    expect(await deliveries(env, ep.id, '?status=failed')).toHaveLength(1)
    expect(await deliveries(env, ep.id, '?status=dead')).toHaveLength(1)
    // No job is left behind.
    env.clock.advance(30 * 24 * 3_600_000)
    await env.run()
    expect(rx.received).toHaveLength(10)
    expect((await env.rt.queue.depth(env.clock.now())).dead).toBe(0)
  })

  test('a test-mode delivery gets 4 attempts (5 s, 5 min, 30 min)', async () => {
    const { env, rx } = await world()
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'], mode: 'test' })
    await env.emit('link.created', undefined, 'test')
    await env.run()
    for (let i = 0; i < 3; i++) await nextAttempt(env, ep.id)
    const [d] = await deliveries(env, ep.id)
    expect(d).toMatchObject({ status: 'dead', attempt: 4, maxAttempts: 4, nextAttemptAt: null })
    expect(rx.received).toHaveLength(4)
  })

  test('a success after failures: success, deliveredAt, failureCount back to 0', async () => {
    const { env, rx } = await world((_, n) => ({ status: n < 3 ? 503 : 204 }))
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await env.emit('link.created')
    await env.run()
    await nextAttempt(env, ep.id)
    expect((await endpoint(env, ep.id)).failureCount).toBe(2)
    // Not delivered yet: deliveredAt (a timestamp, spec 2.6) is absent, not null, in the list and the detail.
    const [retrying] = await deliveries(env, ep.id)
    expect(retrying.status).toBe('failed')
    expect(retrying).not.toHaveProperty('deliveredAt')
    expect(await delivery(env, ep.id, retrying.id)).not.toHaveProperty('deliveredAt')
    await nextAttempt(env, ep.id)
    const [d] = await deliveries(env, ep.id)
    expect(d).toMatchObject({ status: 'success', attempt: 3, responseStatus: 204, nextAttemptAt: null, errorMessage: null })
    expect(d.deliveredAt).toBe(new Date(env.clock.now()).toISOString())
    expect((await endpoint(env, ep.id)).failureCount).toBe(0)
  })

  test('the document types deliveredAt as an optional timestamp, never null, in the list and the detail', async () => {
    const { env } = await world()
    const doc = await body(await env.request('/v1/openapi.json'))
    for (const name of ['WebhookDelivery', 'WebhookDeliveryDetail']) {
      const schema = doc.components.schemas[name]
      expect(schema.required).not.toContain('deliveredAt')
      expect(schema.properties.deliveredAt).toMatchObject({ type: 'string', format: 'date-time' })
    }
  })

  test('Retry-After (seconds and HTTP date) decides the next attempt', async () => {
    let answer: { status: number; headers?: Record<string, string> } = { status: 429, headers: { 'retry-after': '120' } }
    const { env, rx } = await world(() => answer)
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await env.emit('link.created')
    await env.run()
    let [d] = await deliveries(env, ep.id)
    expect(Date.parse(d.nextAttemptAt)).toBe(T0 + 120_000)
    env.clock.set(T0 + 120_000)
    answer = { status: 503, headers: { 'retry-after': new Date(T0 + 120_000 + 3_600_000).toUTCString() } }
    await env.run()
    ;[d] = await deliveries(env, ep.id)
    expect(d.attempt).toBe(2)
    expect(Date.parse(d.nextAttemptAt)).toBe(T0 + 120_000 + 3_600_000)
    expect((await delivery(env, ep.id, d.id)).response.headers['retry-after']).toBeDefined()
    expect(rx.received).toHaveLength(2)
  })

  test('410 Gone disables the endpoint; its other pending deliveries are not sent and wait for replay-all', async () => {
    const { env, rx } = await world((r) => ({ status: JSON.parse(r.body).data.slug === 'gone' ? 410 : 500 }))
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await env.emit('link.created', { slug: 'first' })
    await env.run()
    await env.emit('link.created', { slug: 'gone' })
    await env.run()
    const ep2 = await endpoint(env, ep.id)
    expect(ep2).toMatchObject({ isActive: false, disabledReason: 'The endpoint answered 410 Gone' })
    const list = await deliveries(env, ep.id)
    expect(list.find((d) => d.responseStatus === 410)).toMatchObject({ status: 'dead', nextAttemptAt: null })
    // The first delivery's retry comes due: not sent, dead, replayable.
    env.clock.advance(60_000)
    await env.run()
    expect(rx.received).toHaveLength(2)
    const first = (await deliveries(env, ep.id)).find((d) => d.responseStatus === 500)!
    expect(first).toMatchObject({ status: 'dead', attempt: 1, replayable: true })
    expect(first.errorMessage).toContain('disabled')
    // New events are not delivered to a disabled endpoint.
    await env.emit('link.created', { slug: 'later' })
    await env.run()
    expect(await deliveries(env, ep.id)).toHaveLength(2)
  })

  test('auto-disable: 20 consecutive failed attempts and no success for 5 days', async () => {
    const { env, rx } = await world()
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'], mode: 'test' })
    for (let i = 0; i < 6; i++) await env.emit('link.created', { slug: `s${i}` }, 'test')
    // Every delivery runs its 4 attempts within the hour: 24 failed attempts, none 5 days old.
    await drain(env, 60, 60_000)
    let e = await endpoint(env, ep.id)
    expect(e).toMatchObject({ failureCount: 24, isActive: true })
    env.clock.set(T0 + 5 * 24 * 3_600_000 - 60_000)
    await env.emit('link.created', { slug: 'late' }, 'test')
    await env.run()
    e = await endpoint(env, ep.id)
    expect(e).toMatchObject({ failureCount: 25, isActive: true })
    env.clock.set(T0 + 5 * 24 * 3_600_000)
    await drain(env, 1, 0)
    await env.emit('link.created', { slug: 'five-days' }, 'test')
    await env.run()
    e = await endpoint(env, ep.id)
    expect(e.isActive).toBe(false)
    expect(e.disabledReason).toContain('20 or more consecutive failed attempts')
    // Re-enabling starts afresh.
    const res = await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { isActive: true } })
    expect((await body(res)).data).toMatchObject({ isActive: true, failureCount: 0, disabledReason: null })
  })

  test('a success restarts the count: failures after it are judged from their own start', async () => {
    const { env, rx } = await world((r) => ({ status: JSON.parse(r.body).data.slug === 'ok' ? 200 : 500 }))
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'], mode: 'test' })
    for (let i = 0; i < 6; i++) await env.emit('link.created', { slug: `bad${i}` }, 'test')
    await drain(env, 60, 60_000)
    expect((await endpoint(env, ep.id)).failureCount).toBe(24)
    await env.emit('link.created', { slug: 'ok' }, 'test')
    await env.run()
    expect((await endpoint(env, ep.id)).failureCount).toBe(0)
    env.clock.set(T0 + 6 * 24 * 3_600_000)
    for (let i = 0; i < 6; i++) await env.emit('link.created', { slug: `again${i}` }, 'test')
    await drain(env, 60, 60_000)
    const e = await endpoint(env, ep.id)
    expect(e).toMatchObject({ failureCount: 24, isActive: true })
  })

  test('a paused endpoint sends nothing; its due deliveries become dead and replayable', async () => {
    const { env, rx } = await world()
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await env.emit('link.created')
    await env.run()
    await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { isActive: false } })
    await nextAttempt(env, ep.id)
    expect(rx.received).toHaveLength(1)
    const [d] = await deliveries(env, ep.id)
    expect(d).toMatchObject({ status: 'dead', attempt: 1, errorMessage: 'Not sent: the endpoint is paused', replayable: true })
  })

  test('maxConcurrent bounds the requests in flight to one endpoint; the rest follow', async () => {
    const { env, rx } = await world(() => ({ status: 200, delayMs: 30 }))
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'], maxConcurrent: 2 })
    for (let i = 0; i < 7; i++) await env.emit('link.created', { slug: `c${i}` })
    for (let i = 0; i < 10 && rx.received.length < 7; i++) {
      await env.run()
      env.clock.advance(1000)
    }
    expect(rx.received).toHaveLength(7)
    expect(rx.maxInFlight).toBe(2)
    expect((await deliveries(env, ep.id, '?status=success')).length).toBe(7)
    expect(state(env).total).toBe(0)
  })
})

describe('global cap and endpoint changes', () => {
  test('LNK_WEBHOOK_MAX_IN_FLIGHT bounds requests across endpoints', async () => {
    const { env, rx } = await world(() => ({ status: 200, delayMs: 20 }), { LNK_WEBHOOK_MAX_IN_FLIGHT: '1' })
    await env.createEndpoint({ url: rx.url('/a'), events: ['link.created'] })
    await env.createEndpoint({ url: rx.url('/b'), events: ['link.created'] })
    for (let i = 0; i < 3; i++) await env.emit('link.created', { slug: `g${i}` })
    await drain(env, 10, 1000)
    expect(rx.received).toHaveLength(6)
    expect(rx.maxInFlight).toBe(1)
  })

  test('a change to an endpoint applies to the next event at once (no stale fan-out cache)', async () => {
    const { env, rx } = await world(() => ({ status: 200 }))
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await env.emit('link.created')
    await env.run()
    await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { events: ['link.deleted'] } })
    await env.emit('link.created')
    await env.emit('link.deleted', { slug: 'gone' })
    await env.run()
    expect(rx.received.map((r) => r.headers['x-service-event'])).toEqual(['link.created', 'link.deleted'])
    await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })
    await env.emit('link.deleted', { slug: 'after' })
    await env.run()
    expect(rx.received).toHaveLength(2)
  })
})

describe('restart', () => {
  test('a retry scheduled before a restart is delivered after it (same database file)', async () => {
    const { env, rx } = await world()
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await env.emit('link.created')
    await env.run()
    const [d] = await deliveries(env, ep.id)
    expect(d.status).toBe('failed')
    // Stop: the runtime's connections close, nothing in memory survives.
    await env.rt.close()

    rx.answer = () => ({ status: 200 })
    const clock = new ManualClock(Date.parse(d.nextAttemptAt))
    const rt = await openRuntime(env.config, { clock, log: silentLogger })
    cleanups.unshift(() => rt.close())
    const app = createApp(rt)
    await rt.worker.runDue()
    expect(rx.received).toHaveLength(2)
    expect(rx.received[1]!.headers['webhook-id']).toBe(rx.received[0]!.headers['webhook-id'])
    const res = await app.handle(new Request(`http://localhost:8080/v1/webhooks/${ep.id}/deliveries`, { headers: { authorization: `Bearer ${env.key}` } }))
    expect((await body(res)).data[0]).toMatchObject({ id: d.id, status: 'success', attempt: 2 })
  })
})

describe('replay', () => {
  test('a new delivery with replayOfId and a new idempotency key; the original is no longer replayable', async () => {
    const { env, rx } = await world((_, n) => ({ status: n === 1 ? 500 : 200 }), {})
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'], mode: 'test' })
    await env.emit('link.created', undefined, 'test')
    await env.run()
    for (let i = 0; i < 3 && (await deliveries(env, ep.id))[0].status !== 'dead'; i++) {
      rx.answer = () => ({ status: 500 })
      await nextAttempt(env, ep.id)
    }
    const [original] = await deliveries(env, ep.id)
    expect(original.status).toBe('dead')

    // Paused: 409 endpoint_paused.
    await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { isActive: false } })
    let res = await env.api(`/webhooks/${ep.id}/deliveries/${original.id}/replay`, { method: 'POST' })
    expect(res.status).toBe(409)
    expect((await body(res)).error.code).toBe('endpoint_paused')
    await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { isActive: true } })

    rx.answer = () => ({ status: 200 })
    res = await env.api(`/webhooks/${ep.id}/deliveries/${original.id}/replay`, { method: 'POST' })
    expect(res.status).toBe(201)
    const copy = (await body(res)).data
    expect(copy).toMatchObject({
      replayOfId: original.id,
      status: 'pending',
      attempt: 0,
      maxAttempts: 4,
      event: 'link.created',
      eventId: original.eventId,
      replayable: true,
    })
    expect(copy.idempotencyKey).not.toBe(original.idempotencyKey)
    expect(copy.id).not.toBe(original.id)
    await env.run()
    const last = rx.received.at(-1)!
    expect(last.headers['webhook-id']).toBe(copy.idempotencyKey)
    expect(JSON.parse(last.body).id).toBe(original.eventId)
    expect((await delivery(env, ep.id, copy.id)).status).toBe('success')
    expect((await delivery(env, ep.id, original.id)).replayable).toBe(false)
    res = await env.api(`/webhooks/${ep.id}/deliveries/${original.id}/replay`, { method: 'POST' })
    expect(res.status).toBe(409)
    expect((await body(res)).error.code).toBe('conflict')
  })

  test('replaying a delivery that is still retrying supersedes it', async () => {
    const { env, rx } = await world()
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await env.emit('link.created')
    await env.run()
    const [original] = await deliveries(env, ep.id)
    expect(original.status).toBe('failed')
    rx.answer = () => ({ status: 200 })
    const copy = (await body(await env.api(`/webhooks/${ep.id}/deliveries/${original.id}/replay`, { method: 'POST' }))).data
    await env.run()
    env.clock.advance(3_600_000)
    await env.run()
    expect(rx.received).toHaveLength(2)
    const old = await delivery(env, ep.id, original.id)
    expect(old).toMatchObject({ status: 'dead', replayable: false, nextAttemptAt: null })
    expect(old.errorMessage).toContain(copy.id)
  })

  test('replay-all: at most 200 dead, oldest first, in one go; answers what remains', async () => {
    const { env, rx } = await world(() => ({ status: 200 }))
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    for (let i = 0; i < 205; i++) await env.emit('link.created', { slug: `r${i}` })
    // Fan out without sending, then pause: every delivery's job finds the endpoint paused (dead, replayable).
    await fanOutOnly(env)
    await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { isActive: false } })
    await env.run()
    expect(rx.received).toHaveLength(0)
    expect(await deliveries(env, ep.id, '?status=dead&limit=200')).toHaveLength(200)

    let res = await env.api(`/webhooks/${ep.id}/replay-all`, { method: 'POST' })
    expect(res.status).toBe(409)
    expect((await body(res)).error.code).toBe('endpoint_paused')
    await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { isActive: true } })

    res = await env.api(`/webhooks/${ep.id}/replay-all`, { method: 'POST' })
    expect(res.status).toBe(200)
    const result = (await body(res)).data
    expect(result.queued).toBe(200)
    expect(result.remainingDead).toBe(5)
    expect(result.deliveryIds).toHaveLength(200)
    for (let i = 0; i < 100 && rx.received.length < 200; i++) {
      await env.run()
      env.clock.advance(1000)
    }
    expect(rx.received).toHaveLength(200)
    // Oldest first: the 5 left are the newest events.
    const left = (await deliveries(env, ep.id, '?status=dead&limit=200')).filter((d) => d.replayable)
    expect(left.map((d) => JSON.parse(JSON.stringify(d)).eventId).length).toBe(5)
    const sentSlugs = new Set(rx.received.map((r) => JSON.parse(r.body).data.slug))
    for (let i = 0; i < 200; i++) expect(sentSlugs.has(`r${i}`)).toBe(true)
    res = await env.api(`/webhooks/${ep.id}/replay-all`, { method: 'POST' })
    expect((await body(res)).data).toMatchObject({ queued: 5, remainingDead: 0 })
    res = await env.api(`/webhooks/${ep.id}/replay-all`, { method: 'POST' })
    expect((await body(res)).data).toMatchObject({ queued: 0, remainingDead: 0 })
  })
})

describe('test ping', () => {
  test('one attempt, answered with the outcome; ignores filters and template; no retry; failureCount untouched', async () => {
    let status = 200
    const { env, rx } = await world(() => ({ status }))
    const ep = await env.createEndpoint({
      url: rx.url(),
      events: ['link.created'],
      filters: { match: 'all', events: null, rules: [{ field: 'data.never', op: 'exists' }] },
      transform: { kind: 'template', template: { only: 'this' } },
      batchEnabled: true,
    })
    let res = await env.api(`/webhooks/${ep.id}/test`, { method: 'POST' })
    expect(res.status).toBe(200)
    let ping = (await body(res)).data
    expect(ping).toMatchObject({
      event: 'webhook.test',
      status: 'success',
      attempt: 1,
      maxAttempts: 1,
      responseStatus: 200,
      nextAttemptAt: null,
      replayable: false,
    })
    const sent = JSON.parse(rx.received[0]!.body)
    expect(sent).toMatchObject({ type: 'webhook.test', mode: 'live', data: { endpointId: ep.id } })
    expect(rx.received[0]!.headers['x-service-event']).toBe('webhook.test')
    expect(ping.request.body).toBe(rx.received[0]!.body)

    status = 500
    res = await env.api(`/webhooks/${ep.id}/test`, { method: 'POST' })
    ping = (await body(res)).data
    expect(ping).toMatchObject({ status: 'dead', attempt: 1, responseStatus: 500, nextAttemptAt: null, errorMessage: 'answered 500' })
    expect((await endpoint(env, ep.id)).failureCount).toBe(0)
    const depth = await env.rt.queue.depth(env.clock.now())
    expect(depth.due + depth.scheduled + depth.running).toBe(0)
    env.clock.advance(7 * 24 * 3_600_000)
    await env.run()
    expect(rx.received).toHaveLength(2)
    // A ping is not replayed (nor picked by replay-all).
    res = await env.api(`/webhooks/${ep.id}/deliveries/${ping.id}/replay`, { method: 'POST' })
    expect(res.status).toBe(409)
    expect((await body(await env.api(`/webhooks/${ep.id}/replay-all`, { method: 'POST' }))).data.queued).toBe(0)
  })

  test('410 on a ping reports but does not disable; Slack endpoints get a Slack message', async () => {
    const { env, rx } = await world((r) => ({ status: r.path === '/gone' ? 410 : 200 }))
    const gone = await env.createEndpoint({ url: rx.url('/gone'), events: ['*'] })
    const ping = (await body(await env.api(`/webhooks/${gone.id}/test`, { method: 'POST' }))).data
    expect(ping.responseStatus).toBe(410)
    expect((await endpoint(env, gone.id)).isActive).toBe(true)
    const slack = await env.createEndpoint({ url: rx.url('/slack'), events: ['*'], format: 'slack' })
    await env.api(`/webhooks/${slack.id}/test`, { method: 'POST' })
    const msg = JSON.parse(rx.received.at(-1)!.body)
    expect(typeof msg.text).toBe('string')
    expect(Array.isArray(msg.blocks)).toBe(true)
  })
})

describe('SSRF at send', () => {
  test('a host that resolved to a public address at save but to 127.0.0.1 at send is refused and recorded', async () => {
    const { env, rx } = await world(() => ({ status: 200 }), { LNK_WEBHOOK_ALLOW_HTTP: 'true', LNK_WEBHOOK_ALLOWED_CIDRS: '' })
    state(env).resolver = async () => ['93.184.215.14']
    const ep = await env.createEndpoint({ url: `http://hooks.example:${rx.server.port}/x`, events: ['link.created'] })
    state(env).resolver = async () => ['127.0.0.1']
    await env.emit('link.created')
    await env.run()
    expect(rx.received).toHaveLength(0)
    const [d] = await deliveries(env, ep.id)
    expect(d.status).toBe('failed')
    expect(d.responseStatus).toBeNull()
    expect(d.errorMessage).toMatch(/127\.0\.0\.1|loopback/)
    const ping = (await body(await env.api(`/webhooks/${ep.id}/test`, { method: 'POST' }))).data
    expect(ping.status).toBe('dead')
    expect(rx.received).toHaveLength(0)
  })
})
