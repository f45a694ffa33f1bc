// POST /v1/conversions records a conversion for a real click id (lnk_cid from a real redirect): sent as
// application/json or as text/plain (sendBeacon), attributed to the click's link and workspace, with its
// conversion.created event written in the same transaction, and documented as a public operation.
import { Value } from '@sinclair/typebox/value'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { EVENT_CATALOGUE } from '../../src/modules/webhooks/model'
import { body, ON_PG, type TestEnv } from '../helpers'
import {
  account,
  beacon,
  clickOn,
  conversionEvents,
  conversionRows,
  conversionsEnv,
  CONVERSION_ID,
  ISO,
  refusal,
  sql,
  trackedLink,
  written,
  type Api,
} from './_conversions'

let env: TestEnv
let api: Api
beforeAll(async () => {
  env = await conversionsEnv()
  api = await account(env)
})
afterAll(() => env.cleanup())

const eventSchema = EVENT_CATALOGUE.find((e) => e.type === 'conversion.created')!.data

describe('an accepted beacon', () => {
  test('as application/json: 201 with the conversion, stored against the click, its link and workspace', async () => {
    const link = await trackedLink(api)
    const clickId = await clickOn(env, link)
    await env.rt.modules.clicks.buffer.flush()
    const res = await beacon(
      env,
      { clickId, eventName: 'purchase', value: 19.99, currency: 'EUR', metadata: { orderId: 'A-1001', items: [1, 2] } },
      { type: 'application/json' },
    )
    expect(res.status).toBe(201)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    const { data } = await body(res)
    expect(data).toEqual({
      id: expect.stringMatching(CONVERSION_ID),
      clickId,
      eventName: 'purchase',
      value: 19.99,
      currency: 'EUR',
      metadata: { orderId: 'A-1001', items: [1, 2] },
      createdAt: expect.stringMatching(ISO),
      duplicate: false,
    })
    // The public answer names neither the link nor the workspace.
    expect(Object.keys(data).sort()).toEqual(['clickId', 'createdAt', 'currency', 'duplicate', 'eventName', 'id', 'metadata', 'value'])
    const row = (await conversionRows(env)).find((r) => r.id === data.id)!
    expect(row).toMatchObject({ click_id: clickId, link_id: link.id, workspace_id: api.workspaceId, event_name: 'purchase', value: 19.99, currency: 'EUR' })
    expect(JSON.parse(row.metadata!)).toEqual({ orderId: 'A-1001', items: [1, 2] })
    expect(new Date(row.created_at).toISOString()).toBe(data.createdAt)
  })

  test('as text/plain holding JSON (navigator.sendBeacon with a string), with or without a charset, and with no Content-Type', async () => {
    const link = await trackedLink(api)
    const clickId = await clickOn(env, link)
    await env.rt.modules.clicks.buffer.flush()
    for (const [i, type] of ['text/plain;charset=UTF-8', 'text/plain', 'Text/Plain; charset=utf-8', null].entries()) {
      const payload = JSON.stringify({ clickId, eventName: `step-${i}` })
      // A Uint8Array body carries no Content-Type of its own.
      const res = await beacon(env, null, { type, raw: new TextEncoder().encode(payload) })
      expect({ type, status: res.status }).toEqual({ type, status: 201 })
      expect((await body(res)).data).toMatchObject({ clickId, eventName: `step-${i}`, value: null, currency: null, metadata: null })
    }
    expect((await conversionRows(env)).filter((r) => r.click_id === clickId).map((r) => r.event_name)).toEqual(['step-0', 'step-1', 'step-2', 'step-3'])
  })

  test('the least a conversion needs is clickId and eventName; the rest is stored as SQL NULL', async () => {
    const link = await trackedLink(api)
    const clickId = await clickOn(env, link)
    const res = await beacon(env, { clickId, eventName: 'signup' })
    expect(res.status).toBe(201)
    const { data } = await body(res)
    expect(await sql(env, 'SELECT value, currency, metadata FROM conversions WHERE id = ?', data.id)).toEqual([{ value: null, currency: null, metadata: null }])
    // null in an optional field is the same as leaving it out.
    const again = await beacon(env, { clickId, eventName: 'signup', value: null, currency: null, metadata: null })
    expect(again.status).toBe(200)
    expect((await body(again)).data).toMatchObject({ id: data.id, duplicate: true })
  })

  test('value 0, any current ISO 4217 code, a 64-character event name (in code points) and 4 KiB of metadata are accepted', async () => {
    const link = await trackedLink(api)
    const clickId = await clickOn(env, link)
    const cases = [
      { eventName: 'free-trial', value: 0, currency: 'USD' },
      { eventName: 'yen', value: 1500, currency: 'JPY' },
      { eventName: 'guilder', value: 10, currency: 'XCG' },
      { eventName: 'zig', value: 10, currency: 'ZWG' },
      { eventName: 'é'.repeat(64) },
      { eventName: '🎉'.repeat(64) },
      { eventName: 'x'.repeat(64) },
      { eventName: 'big', value: 1_000_000_000_000, currency: 'EUR' },
      // {"pad":"…"} of exactly 4096 bytes.
      { eventName: 'meta', metadata: { pad: 'm'.repeat(4096 - '{"pad":""}'.length) } },
    ]
    for (const c of cases) {
      const res = await beacon(env, { clickId, ...c })
      expect({ eventName: c.eventName, status: res.status }).toEqual({ eventName: c.eventName, status: 201 })
    }
  })

  test('a beacon sent before its click was written (clicks wait in memory) still finds the click', async () => {
    const link = await trackedLink(api)
    const clickId = await clickOn(env, link)
    expect(env.rt.modules.clicks.buffer.size).toBeGreaterThan(0)
    expect(await sql(env, 'SELECT id FROM clicks WHERE id = ?', clickId)).toEqual([])
    const res = await beacon(env, { clickId, eventName: 'instant' })
    expect(res.status).toBe(201)
    expect(await sql(env, 'SELECT id, is_bot FROM clicks WHERE id = ?', clickId)).toEqual([{ id: clickId, is_bot: 0 }])
  })

  test('a click of a link paused or archived since still converts', async () => {
    const link = await trackedLink(api)
    const clickId = await clickOn(env, link)
    expect((await api.patch(link.id, { isActive: false, isArchived: true })).status).toBe(200)
    const res = await beacon(env, { clickId, eventName: 'late' })
    expect(res.status).toBe(201)
  })
})

