// The conversion beacon on PostgreSQL: a beacon naming a real click (the lnk_cid of a real redirect) is
// attributed to the click's link and workspace with its conversion.created event, also when it overtakes the
// click's flush; a resent beacon is counted once, also when many arrive at once; an unknown click is 404; a
// link without conversionTracking is refused. The click may be made on another node than the beacon lands on.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { body, setupPg, type PgTestEnv, type TestEnv } from '../helpers'
import { CONVERSIONS_PER_MINUTE } from '../../src/modules/conversions/routes'
import { account, beacon, clickOn, refusal, trackedLink, type Api } from './_conversions'

const ENV = { LNK_TRUST_PROXY: '1' }
let a: PgTestEnv
let b: PgTestEnv
let api: Api
beforeAll(async () => {
  a = await setupPg({ env: ENV })
  b = await setupPg({ env: ENV, database: a.database })
  api = await account(a as unknown as TestEnv)
}, 30_000)
afterAll(async () => {
  await b?.cleanup()
  await a?.cleanup()
})

/** The view through which the shared helpers (written for setup()) see a PostgreSQL node. */
const node = (env: PgTestEnv) => env as unknown as TestEnv

async function stored(env: PgTestEnv, sql: string, ...params: unknown[]) {
  const store = env.rt.store
  if (store.engine !== 'pg') throw new Error('expected PostgreSQL')
  return (await store.sql.unsafe(sql, params)) as Record<string, any>[]
}

async function send(env: PgTestEnv, json: Record<string, unknown>) {
  const res = await beacon(node(env), json)
  return { status: res.status, data: (await body(res)).data }
}

describe('a beacon on PostgreSQL', () => {
  test('is attributed to the click: stored against its link and workspace, with its event', async () => {
    const link = await trackedLink(api)
    const clickId = await clickOn(node(a), link)
    await a.rt.modules.clicks.buffer.flush()
    const first = await send(b, { clickId, eventName: 'purchase', value: 19.99, currency: 'EUR', metadata: { orderId: 'A-1' } })
    expect(first.status).toBe(201)
    expect(first.data).toMatchObject({ clickId, eventName: 'purchase', value: 19.99, currency: 'EUR', metadata: { orderId: 'A-1' }, duplicate: false })
    const rows = await stored(a, 'SELECT click_id, link_id, workspace_id, event_name, value, currency FROM conversions WHERE id = $1', first.data.id)
    expect(rows).toEqual([{ click_id: clickId, link_id: link.id, workspace_id: api.workspaceId, event_name: 'purchase', value: 19.99, currency: 'EUR' }])
    const events = await stored(a, "SELECT data FROM outbox WHERE type = 'conversion.created' AND workspace_id = $1", api.workspaceId)
    expect(events.map((e) => (typeof e.data === 'string' ? JSON.parse(e.data) : e.data).conversion.id)).toContain(first.data.id)

    // Resent (from the other node): the same conversion, nothing written.
    const again = await send(a, { clickId, eventName: 'purchase', value: 19.99, currency: 'EUR', metadata: { orderId: 'A-1' } })
    expect(again).toEqual({ status: 200, data: { ...first.data, duplicate: true } })
    expect(await stored(a, 'SELECT id FROM conversions WHERE click_id = $1', clickId)).toHaveLength(1)
  })

  test("that overtakes its click's flush is still attributed (the node flushes its clicks first)", async () => {
    const link = await trackedLink(api)
    const clickId = await clickOn(node(a), link)
    const res = await send(a, { clickId, eventName: 'signup' })
    expect(res.status).toBe(201)
    expect((await stored(a, 'SELECT link_id FROM conversions WHERE click_id = $1', clickId)).map((r) => r.link_id)).toEqual([link.id])
  })

  test('many identical beacons at once on two nodes record one conversion', async () => {
    const clickId = await clickOn(node(a), await trackedLink(api))
    await a.rt.modules.clicks.buffer.flush()
    const json = { clickId, eventName: 'burst', value: 1, currency: 'CHF' }
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i % 2 ? a : b, json)))
    expect(answers.filter((x) => x.status === 201)).toHaveLength(1)
    expect(answers.filter((x) => x.status === 200)).toHaveLength(19)
    expect(await stored(a, 'SELECT id FROM conversions WHERE click_id = $1', clickId)).toHaveLength(1)
  })

  test('naming an unknown click is 404; a click of a link without tracking is refused', async () => {
    const unknown = await beacon(node(a), { clickId: 'clk_00000000000000000000', eventName: 'purchase' })
    expect(unknown.status).toBe(404)
    const untracked = await clickOnUntracked()
    const refused = await refusal(await beacon(node(a), { clickId: untracked, eventName: 'purchase' }))
    expect(refused.paths).toEqual(['clickId'])
  })

  test('the per-address beacon limit holds across both nodes', async () => {
    const ip = '198.51.100.77'
    const statuses: number[] = []
    // An unknown click (404) still counts: the limit is taken before the beacon is read.
    for (let i = 0; i < CONVERSIONS_PER_MINUTE; i++)
      statuses.push((await beacon(node(i % 2 ? a : b), { clickId: 'clk_00000000000000000000', eventName: 'x' }, { ip })).status)
    expect(statuses.filter((s) => s !== 404)).toEqual([])
    for (const env of [a, b]) {
      const refused = await beacon(node(env), { clickId: 'clk_00000000000000000000', eventName: 'x' }, { ip })
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    }
  })
})

/** A click id on a link that hands none out is impossible to get from a redirect: the tracked link is switched off after its click. */
async function clickOnUntracked(): Promise<string> {
  const link = await trackedLink(api)
  const clickId = await clickOn(node(a), link)
  await a.rt.modules.clicks.buffer.flush()
  const res = await a.request(`/v1/links/${link.id}`, { method: 'PATCH', key: api.key, json: { conversionTracking: false } })
  expect(res.status).toBe(200)
  return clickId
}
