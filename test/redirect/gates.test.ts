// The visitor-side gates: password (form, argon2, signed cookie scoped to the link, throttled attempts),
// ALTCHA proof-of-work captcha (solved here as the page's script does; single use; forgeries refused) and
// the consent interstitial. Each passed gate ends in the redirect, with the visitor's query kept.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import type { TestEnv } from '../helpers'
import { account, attrs, challengeOf, clicksOf, nextIp, ORIGIN, redirectEnv, setCookie, solve, texts, visit, type Api } from './_redirect'

const NOW = Date.UTC(2026, 4, 10, 12, 0, 0)
const clock = new ManualClock(NOW)
let env: TestEnv
let api: Api
beforeAll(async () => {
  env = await redirectEnv({ clock })
  api = await account(env)
})
afterAll(() => env.cleanup())

const cookieNameOf = (gate: 'pw' | 'cap' | 'ok', linkId: string) => `lnk_${gate}_${linkId.replace(/-/g, '')}`

/** Where a browser would POST the page's form: its action resolved against the page's URL. */
async function formTarget(html: string, pagePath: string): Promise<string> {
  const actions = await attrs(html, 'form', 'action')
  expect(actions.length).toBeLessThanOrEqual(1)
  const resolved = new URL(actions[0] ?? '', `${ORIGIN}/${pagePath.replace(/^\//, '')}`)
  expect(resolved.origin).toBe(ORIGIN)
  return `${resolved.pathname}${resolved.search}`.slice(1)
}

async function hidden(html: string, name: string) {
  return attrs(html, `input[name="${name}"]`, 'value')
}

