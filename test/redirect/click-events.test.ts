// When a click writes its link.clicked event: only where an active endpoint of the workspace and mode
// subscribes to it (events/interest.ts). The clicks, counters and rollups are written either way. Real
// endpoints through the API, a real receiver on 127.0.0.1 for the delivery.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ON_PG, setup, within1s, type TestEnv } from '../helpers'
import { LOOPBACK_ENV, receiver } from '../webhooks/_webhooks'
import { account, clickedEvents, counters, nextIp, UA, visit, type Api } from './_redirect'

let env: TestEnv
let api: Api
const hook = receiver()

beforeAll(async () => {
  env = await setup({ env: { LNK_TRUST_PROXY: '1', ...LOOPBACK_ENV } })
  api = await account(env)
})
afterAll(async () => {
  hook.stop()
  await env.cleanup()
})

async function endpoint(key: string, events: string[]) {
  const res = await env.request('/v1/webhooks', { method: 'POST', key, json: { url: hook.url(), events } })
  expect(res.status).toBe(201)
  return ((await res.json()) as { data: { id: string } }).data.id
}

async function clicks(linkSlug: string, n: number) {
  for (let i = 0; i < n; i++) expect((await visit(env, linkSlug, { ua: UA.chrome, ip: nextIp() })).status).toBe(302)
  await env.rt.modules.clicks.buffer.flush()
}

/**
 * PostgreSQL's interest answers yes while this node has not loaded the workspace's receivers yet (an event
 * never written is lost; webhooks/interest.ts) and loads them in the background: wait till it knows them.
 * SQLite reads them on the spot.
 */
async function knowsNoneListen(workspaceId: string) {
  if (ON_PG) expect(await within1s(async () => env.rt.interest.wants('link.clicked', workspaceId, 'live'), false)).toBe(false)
}

describe('link.clicked is written only where someone listens', () => {
  test('no endpoint in the workspace: clicks and counters are written, no event', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/quiet' })
    await knowsNoneListen(api.workspaceId)
    await clicks(link.slug, 3)
    expect(await counters(env, link.id)).toEqual({ total_clicks: 3, unique_clicks: 3 })
    expect(await clickedEvents(env, link.id)).toHaveLength(0)
  })

  test('an endpoint for other events, a test-mode endpoint and another workspace’s endpoint do not listen', async () => {
    const other = await account(env)
    await endpoint(api.key, ['link.created', 'conversion.*'])
    await endpoint(api.testKey, ['link.clicked'])
    await endpoint(other.key, ['*'])
    const link = await api.make({ destinationUrl: 'https://example.com/others' })
    await knowsNoneListen(api.workspaceId)
    await clicks(link.slug, 2)
    expect(await counters(env, link.id)).toEqual({ total_clicks: 2, unique_clicks: 2 })
    expect(await clickedEvents(env, link.id)).toHaveLength(0)
  })

  test('from the moment an endpoint subscribes (by name or pattern), every click writes its event; paused, none', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/heard' })
    await knowsNoneListen(api.workspaceId)
    await clicks(link.slug, 1)
    const id = await endpoint(api.key, ['link.*'])
    await clicks(link.slug, 4)
    const events = await clickedEvents(env, link.id)
    expect(events).toHaveLength(4)
    expect(events[0]!.data.link).toEqual({
      id: link.id,
      slug: link.slug,
      domain: link.domain,
      shortUrl: link.shortUrl,
      destinationUrl: 'https://example.com/heard',
    })

    expect((await env.request(`/v1/webhooks/${id}`, { method: 'PATCH', key: api.key, json: { isActive: false } })).status).toBe(200)
    await knowsNoneListen(api.workspaceId)
    await clicks(link.slug, 2)
    expect(await clickedEvents(env, link.id)).toHaveLength(4)
    expect(await counters(env, link.id)).toEqual({ total_clicks: 7, unique_clicks: 7 })
  })

  test('a subscribed endpoint receives the clicks as deliveries', async () => {
    const acct = await account(env)
    await endpoint(acct.key, ['link.clicked'])
    const link = await acct.make({ destinationUrl: 'https://example.com/delivered' })
    await clicks(link.slug, 2)
    await env.rt.worker.runDue()
    const received = hook.received.filter((r) => JSON.parse(r.body).data?.link?.id === link.id)
    expect(received.map((r) => JSON.parse(r.body).type)).toEqual(['link.clicked', 'link.clicked'])
    // A link without rules or variants sends every visit to its own destination, by no rule and no variant.
    const click = JSON.parse(received[0]!.body).data.click
    expect({ ruleId: click.ruleId, variantId: click.variantId, destinationUrl: click.destinationUrl }).toEqual({
      ruleId: null,
      variantId: null,
      destinationUrl: 'https://example.com/delivered',
    })
  })
})
