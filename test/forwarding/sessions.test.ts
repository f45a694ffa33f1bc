// Forwarding sessions through HTTP: opening (one secret per key), the long poll (answers at once when
// events wait, holds for the first one, woken when it commits, never repeats, a newer poll releases an older
// one), the heartbeat and expiry after 60 s idle (injected clock), workspace and mode isolation, the queue
// cap, ending a session, and both signatures verified by the stock libraries.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { body, bootstrapAccount, makeKey } from '../helpers'
import { makeTestKey, sampleLink, verifyBoth, webhooksEnv, type Env } from '../webhooks/_webhooks'

let env: Env

beforeAll(async () => {
  env = await webhooksEnv()
})
afterAll(() => env.cleanup())

async function open(json: Record<string, unknown> = {}, key = env.key) {
  const res = await env.request('/v1/webhooks/cli/sessions', { method: 'POST', json, key })
  const payload = await body(res)
  expect({ status: res.status, error: payload.error }).toEqual({ status: 201, error: undefined })
  return payload.data
}
const pollRes = (session: string, query = 'wait=0', key = env.key) => env.request(`/v1/webhooks/cli/events?session=${session}&${query}`, { key })
async function poll(session: string, query = 'wait=0', key = env.key) {
  const res = await pollRes(session, query, key)
  const payload = await body(res)
  expect({ status: res.status, error: payload.error }).toEqual({ status: 200, error: undefined })
  return payload.data as { id: string; type: string; body: string; headers: Record<string, string> }[]
}

describe('sessions', () => {
  test('opening answers id, secret, mode and timings; the secret is the same for every session of a key, another for another key', async () => {
    const a = await open({ deviceName: 'laptop', events: ['link.*'] })
    expect(a).toMatchObject({ mode: 'live', events: ['link.*'], deviceName: 'laptop', pollWaitSeconds: 5, idleTimeoutSeconds: 60 })
    expect(a.id).toMatch(/^cls_/)
    expect(a.secret).toMatch(/^whsec_/)
    expect(Date.parse(a.expiresAt) - Date.parse(a.createdAt)).toBe(60_000)
    const b = await open()
    expect(b.secret).toBe(a.secret)
    expect(b.events).toEqual(['*'])
    const other = await makeKey(env.rt, env.workspaceId)
    expect((await open({}, other.key)).secret).not.toBe(a.secret)
    const listed = (await body(await env.api('/webhooks/cli/sessions'))).data
    expect(listed.map((s: { id: string }) => s.id)).toEqual(expect.arrayContaining([a.id, b.id]))
    expect(JSON.stringify(listed)).not.toContain(a.secret)
    const bad = await env.request('/v1/webhooks/cli/sessions', { method: 'POST', key: env.key, json: { events: ['nope.event'] } })
    expect(bad.status).toBe(400)
  })

  test('a poll takes what waits, signed with the session secret; a second poll never repeats it', async () => {
    const s = await open({ events: ['link.created'] })
    await env.emit('link.created', sampleLink({ slug: 'first' }))
    await env.emit('link.deleted', sampleLink({ slug: 'not-asked-for' }))
    await env.run()
    const events = await poll(s.id)
    expect(events.map((e) => e.type)).toEqual(['link.created'])
    const parsed = (await verifyBoth({ method: 'POST', path: '/', headers: events[0]!.headers, body: events[0]!.body } as never, s.secret)) as {
      id: string
      data: { slug: string }
    }
    expect(parsed.data.slug).toBe('first')
    expect(events[0]!.headers['webhook-id']).toBe(events[0]!.id)
    expect(await poll(s.id)).toEqual([])
  })

  test('a waiting poll is answered the moment a matching event commits; without one it answers [] after wait', async () => {
    const s = await open()
    // A 25 s wait inside a test that times out after 5 s: only the wake-up can answer it in time.
    const waiting = poll(s.id, 'wait=25')
    await Bun.sleep(100)
    expect(env.rt.modules.forwarding.waiters.size).toBe(1)
    await env.emit('link.created', sampleLink({ slug: 'woken' }))
    await env.run()
    const events = await waiting
    expect(events.map((e) => JSON.parse(e.body).data.slug)).toEqual(['woken'])
    expect(env.rt.modules.forwarding.waiters.size).toBe(0)
    const quiet = await poll(s.id, 'wait=1')
    expect(quiet).toEqual([])
  })

  test('a newer poll of the same session releases the older one at once', async () => {
    const s = await open()
    const older = poll(s.id, 'wait=20')
    await Bun.sleep(50)
    await env.emit('link.created', sampleLink({ slug: 'for-the-newer' }))
    const newer = poll(s.id, 'wait=20')
    expect(await older).toEqual([])
    await env.run()
    expect((await newer).map((e) => JSON.parse(e.body).data.slug)).toEqual(['for-the-newer'])
  })

  test('each poll keeps the session 60 s more; idle for 60 s it is 410 session_expired; ended it is 404', async () => {
    const s = await open()
    env.clock.advance(50_000)
    await poll(s.id)
    env.clock.advance(50_000)
    await poll(s.id)
    env.clock.advance(60_000)
    const expired = await pollRes(s.id)
    expect({ status: expired.status, code: (await body(expired)).error.code }).toEqual({ status: 410, code: 'session_expired' })
    const listed = (await body(await env.api('/webhooks/cli/sessions'))).data
    expect(listed.map((x: { id: string }) => x.id)).not.toContain(s.id)
    const t = await open()
    expect((await body(await env.api(`/webhooks/cli/sessions/${t.id}`, { method: 'DELETE' }))).data).toEqual({ id: t.id, deleted: true })
    expect((await pollRes(t.id)).status).toBe(404)
    expect((await pollRes('cls_unknown')).status).toBe(404)
  })
})

