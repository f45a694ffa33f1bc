// Forwarding sessions on PostgreSQL across two nodes on one database: a poll held on node B receives, signed,
// the event made and dispatched on node A (the wake-up is sent at the dispatch's commit to every node); a
// session opened on B reaches A's cached lists of open sessions through the bus notice alone; a reset of the
// caches (notices may have been lost) makes held polls look at their queues.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { ManualClock } from '../../src/platform/clock'
import { body, bootstrapAccount, setupPg, type PgTestEnv } from '../helpers'

let a: PgTestEnv
let b: PgTestEnv
let key: string
let workspaceId: string
const clock = new ManualClock(Date.now())

beforeAll(async () => {
  a = await setupPg({ clock })
  b = await setupPg({ clock, database: a.database })
  const account = await bootstrapAccount(a.rt)
  key = account.apiKey.key
  workspaceId = account.workspace.id
}, 60_000)
afterAll(async () => {
  await b?.cleanup()
  await a?.cleanup()
})

const api = (node: PgTestEnv, path: string, init: RequestInit & { json?: unknown } = {}) => node.request(`/v1${path}`, { key, ...init })

async function openSession(node: PgTestEnv, events: string[]) {
  const res = await api(node, '/webhooks/cli/sessions', { method: 'POST', json: { events } })
  expect(res.status).toBe(201)
  return (await body(res)).data as { id: string; secret: string }
}

async function until(done: () => boolean, what: string, tries = 300) {
  for (let i = 0; i < tries; i++) {
    if (done()) return
    await Bun.sleep(10)
  }
  throw new Error(`never: ${what}`)
}

describe('forwarding on PostgreSQL, two nodes', () => {
  test('a poll held on B receives the event made and dispatched on A', async () => {
    const session = await openSession(b, ['link.created'])
    const polled = api(b, `/webhooks/cli/events?session=${session.id}&wait=25`)
    await until(() => b.rt.modules.forwarding.waiters.size === 1, 'the poll is held on B')
    const res = await api(a, '/links', { method: 'POST', json: { destinationUrl: 'https://example.com/fwd', slug: 'fwd-across' } })
    expect(res.status).toBe(201)
    await a.rt.worker.runDue()
    const answer = await polled
    expect(answer.status).toBe(200)
    const events = (await body(answer)).data as { id: string; type: string; body: string; headers: Record<string, string> }[]
    expect(events.map((e) => e.type)).toEqual(['link.created'])
    const event = events[0]!
    expect(JSON.parse(event.body)).toMatchObject({ type: 'link.created', data: { slug: 'fwd-across' } })
    expect(new Webhook(session.secret).verify(event.body, event.headers)).toMatchObject({ id: event.id })
  }, 15_000)

  test('a session opened on B reaches the interest A answers from its cache, through the notice alone', async () => {
    const wants = () => a.rt.interest.wants('link.clicked', workspaceId, 'test')
    // Unknown at first (yes), then loaded in the background: nobody listens in test mode.
    await until(() => !wants(), 'A learned that no test session is open')
    const testKey = (await body(await api(a, '/api-keys', { method: 'POST', json: { name: 'test key', mode: 'test', permissions: ['*'] } }))).data
    const res = await b.request('/v1/webhooks/cli/sessions', { method: 'POST', key: testKey.key, json: { events: ['link.clicked'] } })
    expect(res.status).toBe(201)
    // The clock stands still, so A's list can only drop by the notice of B's change.
    await until(() => wants(), 'A heard of the session opened on B', 200)
  })

  test('a reset of the caches (wake-ups may have been lost) makes a held poll look at its queue', async () => {
    const session = await openSession(b, ['link.deleted'])
    const polled = api(b, `/webhooks/cli/events?session=${session.id}&wait=25`)
    await until(() => b.rt.modules.forwarding.waiters.size === 1, 'the poll is held on B')
    // Queued with no wake-up, as when the notice was lost.
    const store = a.rt.store
    if (store.engine !== 'pg') throw new Error('expected PostgreSQL')
    const envelope = JSON.stringify({ id: 'evt_lost', type: 'link.deleted', mode: 'live', data: {} })
    await store.sql`INSERT INTO cli_session_events (session_id, event_id, type, body, created_at) VALUES (${session.id}, 'evt_lost', 'link.deleted', ${envelope}, ${clock.now()})`
    b.rt.bus.emitLocal('caches.reset', {})
    const answer = await polled
    expect(answer.status).toBe(200)
    expect(((await body(answer)).data as { id: string }[]).map((e) => e.id)).toEqual(['evt_lost'])
  }, 10_000)
})
