// Outbound webhooks on PostgreSQL, end to end through the API and real loopback receivers: links created
// become signed deliveries (verified as a receiver would, with both packages), test pings, replay and secret
// rotation; and across two nodes on one database: an endpoint change on one node reaches the other's cached
// endpoint lists, maxConcurrent 1 holds across both workers, and 200 events made on both nodes are each
// delivered exactly once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { engineOf } from '../../src/db/store'
import { publishing } from '../../src/events/outbox'
import { ManualClock } from '../../src/platform/clock'
import { body, bootstrapAccount, setupPg, type PgTestEnv } from '../helpers'
import { expectRefusedByBoth, LOOPBACK_ENV, receiver, sampleLink, verifyBoth, type Receiver } from './_webhooks'

let a: PgTestEnv
let b: PgTestEnv
let key: string
let workspaceId: string
const clock = new ManualClock(Date.now())
const receivers: Receiver[] = []

// Two requests in flight per node at most: neither node's worker claims every delivery job, so both send.
const ENV = { ...LOOPBACK_ENV, LNK_WEBHOOK_MAX_IN_FLIGHT: '2' }

beforeAll(async () => {
  a = await setupPg({ clock, env: ENV })
  b = await setupPg({ clock, env: ENV, database: a.database })
  const account = await bootstrapAccount(a.rt)
  key = account.apiKey.key
  workspaceId = account.workspace.id
}, 60_000)
afterAll(async () => {
  // Started by the tests themselves (not rt.start()), so stopped here before the runtimes close.
  await Promise.all([a?.rt.worker.stop(), b?.rt.worker.stop()])
  for (const rx of receivers) rx.stop()
  await b?.cleanup()
  await a?.cleanup()
})

const api = (node: PgTestEnv, path: string, init: RequestInit & { json?: unknown } = {}) => node.request(`/v1${path}`, { key, ...init })

function newReceiver(...args: Parameters<typeof receiver>) {
  const rx = receiver(...args)
  receivers.push(rx)
  return rx
}

async function createEndpoint(node: PgTestEnv, input: Record<string, unknown>) {
  const res = await api(node, '/webhooks', { method: 'POST', json: input })
  const payload = await body(res)
  if (res.status !== 201) throw new Error(`endpoint not created: ${res.status} ${JSON.stringify(payload)}`)
  return payload.data
}

async function createLink(node: PgTestEnv, slug: string) {
  const res = await api(node, '/links', { method: 'POST', json: { destinationUrl: `https://example.com/${slug}`, slug } })
  expect(res.status).toBe(201)
  return (await body(res)).data
}

/** Events published the way an area does, in a transaction of the node's pool. */
async function emit(node: PgTestEnv, count: number, tag: string) {
  const engine = engineOf(node.rt.store)
  if (engine.name !== 'pg') throw new Error('expected PostgreSQL')
  const ids: string[] = []
  await engine.transaction(function* (tx) {
    for (let i = 0; i < count; i++)
      ids.push((yield* publishing(engine, tx, { type: 'link.updated', workspaceId, mode: 'live', data: sampleLink({ slug: `${tag}-${i}` }) }, clock.now())).id)
  })
  return ids
}

/** Runs both nodes' workers until `done` holds; bounded by passes, not by time. */
async function runUntil(done: () => boolean, nodes = [a]) {
  for (let pass = 0; pass < 200 && !done(); pass++) {
    for (const node of nodes) await node.rt.worker.runDue()
    if (!done()) await Bun.sleep(5)
  }
  expect(done()).toBe(true)
}

/** Waits (bounded) for a state other machinery reaches on its own: a notice heard, requests received. */
async function until(done: () => boolean | Promise<boolean>, what: string, tries = 3000) {
  for (let i = 0; i < tries; i++) {
    if (await done()) return
    await Bun.sleep(10)
  }
  throw new Error(`never: ${what}`)
}

const eventIdOf = (req: { body: string }) => (JSON.parse(req.body) as { id: string }).id

