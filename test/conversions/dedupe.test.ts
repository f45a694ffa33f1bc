// A resent beacon (same clickId, eventName, value, currency and metadata) less than 24 h after the first is
// counted once: 200 with the first conversion and duplicate true, no row, no event. From 24 h on it counts
// again. Time is a ManualClock.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { body, type TestEnv } from '../helpers'
import { account, beacon, clickOn, conversionsEnv, trackedLink, written, type Api } from './_conversions'

const HOUR = 60 * 60 * 1000
const clock = new ManualClock(Date.UTC(2026, 2, 1, 9, 0, 0))
let env: TestEnv
let api: Api
beforeAll(async () => {
  env = await conversionsEnv({ clock })
  api = await account(env)
})
afterAll(() => env.cleanup())

async function send(json: Record<string, unknown>, type?: string) {
  const res = await beacon(env, json, { type })
  return { status: res.status, data: (await body(res)).data }
}

describe('a resent beacon', () => {
  test('is counted once: 201, then 200 with the same conversion and duplicate true, nothing written', async () => {
    const clickId = await clickOn(env, await trackedLink(api))
    const beaconBody = { clickId, eventName: 'purchase', value: 49.5, currency: 'EUR', metadata: { orderId: 'A-1', lines: [{ sku: 'S', qty: 2 }] } }
    const first = await send(beaconBody)
    expect(first.status).toBe(201)
    expect(first.data.duplicate).toBe(false)
    const before = await written(env)

    clock.advance(HOUR)
    // The same beacon, again as text/plain, then as application/json, with its metadata keys in another order.
    const again = await send(beaconBody)
    const asJson = await send(beaconBody, 'application/json')
    const reordered = await send({ metadata: { lines: [{ qty: 2, sku: 'S' }], orderId: 'A-1' }, currency: 'EUR', value: 49.5, eventName: 'purchase', clickId })
    for (const dup of [again, asJson, reordered]) {
      expect(dup.status).toBe(200)
      expect(dup.data).toEqual({ ...first.data, duplicate: true })
    }
    expect(await written(env)).toEqual(before)
  })

  test('that differs in any of the five fields is another conversion', async () => {
    const link = await trackedLink(api)
    const clickId = await clickOn(env, link)
    const otherClick = await clickOn(env, link)
    const base = { clickId, eventName: 'purchase', value: 10, currency: 'EUR', metadata: { orderId: 'B-1' } }
    expect((await send(base)).status).toBe(201)
    const variants = [
      { ...base, clickId: otherClick },
      { ...base, eventName: 'refund' },
      { ...base, value: 10.01 },
      { ...base, currency: 'USD' },
      { ...base, metadata: { orderId: 'B-2' } },
      { ...base, metadata: { orderId: 'B-1', note: 'x' } },
      { clickId, eventName: 'purchase' },
      { clickId, eventName: 'purchase', metadata: { orderId: 'B-1' } },
    ]
    const ids = new Set<string>()
    for (const v of variants) {
      const r = await send(v)
      expect({ v, status: r.status }).toEqual({ v, status: 201 })
      ids.add(r.data.id)
    }
    expect(ids.size).toBe(variants.length)
    // Written differently, the same JSON: 10 and 1e1 are one number, whitespace and key order do not count.
    expect(
      (await beacon(env, null, { raw: `{"clickId":"${clickId}","eventName":"purchase","value":10,"currency":"EUR","metadata":{"orderId":"B-1","n":1}}` }))
        .status,
    ).toBe(201)
    expect(
      (
        await beacon(env, null, {
          raw: `{ "metadata": { "n": 1.0, "orderId": "B-1" }, "value": 1e1, "currency": "EUR", "eventName": "purchase", "clickId": "${clickId}" }`,
        })
      ).status,
    ).toBe(200)
  })

  test('counts again from 24 h after the first, and its resends are then counted against the second', async () => {
    const clickId = await clickOn(env, await trackedLink(api))
    await env.rt.modules.clicks.buffer.flush()
    const beaconBody = { clickId, eventName: 'daily' }
    const first = await send(beaconBody)
    expect(first.status).toBe(201)

    clock.advance(24 * HOUR - 1)
    expect(await send(beaconBody)).toEqual({ status: 200, data: { ...first.data, duplicate: true } })

    const before = await written(env)
    clock.advance(1)
    const second = await send(beaconBody)
    expect(second.status).toBe(201)
    expect(second.data.id).not.toBe(first.data.id)
    expect(Date.parse(second.data.createdAt) - Date.parse(first.data.createdAt)).toBe(24 * HOUR)
    expect(await written(env)).toEqual({ conversions: before.conversions + 1, events: before.events + 1 })

    clock.advance(23 * HOUR)
    expect(await send(beaconBody)).toEqual({ status: 200, data: { ...second.data, duplicate: true } })
  })

  test('many identical beacons at once record one conversion and one event', async () => {
    const clickId = await clickOn(env, await trackedLink(api))
    await env.rt.modules.clicks.buffer.flush()
    const before = await written(env)
    const answers = await Promise.all(Array.from({ length: 20 }, () => send({ clickId, eventName: 'burst', value: 1, currency: 'CHF' })))
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1)
    expect(answers.filter((a) => a.status === 200)).toHaveLength(19)
    expect(new Set(answers.map((a) => a.data.id)).size).toBe(1)
    expect(await written(env)).toEqual({ conversions: before.conversions + 1, events: before.events + 1 })
  })
})