describe('password', () => {
  test('GET shows the form; a wrong password is 401 with the form; the right one is 303 + a cookie scoped to /<slug>, then the redirect', async () => {
    const link = await api.make({ slug: 'pw-flow', destinationUrl: 'https://example.com/secret', password: 'correct horse' })
    const ip = nextIp()
    const page = await visit(env, link.slug, { ip })
    expect(page.status).toBe(200)
    expect(page.headers.get('location')).toBeNull()
    const html = await page.text()
    expect(html).toContain('Password required')
    expect(html).not.toContain('example.com/secret')
    expect(await attrs(html, 'form', 'method')).toEqual(['post'])
    expect(await hidden(html, 'gate')).toEqual(['password'])
    expect(await attrs(html, 'input[type="password"]', 'name')).toEqual(['password'])
    const target = await formTarget(html, link.slug)
    expect(target).toBe(link.slug)

    const wrong = await visit(env, target, { ip, form: { gate: 'password', password: 'wrong horse' } })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('set-cookie')).toBeNull()
    const wrongHtml = await wrong.text()
    expect(wrongHtml).toContain('That password is not right')
    expect(await hidden(wrongHtml, 'gate')).toEqual(['password'])

    const right = await visit(env, target, { ip, form: { gate: 'password', password: 'correct horse' } })
    expect(right.status).toBe(303)
    expect(right.headers.get('location')).toBe('/pw-flow')
    const cookie = setCookie(right)
    expect(cookie.name).toBe(cookieNameOf('pw', link.id))
    expect(cookie.attrs).toContain('Path=/pw-flow')
    expect(cookie.attrs).toContain('HttpOnly')
    expect(cookie.attrs).toContain('SameSite=Lax')
    expect(cookie.attrs).toContain('Max-Age=43200')
    // The base URL is http: no Secure flag (it would never be sent back).
    expect(cookie.attrs).not.toContain('Secure')

    const through = await visit(env, right.headers.get('location')!, { ip, cookie: cookie.pair })
    expect({ status: through.status, location: through.headers.get('location') }).toEqual({ status: 302, location: 'https://example.com/secret' })
    expect(through.headers.get('cache-control')).toBe('private, no-store')
    // Without the cookie: the form again.
    expect((await visit(env, link.slug, { ip })).status).toBe(200)
    await env.rt.modules.clicks.buffer.flush()
    expect(await clicksOf(env, link.id)).toHaveLength(1)
  }, 20_000)

  test('the cookie of one link does not open another, even under the other link cookie name', async () => {
    const a = await api.make({ destinationUrl: 'https://example.com/a', password: 'same-password' })
    const b = await api.make({ destinationUrl: 'https://example.com/b', password: 'same-password' })
    const passed = await visit(env, a.slug, { form: { gate: 'password', password: 'same-password' } })
    const cookie = setCookie(passed)
    expect((await visit(env, a.slug, { cookie: cookie.pair })).status).toBe(302)
    const asIs = await visit(env, b.slug, { cookie: cookie.pair })
    expect(asIs.status).toBe(200)
    expect(await asIs.text()).toContain('Password required')
    const renamed = await visit(env, b.slug, { cookie: `${cookieNameOf('pw', b.id)}=${cookie.value}` })
    expect(renamed.status).toBe(200)
    expect(renamed.headers.get('location')).toBeNull()
  })

  test('a tampered or expired cookie is refused', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/tamper', password: 'pw-tamper' })
    const cookie = setCookie(await visit(env, link.slug, { form: { gate: 'password', password: 'pw-tamper' } }))
    const [expires, sig] = cookie.value.split('.')
    const later = `${cookie.name}=${Number(expires) + 10 * 86_400_000}.${sig}`
    const flipped = `${cookie.name}=${expires}.${sig!.slice(0, -1)}${sig!.endsWith('A') ? 'B' : 'A'}`
    for (const bad of [later, flipped, `${cookie.name}=${expires}`, `${cookie.name}=`, `${cookie.name}=x.y`]) {
      expect((await visit(env, link.slug, { cookie: bad })).status).toBe(200)
    }
    expect((await visit(env, link.slug, { cookie: cookie.pair })).status).toBe(302)
    clock.advance(12 * 3_600_000)
    expect((await visit(env, link.slug, { cookie: cookie.pair })).status).toBe(200)
  })

  test('changing the password invalidates the cookies issued for the old one; clearing it removes the gate', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/rotate', password: 'first-password' })
    const old = setCookie(await visit(env, link.slug, { form: { gate: 'password', password: 'first-password' } }))
    expect((await visit(env, link.slug, { cookie: old.pair })).status).toBe(302)
    expect((await api.patch(link.id, { password: 'second-password' })).status).toBe(200)
    const afterChange = await visit(env, link.slug, { cookie: old.pair })
    expect(afterChange.status).toBe(200)
    expect(await afterChange.text()).toContain('Password required')
    expect((await visit(env, link.slug, { form: { gate: 'password', password: 'first-password' } })).status).toBe(401)
    const fresh = setCookie(await visit(env, link.slug, { form: { gate: 'password', password: 'second-password' } }))
    expect((await visit(env, link.slug, { cookie: fresh.pair })).status).toBe(302)
    // Patching other fields keeps the cookie valid.
    expect((await api.patch(link.id, { title: 'renamed' })).status).toBe(200)
    expect((await visit(env, link.slug, { cookie: fresh.pair })).status).toBe(302)
    expect((await api.patch(link.id, { password: null })).status).toBe(200)
    expect((await visit(env, link.slug)).headers.get('location')).toBe('https://example.com/rotate')
  })

  test('5 wrong attempts: 429 with Retry-After, even for the right password, per link and address, until the window ends', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/throttle', password: 'the-right-one' })
    const other = await api.make({ destinationUrl: 'https://example.com/throttle2', password: 'the-right-one' })
    const ip = nextIp()
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await visit(env, link.slug, { ip, form: { gate: 'password', password: `wrong-${i}` } })).status)
    expect(statuses).toEqual([401, 401, 401, 401, 429])
    const blocked = await visit(env, link.slug, { ip, form: { gate: 'password', password: 'the-right-one' } })
    expect(blocked.status).toBe(429)
    expect(blocked.headers.get('set-cookie')).toBeNull()
    expect(blocked.headers.get('retry-after')).toBe('900')
    expect(await blocked.text()).toContain('Too many attempts')
    clock.advance(60_000)
    expect((await visit(env, link.slug, { ip, form: { gate: 'password', password: 'the-right-one' } })).headers.get('retry-after')).toBe('840')
    // The form itself is still shown; another address, and the same address on another link, may try.
    expect((await visit(env, link.slug, { ip })).status).toBe(200)
    expect((await visit(env, link.slug, { ip: nextIp(), form: { gate: 'password', password: 'the-right-one' } })).status).toBe(303)
    expect((await visit(env, other.slug, { ip, form: { gate: 'password', password: 'the-right-one' } })).status).toBe(303)
    clock.advance(14 * 60_000)
    expect((await visit(env, link.slug, { ip, form: { gate: 'password', password: 'the-right-one' } })).status).toBe(303)
  }, 20_000)

  test('concurrent guesses do not get past the limit: 24 wrong and then the right one, all at once, are all refused', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/burst', password: 'burst-password' })
    const ip = nextIp()
    const guesses = [...Array.from({ length: 24 }, (_, i) => `guess-${i}`), 'burst-password']
    const results = await Promise.all(guesses.map((password) => visit(env, link.slug, { ip, form: { gate: 'password', password } })))
    const statuses = results.map((r) => r.status)
    expect(results.filter((r) => r.headers.get('set-cookie'))).toHaveLength(0)
    expect(statuses.at(-1)).toBe(429)
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5)
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([])
  })

  test('form bodies larger than 16 KiB are not read as a password attempt', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/big', password: 'pw-big' })
    const res = await visit(env, link.slug, { form: { gate: 'password', password: 'pw-big', pad: 'x'.repeat(20_000) } })
    expect(res.status).toBe(303)
    expect(res.headers.get('set-cookie')).toBeNull()
  })
})