describe('attribution and the event', () => {
  test("each conversion belongs to its click's link and workspace, and writes one conversion.created", async () => {
    const other = await account(env)
    const mine = await trackedLink(api, { slug: `mine-${Date.now()}` })
    const theirs = await trackedLink(other, { slug: `theirs-${Date.now()}`, destinationUrl: 'https://other.example/landing' })
    const myClick = await clickOn(env, mine)
    const theirClick = await clickOn(env, theirs)
    await env.rt.modules.clicks.buffer.flush()
    const before = (await conversionEvents(env)).length
    const a = (await body(await beacon(env, { clickId: myClick, eventName: 'signup' }))).data
    const b = (await body(await beacon(env, { clickId: theirClick, eventName: 'purchase', value: 5, currency: 'GBP', metadata: { sku: 'X' } }))).data

    const rows = Object.fromEntries((await conversionRows(env)).map((r) => [r.id, r]))
    expect(rows[a.id]).toMatchObject({ link_id: mine.id, workspace_id: api.workspaceId, click_id: myClick })
    expect(rows[b.id]).toMatchObject({ link_id: theirs.id, workspace_id: other.workspaceId, click_id: theirClick })

    const events = (await conversionEvents(env)).slice(before)
    expect(events).toHaveLength(2)
    expect(events.map((e) => [e.workspace_id, e.mode])).toEqual([
      [api.workspaceId, 'live'],
      [other.workspaceId, 'live'],
    ])
    expect(events[1]!.data).toEqual({
      conversion: { id: b.id, clickId: theirClick, eventName: 'purchase', value: 5, currency: 'GBP', metadata: { sku: 'X' }, timestamp: b.createdAt },
      link: { id: theirs.id, slug: theirs.slug, domain: theirs.domain, shortUrl: theirs.shortUrl, destinationUrl: 'https://other.example/landing' },
      workspaceId: other.workspaceId,
    })
    expect(events[0]!.data.conversion).toEqual({
      id: a.id,
      clickId: myClick,
      eventName: 'signup',
      value: null,
      currency: null,
      metadata: null,
      timestamp: a.createdAt,
    })
    // Every event's data matches the catalogue's JSON Schema (what /webhooks/types will publish).
    for (const e of events) expect([...Value.Errors(eventSchema, e.data)].map((x) => `${x.path}: ${x.message}`)).toEqual([])
    expect(events.every((e) => e.created_at === rows[e.data.conversion.id]!.created_at)).toBe(true)
  })

  test("the event is written in the conversion's transaction: when either write fails, neither is kept", async () => {
    const link = await trackedLink(api)
    const clickId = await clickOn(env, link)
    await env.rt.modules.clicks.buffer.flush()
    const before = await written(env)

    let removeTrigger = await failingTrigger('fail_event', { before: true, table: 'outbox', when: "NEW.type = 'conversion.created'" }, 'outbox unavailable')
    try {
      const res = await beacon(env, { clickId, eventName: 'atomic' })
      expect(await refusal(res)).toMatchObject({ status: 500, code: 'internal_error', cors: '*' })
    } finally {
      await removeTrigger()
    }
    expect(await written(env)).toEqual(before)

    removeTrigger = await failingTrigger('fail_conversion', { before: false, table: 'conversions' }, 'disk full')
    try {
      expect((await beacon(env, { clickId, eventName: 'atomic' })).status).toBe(500)
    } finally {
      await removeTrigger()
    }
    expect(await written(env)).toEqual(before)

    // Nothing half-written was left to count as a duplicate: the same beacon now records normally.
    const res = await beacon(env, { clickId, eventName: 'atomic' })
    expect(res.status).toBe(201)
    expect(await written(env)).toEqual({ conversions: before.conversions + 1, events: before.events + 1 })
  })
})