describe('webhooks on PostgreSQL, one node', () => {
  test('links created reach the receiver, signed as on SQLite', async () => {
    const rx = newReceiver()
    const ep = await createEndpoint(a, { url: rx.url(), events: ['link.created'] })
    await createLink(a, 'pg-hook-1')
    await createLink(a, 'pg-hook-2')
    await runUntil(() => rx.received.length >= 2)
    expect(rx.received).toHaveLength(2)
    const slugs = []
    for (const req of rx.received) {
      const event = (await verifyBoth(req, ep.secret)) as { type: string; data: { slug: string } }
      expect(event.type).toBe('link.created')
      expect(req.headers['x-service-event']).toBe('link.created')
      slugs.push(event.data.slug)
    }
    expect(slugs.sort()).toEqual(['pg-hook-1', 'pg-hook-2'])
    const res = await api(a, `/webhooks/${ep.id}/deliveries`)
    const list = (await body(res)).data as { status: string; attempt: number }[]
    expect(list.map((d) => [d.status, d.attempt])).toEqual([
      ['success', 1],
      ['success', 1],
    ])
    await api(a, `/webhooks/${ep.id}`, { method: 'DELETE' })
  })

  test('a test ping is sent, signed and stored at once', async () => {
    const rx = newReceiver()
    const ep = await createEndpoint(a, { url: rx.url(), events: ['link.created'] })
    const res = await api(a, `/webhooks/${ep.id}/test`, { method: 'POST' })
    expect(res.status).toBe(200)
    const detail = (await body(res)).data
    expect(detail).toMatchObject({ event: 'webhook.test', status: 'success', responseStatus: 200, attempt: 1 })
    expect(rx.received).toHaveLength(1)
    expect(await verifyBoth(rx.received[0]!, ep.secret)).toMatchObject({ type: 'webhook.test', data: { endpointId: ep.id } })
    await api(a, `/webhooks/${ep.id}`, { method: 'DELETE' })
  })

  test('a delivery replayed is sent again with a new webhook-id, and only once however often it is asked', async () => {
    const rx = newReceiver()
    const ep = await createEndpoint(a, { url: rx.url(), events: ['link.created'] })
    await createLink(a, 'pg-replay')
    await runUntil(() => rx.received.length >= 1)
    const [original] = (await body(await api(a, `/webhooks/${ep.id}/deliveries`))).data
    const asks = await Promise.all([a, b, a, b].map((node) => api(node, `/webhooks/${ep.id}/deliveries/${original.id}/replay`, { method: 'POST' })))
    expect(asks.map((r) => r.status).sort()).toEqual([201, 409, 409, 409])
    await runUntil(() => rx.received.length >= 2, [a, b])
    expect(rx.received).toHaveLength(2)
    const [first, second] = rx.received
    expect(second!.body).toBe(first!.body)
    expect(second!.headers['webhook-id']).not.toBe(first!.headers['webhook-id'])
    await verifyBoth(second!, ep.secret)
    await api(a, `/webhooks/${ep.id}`, { method: 'DELETE' })
  })

  test('rotation: with grace both secrets sign, without it the old one stops at once', async () => {
    const rx = newReceiver()
    const ep = await createEndpoint(a, { url: rx.url(), events: ['link.created'] })
    const graced = (await body(await api(a, `/webhooks/${ep.id}/rotate-secret`, { method: 'POST', json: { grace: true } }))).data
    expect(graced.secret).not.toBe(ep.secret)
    expect(graced.previousSecretExpiresAt).not.toBeNull()
    await createLink(a, 'pg-rotated-1')
    await runUntil(() => rx.received.length >= 1)
    await verifyBoth(rx.received[0]!, graced.secret)
    await verifyBoth(rx.received[0]!, ep.secret)

    // Rotated on the other node: the row's current secret (graced.secret) is the one replaced.
    const hard = (await body(await api(b, `/webhooks/${ep.id}/rotate-secret`, { method: 'POST', json: { grace: false } }))).data
    expect(hard.previousSecretExpiresAt).toBeNull()
    await createLink(a, 'pg-rotated-2')
    await runUntil(() => rx.received.length >= 2)
    await verifyBoth(rx.received[1]!, hard.secret)
    await expectRefusedByBoth(rx.received[1]!, graced.secret)
    await expectRefusedByBoth(rx.received[1]!, ep.secret)
    await api(a, `/webhooks/${ep.id}`, { method: 'DELETE' })
  })
})