describe('isolation and limits', () => {
  test('events reach only sessions of their workspace and mode, and only the key that opened a session may poll it', async () => {
    const live = await open()
    const testKey = await makeTestKey(env)
    const test = await open({}, testKey)
    const elsewhere = await bootstrapAccount(env.rt)
    const foreign = await open({}, elsewhere.apiKey.key)
    await env.emit('link.created', sampleLink({ slug: 'live-one' }), 'live')
    await env.emit('link.created', sampleLink({ slug: 'test-one' }), 'test')
    await env.run()
    expect((await poll(live.id)).map((e) => JSON.parse(e.body).data.slug)).toEqual(['live-one'])
    expect(await poll(foreign.id, 'wait=0', elsewhere.apiKey.key)).toEqual([])
    expect((await pollRes(test.id)).status).toBe(404)
    expect((await poll(test.id, 'wait=0', testKey)).map((e) => JSON.parse(e.body).data.slug)).toEqual(['test-one'])
  })

  test('the queue holds 500 events; the rest are counted as dropped', async () => {
    const s = await open({ events: ['webhook.test'] })
    for (let i = 0; i < 510; i++) await env.emit('webhook.test', { endpointId: `we_${i}`, message: 'm' })
    for (let i = 0; i < 10 && (await env.run()) > 0; i++) {
      /* dispatch in rounds of 200 */
    }
    const listed = (await body(await env.api('/webhooks/cli/sessions'))).data.find((x: { id: string }) => x.id === s.id)
    expect({ queued: listed.queued, dropped: listed.dropped }).toEqual({ queued: 500, dropped: 10 })
    const first = await poll(s.id, 'wait=0&limit=100')
    expect(first).toHaveLength(100)
    expect(JSON.parse(first[0]!.body).data.endpointId).toBe('we_0')
  })
})

describe('permissions and shutdown', () => {
  test('opening and ending need webhooks:write; listing and polling webhooks:read', async () => {
    const reader = (await makeKey(env.rt, env.workspaceId, 'webhooks:read')).key
    const refused = await env.request('/v1/webhooks/cli/sessions', { method: 'POST', json: {}, key: reader })
    expect({ status: refused.status, code: (await body(refused)).error.code }).toEqual({ status: 403, code: 'forbidden' })
    const s = await open()
    expect((await env.request('/v1/webhooks/cli/sessions', { key: reader })).status).toBe(200)
    expect((await env.request(`/v1/webhooks/cli/sessions/${s.id}`, { method: 'DELETE', key: reader })).status).toBe(403)
  })

  test('closing the runtime answers a held poll at once', async () => {
    const s = await open()
    const held = poll(s.id, 'wait=25')
    await Bun.sleep(50)
    await env.rt.modules.forwarding.close()
    expect(await held).toEqual([])
  })
})