/**
 * Raw on purpose: a trigger that makes an insert into `table` fail inside the database; answers what removes
 * it. SQLite: a temporary one on the app's connection; PostgreSQL: a function and its trigger.
 */
async function failingTrigger(name: string, on: { before: boolean; table: string; when?: string }, message: string): Promise<() => Promise<void>> {
  const event = `${on.before ? 'BEFORE' : 'AFTER'} INSERT ON ${on.table}`
  const when = on.when ? ` WHEN (${on.when})` : ''
  if (!ON_PG) {
    await sql(env, `CREATE TEMP TRIGGER ${name} ${event}${when} BEGIN SELECT RAISE(ABORT, '${message}'); END`)
    return async () => void (await sql(env, `DROP TRIGGER ${name}`))
  }
  await sql(env, `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '${message}'; END $$`)
  await sql(env, `CREATE TRIGGER ${name} ${event} FOR EACH ROW${when} EXECUTE FUNCTION ${name}()`)
  return async () => void (await sql(env, `DROP FUNCTION ${name}() CASCADE`))
}

describe('OpenAPI', () => {
  test('documents POST /v1/conversions as a public operation with its body and answers, and leaves the preflight out', async () => {
    const doc = await body(await env.request('/v1/openapi.json'))
    const item = doc.paths['/conversions']
    expect(Object.keys(item)).toEqual(['post'])
    const op = item.post
    expect(op.security).toEqual([])
    expect(op.tags).toEqual(['Conversions'])
    expect(op.description).toContain('needs no key')
    // The body schema, stated in place or referred to in components.schemas.
    const stated = op.requestBody.content['application/json'].schema
    const schema = stated.$ref ? doc.components.schemas[stated.$ref.split('/').pop()] : stated
    expect(schema.required).toEqual(['clickId', 'eventName'])
    expect(Object.keys(schema.properties).sort()).toEqual(['clickId', 'currency', 'eventName', 'metadata', 'value'])
    expect(schema.properties.eventName).toMatchObject({ minLength: 1, maxLength: 64 })
    expect(schema.properties.value).toMatchObject({ type: 'number', minimum: 0 })
    expect(Object.keys(op.responses).sort()).toEqual(['200', '201', '400', '404', '405', '413', '429', 'default'])
    expect(doc.components.schemas.Conversion.properties.duplicate.type).toBe('boolean')
  })
})