describe('webhooks on PostgreSQL, two nodes', () => {
  test("an endpoint created on A is used by B's fan-out even when B had cached the workspace as having none", async () => {
    // B dispatches an event first: its fan-out caches "no endpoint listens" for the workspace (the clock
    // stands still, so only a notice can drop that list).
    await emit(b, 1, 'before')
    await b.rt.worker.runDue()
    const { state } = b.rt.modules.webhooks.ctx
    const before = state.generation
    const rx = newReceiver()
    const ep = await createEndpoint(a, { url: rx.url(), events: ['link.updated'] })
    // Creating an endpoint publishes no event: B's lists drop through the notice alone.
    await until(() => state.generation > before, 'B dropped its lists', 200)
    const [id] = await emit(b, 1, 'after')
    await runUntil(() => rx.received.length >= 1, [b])
    expect(rx.received.map(eventIdOf)).toEqual([id!])
    await api(a, `/webhooks/${ep.id}`, { method: 'DELETE' })
  })

  test('maxConcurrent 1 holds across both nodes: never two requests in flight at once', async () => {
    const rx = newReceiver(() => ({ status: 200, delayMs: 20 }))
    // Heard on B before events exist, so B's fan-out cannot have missed the endpoint.
    const heard = new Promise<void>((resolve) => b.rt.bus.on('subscribers.changed', () => resolve()))
    const ep = await createEndpoint(a, { url: rx.url(), events: ['link.updated'], maxConcurrent: 1 })
    await heard
    const ids = [...(await emit(a, 12, 'one-a')), ...(await emit(b, 12, 'one-b'))]
    // Both nodes' workers at once: each claims what the other has not, and each would send 5 at a time.
    a.rt.worker.start()
    b.rt.worker.start()
    await until(() => rx.received.length >= ids.length, 'every event delivered')
    expect(rx.received.map(eventIdOf).sort()).toEqual([...ids].sort())
    expect(rx.maxInFlight).toBe(1)
    await api(a, `/webhooks/${ep.id}`, { method: 'DELETE' })
  }, 60_000)

  test('200 events made on both nodes are each delivered exactly once while both workers run', async () => {
    const rx = newReceiver()
    const heard = new Promise<void>((resolve) => a.rt.bus.on('subscribers.changed', () => resolve()))
    const ep = await createEndpoint(b, { url: rx.url(), events: ['link.updated'], maxConcurrent: 10 })
    await heard
    a.rt.worker.start()
    b.rt.worker.start()
    const made = await Promise.all([emit(a, 50, 'many-a1'), emit(b, 50, 'many-b1'), emit(a, 50, 'many-a2'), emit(b, 50, 'many-b2')])
    const ids = made.flat()
    expect(new Set(ids).size).toBe(200)
    await until(() => rx.received.length >= 200, '200 deliveries received')
    // Nothing is left to send twice: both nodes have nothing due, and the receiver heard each event once.
    await until(async () => {
      const list = (await body(await api(a, `/webhooks/${ep.id}/deliveries?limit=200&status=success`))).data as unknown[]
      return list.length === 200
    }, 'every delivery recorded')
    await a.rt.worker.runDue()
    await b.rt.worker.runDue()
    expect(rx.received).toHaveLength(200)
    expect(rx.received.map(eventIdOf).sort()).toEqual([...ids].sort())
    expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(200)
    for (const req of rx.received.slice(0, 3)) expect(new Webhook(ep.secret).verify(req.body, req.headers)).toBeTruthy()
  }, 60_000)
})
