// Every rule of a beacon's body, and which clicks may convert: each refusal is a 4xx envelope (with the
// CORS header) naming what is wrong, and none of them writes a conversion or an event.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { TestEnv } from '../helpers'
import { account, beacon, clickOn, conversionsEnv, refusal, sql, trackedLink, UA, visit, written, type Api } from './_conversions'

let env: TestEnv
let api: Api
let clickId: string
beforeAll(async () => {
  env = await conversionsEnv()
  api = await account(env)
  clickId = await clickOn(env, await trackedLink(api))
  await env.rt.modules.clicks.buffer.flush()
})
afterAll(() => env.cleanup())

/** Sends the beacon and answers its refusal, checking that nothing was written. */
async function refused(json: unknown, o: Parameters<typeof beacon>[2] = {}) {
  const before = await written(env)
  const r = await refusal(await beacon(env, json, o))
  expect(await written(env)).toEqual(before)
  expect(r.cors).toBe('*')
  return r
}

describe('the body', () => {
  test('needs clickId and eventName, and says so', async () => {
    for (const json of [{}, { eventName: 'signup' }, { clickId: 'clk_00000000000000000000' }, { clickId: null, eventName: null }]) {
      const r = await refused(json)
      expect(r).toMatchObject({ status: 400, code: 'validation_failed' })
      expect(r.message).toContain('a conversion needs clickId')
      expect(r.message).toContain('and eventName')
      const missing = ['clickId', 'eventName'].filter((f) => (json as Record<string, unknown>)[f] == null)
      expect(r.paths).toEqual(missing)
    }
    // An empty body is an empty object: the same answer.
    const empty = await refused(null, { raw: '' })
    expect(empty).toMatchObject({ status: 400, code: 'validation_failed', paths: ['clickId', 'eventName'] })
  })

  test('must be a JSON object', async () => {
    for (const raw of ['[]', '"signup"', '42', 'null', 'true']) {
      const r = await refused(null, { raw })
      expect({ raw, status: r.status, code: r.code, paths: r.paths }).toEqual({ raw, status: 400, code: 'validation_failed', paths: [''] })
      expect(r.message).toContain('must be a JSON object')
    }
  })

  test('must be well-formed JSON, as application/json or as text/plain', async () => {
    for (const type of ['application/json', 'text/plain;charset=UTF-8']) {
      const r = await refused(null, { type, raw: '{"clickId": "clk_' })
      expect({ type, status: r.status, code: r.code }).toEqual({ type, status: 400, code: 'invalid_request' })
      expect(r.message).toContain('Malformed JSON')
    }
  })

  test('in another content type is refused with a message naming the two that work', async () => {
    for (const [type, raw] of [
      ['application/x-www-form-urlencoded', `clickId=${clickId}&eventName=signup`],
      ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="clickId"\r\n\r\n${clickId}\r\n--x--\r\n`],
      ['application/octet-stream', JSON.stringify({ clickId, eventName: 'signup' })],
    ]) {
      const r = await refused(null, { type, raw })
      expect({ type, status: r.status, code: r.code }).toEqual({ type, status: 400, code: 'invalid_request' })
      expect(r.message).toContain('application/json or text/plain')
    }
  })

  test('refuses fields that are not part of a conversion', async () => {
    const r = await refused({ clickId, eventName: 'signup', amount: 5, clickID: 'x' })
    expect(r).toMatchObject({ status: 400, code: 'validation_failed', paths: ['amount', 'clickID'] })
    expect(r.message).toContain('the fields are clickId, eventName, value, currency, metadata')
  })
})

describe('each field', () => {
  const cases: [string, Record<string, unknown>, string, string][] = [
    ['clickId not an id', { clickId: 'abc' }, 'clickId', 'clk_ followed by 20 letters and digits'],
    ['clickId a number', { clickId: 42 }, 'clickId', 'clk_ followed by 20 letters and digits'],
    ['clickId one character short', { clickId: 'clk_0000000000000000000' }, 'clickId', 'clk_ followed by 20'],
    ['clickId with a bad character', { clickId: 'clk_000000000000000000-0' }, 'clickId', 'clk_ followed by 20'],
    ['eventName empty', { eventName: '' }, 'eventName', 'must not be empty or blank'],
    ['eventName blank', { eventName: '   ' }, 'eventName', 'must not be empty or blank'],
    ['eventName of 65 characters', { eventName: 'x'.repeat(65) }, 'eventName', 'at most 64 characters (it has 65)'],
    ['eventName of 65 emoji', { eventName: '🎉'.repeat(65) }, 'eventName', 'at most 64 characters (it has 65)'],
    ['eventName with a line break', { eventName: 'sign\nup' }, 'eventName', 'control characters'],
    ['eventName with a tab', { eventName: 'sign\tup' }, 'eventName', 'control characters'],
    ['eventName a number', { eventName: 7 }, 'eventName', 'must be a string of 1-64 characters'],
    ['value negative', { value: -0.01, currency: 'EUR' }, 'value', 'must be 0 or more'],
    ['value a string', { value: '19.99', currency: 'EUR' }, 'value', 'must be a number'],
    ['value too large', { value: 1_000_000_000_001, currency: 'EUR' }, 'value', 'at most 1000000000000'],
    ['value without currency', { value: 10 }, 'currency', 'is required with value'],
    ['currency without value', { currency: 'EUR' }, 'value', 'is required with currency'],
    ['currency in lower case', { value: 1, currency: 'usd' }, 'currency', 'must be in upper case: "USD"'],
    ['currency not ISO 4217', { value: 1, currency: 'ABC' }, 'currency', '"ABC" is not a current ISO 4217 currency code'],
    ['currency XXX (no currency)', { value: 1, currency: 'XXX' }, 'currency', 'not a current ISO 4217'],
    ['currency XTS (testing)', { value: 1, currency: 'XTS' }, 'currency', 'not a current ISO 4217'],
    ['currency XAU (gold)', { value: 1, currency: 'XAU' }, 'currency', 'not a current ISO 4217'],
    ['currency HRK (withdrawn)', { value: 1, currency: 'HRK' }, 'currency', 'not a current ISO 4217'],
    ['currency a number', { value: 1, currency: 978 }, 'currency', 'ISO 4217 code'],
    ['currency of four letters', { value: 1, currency: 'EURO' }, 'currency', 'not a current ISO 4217'],
    ['metadata an array', { metadata: ['a'] }, 'metadata', 'must be a JSON object'],
    ['metadata a string', { metadata: 'plan=pro' }, 'metadata', 'must be a JSON object'],
    ['metadata over 4 KiB', { metadata: { pad: 'm'.repeat(4097 - '{"pad":""}'.length) } }, 'metadata', 'at most 4096 bytes as JSON (it has 4097)'],
    ['metadata over 4 KiB in UTF-8', { metadata: { pad: 'é'.repeat(2044) } }, 'metadata', 'it has 4098'],
  ]
  for (const [name, fields, path, message] of cases) {
    test(`${name}: 400 validation_failed at ${path}`, async () => {
      const r = await refused({ clickId, eventName: 'signup', ...fields })
      expect({ status: r.status, code: r.code, paths: r.paths }).toEqual({ status: 400, code: 'validation_failed', paths: [path] })
      expect(r.message).toContain(message)
    })
  }

  test('every problem is listed at once', async () => {
    const r = await refused({ clickId: 'nope', eventName: '', value: -1, currency: 'eur', metadata: [] })
    expect(r.paths).toEqual(['clickId', 'eventName', 'value', 'currency', 'metadata'])
  })
})

describe('the click', () => {
  test('an unknown click id is 404 not_found', async () => {
    // Well-formed, minted "now" (so lnk also writes its waiting clicks and looks twice), never handed out.
    const made = `clk_${clickId.slice(4, 13)}${'0'.repeat(11)}`
    for (const id of [made, 'clk_00000000000000000000', 'clk_zzzzzzzzzzzzzzzzzzzz']) {
      const r = await refused({ clickId: id, eventName: 'signup' })
      expect({ id, status: r.status, code: r.code }).toEqual({ id, status: 404, code: 'not_found' })
      expect(r.message).toContain(`Click ${id} not found`)
    }
  })

  test("a bot's hit is not a click: its id is 404 like an unknown one", async () => {
    const link = await trackedLink(api)
    const res = await visit(env, link.slug, { ua: 'curl/8.5.0', ip: '203.0.113.200' })
    expect(res.status).toBe(302)
    expect(new URL(res.headers.get('location')!).searchParams.has('lnk_cid')).toBe(false)
    await env.rt.modules.clicks.buffer.flush()
    const [hit] = await sql<{ id: string; is_bot: number }>(env, 'SELECT id, is_bot FROM clicks WHERE link_id = ?', link.id)
    expect(hit).toMatchObject({ is_bot: 1 })
    const r = await refused({ clickId: hit!.id, eventName: 'signup' })
    expect(r).toMatchObject({ status: 404, code: 'not_found' })
  })

  test('a test link records no click and hands out no id', async () => {
    const link = await trackedLink(api, {}, api.testKey)
    expect(link.isTest).toBe(true)
    const res = await visit(env, link.slug, { ua: UA.chrome })
    expect(res.status).toBe(200)
    expect(await res.text()).not.toContain('lnk_cid')
    await env.rt.modules.clicks.buffer.flush()
    expect(await sql(env, 'SELECT id FROM clicks WHERE link_id = ?', link.id)).toEqual([])
  })

  test('a click of a link without conversionTracking is 400 validation_failed at clickId', async () => {
    const link = await api.make({ destinationUrl: 'https://shop.example/plain' })
    const res = await visit(env, link.slug, { ua: UA.chrome, ip: '203.0.113.201' })
    expect(new URL(res.headers.get('location')!).searchParams.has('lnk_cid')).toBe(false)
    await env.rt.modules.clicks.buffer.flush()
    const [click] = await sql<{ id: string }>(env, 'SELECT id FROM clicks WHERE link_id = ?', link.id)
    const r = await refused({ clickId: click!.id, eventName: 'signup' })
    expect(r).toMatchObject({ status: 400, code: 'validation_failed', paths: ['clickId'] })
    expect(r.message).toContain('does not track conversions')
  })

  test('turning conversionTracking off stops the clicks handed out before from converting; on again, they convert', async () => {
    const link = await trackedLink(api)
    const id = await clickOn(env, link)
    await env.rt.modules.clicks.buffer.flush()
    expect((await api.patch(link.id, { conversionTracking: false })).status).toBe(200)
    expect(await refused({ clickId: id, eventName: 'signup' })).toMatchObject({ status: 400, code: 'validation_failed', paths: ['clickId'] })
    expect((await api.patch(link.id, { conversionTracking: true })).status).toBe(200)
    expect((await beacon(env, { clickId: id, eventName: 'signup' })).status).toBe(201)
  })

  test('the clicks of a deleted link are gone with it (404), and so are its conversions', async () => {
    const link = await trackedLink(api)
    const id = await clickOn(env, link)
    expect((await beacon(env, { clickId: id, eventName: 'before' })).status).toBe(201)
    expect(await sql(env, 'SELECT count(*) AS n FROM conversions WHERE link_id = ?', link.id)).toEqual([{ n: 1 }])
    expect((await api.del(link.id)).status).toBe(200)
    expect(await sql(env, 'SELECT count(*) AS n FROM conversions WHERE link_id = ?', link.id)).toEqual([{ n: 0 }])
    expect(await refused({ clickId: id, eventName: 'after' })).toMatchObject({ status: 404, code: 'not_found' })
  })

  test('the body is checked before the click is looked up', async () => {
    const r = await refused({ clickId: 'clk_zzzzzzzzzzzzzzzzzzzz', eventName: 'signup', value: -1, currency: 'EUR' })
    expect(r).toMatchObject({ status: 400, code: 'validation_failed', paths: ['value'] })
  })
})
