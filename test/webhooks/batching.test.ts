// Batching: events within batchWindowSeconds go as one delivery {type: "batch", count, events}, flushed at
// the window end (injected clock) or at once when 100 events are collected.
import { describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { deliveries, delivery, sharedWorld, stripeVerifies, type Env, type Receiver } from './_webhooks'

let env: Env
let rx: Receiver
sharedWorld((w) => ({ env, rx } = w), { clock: new ManualClock(Date.UTC(2026, 3, 1, 9, 0, 0)) })

describe('batching', () => {
  test('events within the window go as one signed delivery at the window end', async () => {
    const ep = await env.createEndpoint({ url: rx.url('/window'), events: ['link.created'], batchEnabled: true, batchWindowSeconds: 30 })
    const start = env.clock.now()
    const ids = [await env.emit('link.created', { slug: 'a' })]
    await env.run()
    env.clock.advance(10_000)
    ids.push(await env.emit('link.created', { slug: 'b' }))
    ids.push(await env.emit('link.created', { slug: 'c' }))
    await env.run()
    expect(rx.received).toHaveLength(0)
    let [d] = await deliveries(env, ep.id)
    expect(d).toMatchObject({ event: 'batch', status: 'pending', batchSize: 3, attempt: 0, replayable: false })
    expect(d.nextAttemptAt).toBe(new Date(start + 30_000).toISOString())

    env.clock.set(start + 30_000 - 1)
    await env.run()
    expect(rx.received).toHaveLength(0)
    env.clock.set(start + 30_000)
    await env.run()
    expect(rx.received).toHaveLength(1)
    const req = rx.received[0]!
    expect(await stripeVerifies(req, ep.secret)).toBe(true)
    const sent = JSON.parse(req.body)
    expect(sent.type).toBe('batch')
    expect(sent.count).toBe(3)
    expect(sent.events.map((e: any) => e.id)).toEqual(ids)
    expect(sent.events.map((e: any) => e.data.slug)).toEqual(['a', 'b', 'c'])
    expect(req.headers['x-service-event']).toBe('batch')
    ;[d] = await deliveries(env, ep.id)
    expect(d).toMatchObject({ event: 'batch', status: 'success', batchSize: 3, attempt: 1, replayable: true })
    expect((await delivery(env, ep.id, d.id)).payload).toEqual(sent)

    // The next event opens a new batch.
    await env.emit('link.created', { slug: 'd' })
    await env.run()
    const list = await deliveries(env, ep.id)
    expect(list).toHaveLength(2)
    expect(list[0]).toMatchObject({ status: 'pending', batchSize: 1 })
    env.clock.advance(30_000)
    await env.run()
    expect(rx.received).toHaveLength(2)
    expect(JSON.parse(rx.received[1]!.body).count).toBe(1)
    await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })
  })

  test('100 events flush at once; the window-end job then finds nothing to do', async () => {
    const ep = await env.createEndpoint({ url: rx.url('/cap'), events: ['link.*'], batchEnabled: true, batchWindowSeconds: 300 })
    for (let i = 0; i < 104; i++) await env.emit(i % 2 ? 'link.updated' : 'link.created', { slug: `e${i}` })
    await env.run()
    expect(rx.received).toHaveLength(1)
    const first = JSON.parse(rx.received[0]!.body)
    expect(first.count).toBe(100)
    expect(first.events.map((e: any) => e.data.slug)).toEqual(Array.from({ length: 100 }, (_, i) => `e${i}`))
    const list = await deliveries(env, ep.id)
    expect(list.map((d) => [d.status, d.batchSize])).toEqual([
      ['pending', 4],
      ['success', 100],
    ])
    env.clock.advance(300_000)
    await env.run()
    expect(rx.received).toHaveLength(2)
    expect(JSON.parse(rx.received[1]!.body).count).toBe(4)
    expect(rx.received[1]!.headers['webhook-id']).not.toBe(rx.received[0]!.headers['webhook-id'])
    await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })
  })

  test('a failed batch is retried whole with the same webhook-id; it can be replayed', async () => {
    rx.answer = () => ({ status: 500 })
    const ep = await env.createEndpoint({ url: rx.url('/retry'), events: ['link.created'], batchEnabled: true, batchWindowSeconds: 5 })
    await env.emit('link.created', { slug: 'x' })
    await env.emit('link.created', { slug: 'y' })
    await env.run()
    env.clock.advance(5000)
    await env.run()
    let [d] = await deliveries(env, ep.id)
    expect(d).toMatchObject({ status: 'failed', attempt: 1, batchSize: 2 })
    rx.answer = () => ({ status: 200 })
    env.clock.set(Date.parse(d.nextAttemptAt))
    await env.run()
    ;[d] = await deliveries(env, ep.id)
    expect(d).toMatchObject({ status: 'success', attempt: 2 })
    expect(rx.received).toHaveLength(2)
    expect(rx.received[0]!.body).toBe(rx.received[1]!.body)
    expect(rx.received[0]!.headers['webhook-id']).toBe(rx.received[1]!.headers['webhook-id'])
    const replay = await env.api(`/webhooks/${ep.id}/deliveries/${d.id}/replay`, { method: 'POST' })
    expect(replay.status).toBe(201)
    await env.run()
    expect(rx.received).toHaveLength(3)
    expect(JSON.parse(rx.received[2]!.body).count).toBe(2)
  })

  test('an endpoint without batching is unaffected by another one batching', async () => {
    const batched = await env.createEndpoint({ url: rx.url('/b'), events: ['link.created'], batchEnabled: true, batchWindowSeconds: 60 })
    const direct = await env.createEndpoint({ url: rx.url('/d'), events: ['link.created'] })
    await env.emit('link.created', { slug: 'one' })
    await env.emit('link.created', { slug: 'two' })
    await env.run()
    expect(rx.received.filter((r) => r.path === '/d')).toHaveLength(2)
    expect(rx.received.filter((r) => r.path === '/b')).toHaveLength(0)
    env.clock.advance(60_000)
    await env.run()
    expect(rx.received.filter((r) => r.path === '/b')).toHaveLength(1)
    for (const id of [batched.id, direct.id]) await env.api(`/webhooks/${id}`, { method: 'DELETE' })
  })
})