describe('consent', () => {
  test('GET shows the interstitial naming the destination; POST consent is 303 + cookie, then the redirect', async () => {
    const link = await api.make({ slug: 'consent-flow', destinationUrl: 'https://example.com/leave?a=1&b=2', consentRequired: true, utmSource: 'lnk' })
    const page = await visit(env, link.slug)
    expect(page.status).toBe(200)
    expect(page.headers.get('location')).toBeNull()
    const html = await page.text()
    expect(html).toContain('Continue to another site?')
    expect(html).toContain('https://example.com/leave?a=1&#38;b=2&#38;utm_source=lnk')
    expect(await texts(html, 'p.dest')).toEqual(['https://example.com/leave?a=1&b=2&utm_source=lnk'])
    expect(await hidden(html, 'gate')).toEqual(['consent'])
    const passed = await visit(env, await formTarget(html, link.slug), { form: { gate: 'consent' } })
    expect(passed.status).toBe(303)
    expect(passed.headers.get('location')).toBe('/consent-flow')
    const cookie = setCookie(passed)
    expect(cookie.name).toBe(cookieNameOf('ok', link.id))
    expect(cookie.attrs).toContain('Path=/consent-flow')
    const through = await visit(env, link.slug, { cookie: cookie.pair })
    expect({ status: through.status, location: through.headers.get('location') }).toEqual({
      status: 302,
      location: 'https://example.com/leave?a=1&b=2&utm_source=lnk',
    })
    await env.rt.modules.clicks.buffer.flush()
    expect(await clicksOf(env, link.id)).toHaveLength(1)
  })

  test('a POST without the consent field, or for a gate the link does not have, sets no cookie', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/c2', consentRequired: true })
    for (const form of <Record<string, string>[]>[{}, { gate: 'password', password: 'x' }, { gate: 'captcha', altcha: 'x' }, { gate: 'other' }]) {
      const res = await visit(env, link.slug, { form })
      expect(res.status).toBe(303)
      expect(res.headers.get('set-cookie')).toBeNull()
      expect(res.headers.get('location')).toBe(`/${link.slug}`)
    }
    expect((await visit(env, link.slug)).status).toBe(200)
  })

  test("the visitor's query survives the interstitial: the page names it and the redirect after consent carries it", async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/keepq', consentRequired: true })
    const pagePath = `${link.slug}?ref=newsletter&item=42`
    const html = await (await visit(env, pagePath)).text()
    expect(await texts(html, 'p.dest')).toEqual(['https://example.com/keepq?ref=newsletter&item=42'])
    const passed = await visit(env, await formTarget(html, pagePath), { form: { gate: 'consent' } })
    expect(passed.status).toBe(303)
    const next = passed.headers.get('location')!
    const through = await visit(env, next, { cookie: setCookie(passed).pair })
    expect(through.headers.get('location')).toBe('https://example.com/keepq?ref=newsletter&item=42')
  })

  test("the visitor's query survives the password form too", async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/keepq-pw', password: 'pw-keepq' })
    const pagePath = `${link.slug}?ref=qr`
    const html = await (await visit(env, pagePath)).text()
    const passed = await visit(env, await formTarget(html, pagePath), { form: { gate: 'password', password: 'pw-keepq' } })
    expect(passed.status).toBe(303)
    const through = await visit(env, passed.headers.get('location')!, { cookie: setCookie(passed).pair })
    expect(through.headers.get('location')).toBe('https://example.com/keepq-pw?ref=qr')
  })
})

