// What makes POST /v1/conversions usable from any site and safe to leave open: CORS (the preflight and the
// header on every answer), the 16 KiB body limit, and the per-address rate limit.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { addressKey, CONVERSION_BODY_LIMIT, CONVERSIONS_PER_MINUTE } from '../../src/modules/conversions/routes'
import { body, type TestEnv } from '../helpers'
import { startLnk, type Lnk } from '../redirect/_server'
import { account, BEACON_URL, beacon, clickOn, conversionsEnv, refusal, trackedLink, written, type Api } from './_conversions'

const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 0))
let env: TestEnv
let api: Api
let clickId: string
beforeAll(async () => {
  env = await conversionsEnv({ clock })
  api = await account(env)
  clickId = await clickOn(env, await trackedLink(api))
  await env.rt.modules.clicks.buffer.flush()
})
afterAll(() => env.cleanup())

const preflight = (headers: Record<string, string> = {}) =>
  env.app.handle(
    new Request(BEACON_URL, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type', ...headers },
    }),
  )

describe('CORS', () => {
  test('the preflight answers 204 with no body, for any origin', async () => {
    for (const origin of ['https://shop.example', 'http://localhost:3000', 'null']) {
      const res = await preflight({ origin })
      expect(res.status).toBe(204)
      expect(await res.text()).toBe('')
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      expect(res.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS')
      expect(res.headers.get('access-control-allow-headers')).toBe('content-type')
      expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThanOrEqual(600)
      expect(res.headers.get('x-request-id')).toBeTruthy()
    }
  })

  test('every answer to POST carries Access-Control-Allow-Origin: *, errors included', async () => {
    const answers = [
      await beacon(env, { clickId, eventName: 'cors' }), // 201
      await beacon(env, { clickId, eventName: 'cors' }), // 200, duplicate
      await beacon(env, { eventName: 'cors' }), // 400 validation_failed
      await beacon(env, null, { raw: '{' }), // 400 invalid_request
      await beacon(env, { clickId: 'clk_zzzzzzzzzzzzzzzzzzzz', eventName: 'cors' }), // 404
      await beacon(env, null, { raw: 'x'.repeat(CONVERSION_BODY_LIMIT + 1) }), // 413
      await env.app.handle(new Request(BEACON_URL, { headers: { origin: 'https://shop.example' } })), // 405
    ]
    expect(answers.map((r) => r.status)).toEqual([201, 200, 400, 400, 404, 413, 405])
    for (const res of answers) {
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      expect(res.headers.get('access-control-expose-headers')).toContain('retry-after')
    }
    expect(answers[6]!.headers.get('allow')).toBe('OPTIONS, POST')
  })

  test('other routes get no CORS headers', async () => {
    const res = await env.request('/v1/me', { headers: { origin: 'https://shop.example' } })
    expect(res.status).toBe(401)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('16 KiB body limit', () => {
  /** A valid beacon padded with JSON whitespace to exactly `size` bytes. */
  const padded = (eventName: string, size: number) => {
    const json = JSON.stringify({ clickId, eventName })
    return json + ' '.repeat(size - json.length)
  }

  test('a text/plain body of exactly 16384 bytes is read; one byte more is 413 payload_too_large', async () => {
    expect((await beacon(env, null, { raw: padded('at-limit', CONVERSION_BODY_LIMIT) })).status).toBe(201)
    const before = await written(env)
    const r = await refusal(await beacon(env, null, { raw: padded('over-limit', CONVERSION_BODY_LIMIT + 1) }))
    expect(r).toMatchObject({ status: 413, code: 'payload_too_large', cors: '*' })
    expect(r.message).toContain('16384 bytes')
    expect(await written(env)).toEqual(before)
  })

  test('an application/json body without Content-Length is measured too', async () => {
    const before = await written(env)
    const r = await refusal(
      await beacon(env, { clickId, eventName: 'big', metadata: { pad: 'x'.repeat(CONVERSION_BODY_LIMIT) } }, { type: 'application/json' }),
    )
    expect(r).toMatchObject({ status: 413, code: 'payload_too_large', cors: '*' })
    expect(await written(env)).toEqual(before)
  })

  test('a declared Content-Length over the limit is refused before the body is read', async () => {
    // The body is never read: a stream that would fail if it were.
    const stream = new ReadableStream({
      pull() {
        throw new Error('the body was read')
      },
    })
    const res = await env.app.handle(
      new Request(BEACON_URL, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(CONVERSION_BODY_LIMIT + 1), 'x-forwarded-for': '192.0.2.250' },
        body: stream,
      }),
    )
    expect(await refusal(res)).toMatchObject({ status: 413, code: 'payload_too_large', cors: '*' })
  })

  describe('through a real socket (the browser sends Content-Length)', () => {
    let lnk: Lnk
    let cid: string
    beforeAll(async () => {
      lnk = await startLnk()
      const owner = await account(lnk.env)
      const link = await owner.make({ destinationUrl: 'https://shop.example/', conversionTracking: true })
      const res = await fetch(link.shortUrl, {
        redirect: 'manual',
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36' },
      })
      cid = new URL(res.headers.get('location')!).searchParams.get('lnk_cid')!
    })
    afterAll(() => lnk?.stop())

    test('16384 bytes are accepted, 16385 refused with the envelope, as JSON and as text/plain', async () => {
      const post = (payload: string, type: string) =>
        fetch(`${lnk.origin}/v1/conversions`, { method: 'POST', headers: { 'content-type': type, origin: 'https://shop.example' }, body: payload })
      for (const type of ['application/json', 'text/plain;charset=UTF-8']) {
        const json = JSON.stringify({ clickId: cid, eventName: type })
        const ok = await post(json + ' '.repeat(CONVERSION_BODY_LIMIT - json.length), type)
        expect({ type, status: ok.status }).toEqual({ type, status: 201 })
        const big = await post(json + ' '.repeat(CONVERSION_BODY_LIMIT + 1 - json.length), type)
        expect({ type, status: big.status, cors: big.headers.get('access-control-allow-origin') }).toEqual({ type, status: 413, cors: '*' })
        expect((await body(big)).error).toMatchObject({ code: 'payload_too_large', details: { limit: CONVERSION_BODY_LIMIT } })
      }
    })
  })
})

describe('rate limit per client address', () => {
  test(`${CONVERSIONS_PER_MINUTE} beacons a minute per address, then 429 rate_limited with Retry-After; other addresses are not affected`, async () => {
    clock.set(Date.UTC(2026, 5, 1, 13, 0, 0))
    const ip = '198.51.100.77'
    for (let i = 0; i < CONVERSIONS_PER_MINUTE; i++) {
      // Refused beacons count too (here: no eventName): the limit is on calls, not on conversions.
      const res = await beacon(env, i === 0 ? { clickId, eventName: 'rate' } : { clickId }, { ip })
      expect(res.status).not.toBe(429)
      if (i === 0) {
        expect(res.headers.get('ratelimit-limit')).toBe(String(CONVERSIONS_PER_MINUTE))
        expect(res.headers.get('ratelimit-remaining')).toBe(String(CONVERSIONS_PER_MINUTE - 1))
      }
    }
    const before = await written(env)
    const limited = await beacon(env, { clickId, eventName: 'one-too-many' }, { ip })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited.headers.get('ratelimit-remaining')).toBe('0')
    const r = await refusal(limited)
    expect(r).toMatchObject({ code: 'rate_limited', cors: '*' })
    expect(r.message).toContain(`at most ${CONVERSIONS_PER_MINUTE} a minute`)
    expect(await written(env)).toEqual(before)

    // Another address still gets through; the preflight is never limited.
    expect((await beacon(env, { clickId, eventName: 'other-address' }, { ip: '198.51.100.78' })).status).toBe(201)
    expect((await preflight({ 'x-forwarded-for': ip })).status).toBe(204)

    // Once the window has passed, the address is admitted again.
    clock.advance(2 * 60_000)
    expect((await beacon(env, { clickId, eventName: 'after-the-window' }, { ip })).status).toBe(201)
  })

  test('an IPv6 /64 is one address', async () => {
    clock.set(Date.UTC(2026, 5, 1, 14, 0, 0))
    for (let i = 0; i < CONVERSIONS_PER_MINUTE; i++) {
      const res = await beacon(env, { clickId }, { ip: `2001:db8:77:1::${(i + 1).toString(16)}` })
      expect(res.status).toBe(400)
    }
    expect((await beacon(env, { clickId }, { ip: '2001:db8:77:1:ffff:ffff:ffff:ffff' })).status).toBe(429)
    expect((await beacon(env, { clickId }, { ip: '2001:db8:77:2::1' })).status).toBe(400)
  })

  test('addressKey: IPv4 as is, IPv6 by its /64', () => {
    expect(addressKey('203.0.113.9')).toBe('203.0.113.9')
    expect(addressKey('2001:db8:77:1::5')).toBe('2001:db8:77:1::/64')
    expect(addressKey('2001:0db8:0077:0001:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:77:1::/64')
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(addressKey('::1')).toBe('0:0:0:0::/64')
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(addressKey(null)).toBe('unknown')
  })
})