describe('captcha (ALTCHA proof of work)', () => {
  // ALTCHA challenges carry their expiry; the clock starts at the real time so both agree.
  const capClock = new ManualClock(Date.now())
  let cenv: TestEnv
  let capi: Api
  beforeAll(async () => {
    cenv = await redirectEnv({ clock: capClock })
    capi = await account(cenv)
  })
  afterAll(() => cenv.cleanup())

  async function challengePage(slug: string, cookie?: string) {
    const res = await visit(cenv, slug, { cookie })
    expect(res.status).toBe(200)
    expect(res.headers.get('location')).toBeNull()
    expect(res.headers.get('content-security-policy')).toContain("script-src 'unsafe-inline'")
    const html = await res.text()
    expect(html).toContain('Checking your browser')
    return html
  }

  test('the page carries a signed SHA-256 challenge; solving it and POSTing the payload gives 303 + cookie, then the redirect', async () => {
    const link = await capi.make({ slug: 'cap-flow', destinationUrl: 'https://example.com/human', captchaEnabled: true })
    const html = await challengePage(link.slug)
    const c = challengeOf(html)
    expect(c).toMatchObject({ algorithm: 'SHA-256', maxnumber: 50_000 })
    expect(c.challenge).toMatch(/^[0-9a-f]{64}$/)
    expect(c.signature).toMatch(/^[0-9a-f]{64}$/)
    expect(c.salt).toMatch(/\?expires=\d+&$/)
    expect(await hidden(html, 'gate')).toEqual(['captcha'])
    expect(await attrs(html, 'input#altcha', 'name')).toEqual(['altcha'])
    const payload = solve(c)
    const passed = await visit(cenv, await formTarget(html, link.slug), { form: { gate: 'captcha', altcha: payload } })
    expect(passed.status).toBe(303)
    expect(passed.headers.get('location')).toBe('/cap-flow')
    const cookie = setCookie(passed)
    expect(cookie.name).toBe(cookieNameOf('cap', link.id))
    expect(cookie.attrs).toContain('Path=/cap-flow')
    expect(cookie.attrs).toContain('HttpOnly')
    const through = await visit(cenv, link.slug, { cookie: cookie.pair })
    expect({ status: through.status, location: through.headers.get('location') }).toEqual({ status: 302, location: 'https://example.com/human' })

    // Single use: the same payload again is refused with a fresh challenge.
    const replay = await visit(cenv, link.slug, { form: { gate: 'captcha', altcha: payload } })
    expect(replay.status).toBe(403)
    expect(replay.headers.get('set-cookie')).toBeNull()
    const replayHtml = await replay.text()
    expect(replayHtml).toContain('The check did not pass')
    expect(challengeOf(replayHtml).challenge).not.toBe(c.challenge)
  })

  test('forged payloads are refused', async () => {
    const link = await capi.make({ destinationUrl: 'https://example.com/forged', captchaEnabled: true })
    const c = challengeOf(await challengePage(link.slug))
    const good = JSON.parse(Buffer.from(solve(c), 'base64').toString())
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64')
    const { createHash } = await import('node:crypto')
    const ownChallenge = createHash('sha256').update(`${c.salt}7`).digest('hex')
    const forgeries = [
      enc({ ...good, number: good.number + 1 }),
      enc({ ...good, signature: '0'.repeat(64) }),
      enc({ ...good, challenge: ownChallenge, number: 7 }),
      enc({ ...good, salt: `${c.salt}x` }),
      enc({ ...good, salt: c.salt.replace(/expires=\d+/, 'expires=9999999999') }),
      enc({ algorithm: 'SHA-256', challenge: ownChallenge, number: 7, salt: c.salt }),
      'not base64 at all!',
      enc('a string'),
      '',
    ]
    for (const altcha of forgeries) {
      const res = await visit(cenv, link.slug, { form: { gate: 'captcha', altcha } })
      expect({ altcha, status: res.status, cookie: res.headers.get('set-cookie') }).toEqual({ altcha, status: 403, cookie: null })
    }
    // The genuine solution still works once.
    expect((await visit(cenv, link.slug, { form: { gate: 'captcha', altcha: enc(good) } })).status).toBe(303)
  })

  test('the same payload sent many times at once is accepted exactly once', async () => {
    const link = await capi.make({ destinationUrl: 'https://example.com/race', captchaEnabled: true })
    const payload = solve(challengeOf(await challengePage(link.slug)))
    const results = await Promise.all(Array.from({ length: 8 }, () => visit(cenv, link.slug, { form: { gate: 'captcha', altcha: payload } })))
    expect(results.map((r) => r.status).sort()).toEqual([303, 403, 403, 403, 403, 403, 403, 403])
  })

  test('a challenge older than its 10 minutes is refused', async () => {
    const link = await capi.make({ destinationUrl: 'https://example.com/late', captchaEnabled: true })
    const payload = solve(challengeOf(await challengePage(link.slug)))
    capClock.advance(10 * 60_000 + 1_000)
    const res = await visit(cenv, link.slug, { form: { gate: 'captcha', altcha: payload } })
    expect(res.status).toBe(403)
    expect(res.headers.get('set-cookie')).toBeNull()
  })

  test('a captcha cookie does not stand in for the password, nor the other way round', async () => {
    const link = await capi.make({ destinationUrl: 'https://example.com/both', captchaEnabled: true, password: 'pw-both' })
    const form = await visit(cenv, link.slug)
    expect(await form.text()).toContain('Password required')
    const pw = setCookie(await visit(cenv, link.slug, { form: { gate: 'password', password: 'pw-both' } }))
    const cap = setCookie(await visit(cenv, link.slug, { form: { gate: 'captcha', altcha: solve(challengeOf(await challengePage(link.slug, pw.pair))) } }))
    expect(cap.name).toBe(cookieNameOf('cap', link.id))
    // The captcha cookie's value under the password cookie's name opens nothing, and vice versa.
    expect(await (await visit(cenv, link.slug, { cookie: `${cookieNameOf('pw', link.id)}=${cap.value}` })).text()).toContain('Password required')
    expect(await (await visit(cenv, link.slug, { cookie: `${pw.pair}; ${cookieNameOf('cap', link.id)}=${pw.value}` })).text()).toContain(
      'Checking your browser',
    )
    const through = await visit(cenv, link.slug, { cookie: `${pw.pair}; ${cap.pair}` })
    expect(through.headers.get('location')).toBe('https://example.com/both')
  })
})
