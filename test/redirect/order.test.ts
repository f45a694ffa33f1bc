// The redirect's order of checks (contract section 4): unknown/inactive -> 404 page; test link -> sandbox;
// expired / click limit / unique-IP limit -> fallbackUrl or 410; gates; social crawlers -> preview page;
// mobile deep links; otherwise the redirect with redirectStatus and its headers. HEAD and bots.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import type { TestEnv } from '../helpers'
import { account, attrs, clickedEvents, clicksOf, counters, CRAWLERS, nextIp, redirectEnv, texts, UA, visit, type Api } from './_redirect'

const NOW = Date.UTC(2026, 4, 10, 12, 0, 0)
const clock = new ManualClock(NOW)
let env: TestEnv
let api: Api
beforeAll(async () => {
  env = await redirectEnv({ clock })
  api = await account(env)
})
afterAll(() => env.cleanup())

const REQUEST_ID = /^req_[0-9A-Za-z]{20}$/

async function expectPage(res: Response, status: number) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
  expect(res.headers.get('location')).toBeNull()
  expect(res.headers.get('x-robots-tag')).toBe('noindex')
  expect(res.headers.get('x-request-id')).toMatch(REQUEST_ID)
  const html = await res.text()
  expect(html.startsWith('<!doctype html>')).toBe(true)
  return html
}

function expectRedirect(res: Response, status: number, location: string) {
  expect({ status: res.status, location: res.headers.get('location') }).toEqual({ status, location })
  expect(res.headers.get('x-robots-tag')).toBe('noindex')
  expect(res.headers.get('x-request-id')).toMatch(REQUEST_ID)
}

/** After a flush: click rows of people, rows of bots' hits (is_bot = 1, counted apart), counters and events. */
async function settledClicks(linkId: string) {
  await env.rt.modules.clicks.buffer.flush()
  const rows = await clicksOf(env, linkId)
  return {
    rows: rows.filter((r) => !r.is_bot).length,
    bots: rows.filter((r) => r.is_bot).length,
    ...(await counters(env, linkId)),
    events: (await clickedEvents(env, linkId)).length,
  }
}

describe('unknown and inactive links', () => {
  test('an unknown slug answers the 404 page (GET and HEAD), never a redirect', async () => {
    const html = await expectPage(await visit(env, 'no-such-slug'), 404)
    expect(html).toContain('<h1>Link not found</h1>')
    const head = await visit(env, 'no-such-slug', { method: 'HEAD' })
    expect(head.status).toBe(404)
    expect(head.headers.get('location')).toBeNull()
  })

  test('a link set isActive:false is 404 at once, and redirects again when re-activated', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/inactive' })
    expectRedirect(await visit(env, link.slug), 302, 'https://example.com/inactive')
    expect((await api.patch(link.id, { isActive: false })).status).toBe(200)
    const html = await expectPage(await visit(env, link.slug), 404)
    expect(html).toContain('Link not found')
    expect(html).not.toContain('example.com/inactive')
    expect((await api.patch(link.id, { isActive: true })).status).toBe(200)
    expectRedirect(await visit(env, link.slug), 302, 'https://example.com/inactive')
  })

  test('slugs are case-sensitive: another case is an unknown link', async () => {
    const link = await api.make({ slug: 'CaseSlug', destinationUrl: 'https://example.com/case' })
    expectRedirect(await visit(env, link.slug), 302, 'https://example.com/case')
    expect((await visit(env, 'caseslug')).status).toBe(404)
  })
})

describe('test links (created with a lnk_test_ key)', () => {
  test('answer a 200 sandbox page naming the escaped destination, with no Location, and record nothing', async () => {
    const destination = "https://example.com/it's?a=1&b=2"
    const link = await api.make({ destinationUrl: destination }, api.testKey)
    expect(link.isTest).toBe(true)
    for (const o of [{}, { ua: UA.iphone }, { ua: CRAWLERS.facebook! }, { ip: nextIp() }]) {
      const html = await expectPage(await visit(env, link.slug, o), 200)
      expect(html).toContain('<h1>Test link</h1>')
      // Named, escaped: & and ' never appear raw inside the page's text.
      expect(html).toContain('https://example.com/it&#39;s?a=1&#38;b=2')
      expect(await texts(html, 'p.dest')).toEqual([destination])
    }
    const head = await visit(env, link.slug, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('location')).toBeNull()
    expect(await settledClicks(link.id)).toEqual({ rows: 0, bots: 0, total_clicks: 0, unique_clicks: 0, events: 0 })
  })

  test('come before every other check: limits, expiry, password, captcha and consent never apply', async () => {
    const link = await api.make(
      {
        destinationUrl: 'https://example.com/t',
        clickLimit: 1,
        uniqueIpLimit: 1,
        expiresAt: new Date(clock.now() + 60_000).toISOString(),
        fallbackUrl: 'https://example.com/fb',
        password: 'pw-1234',
        captchaEnabled: true,
        consentRequired: true,
      },
      api.testKey,
    )
    for (let i = 0; i < 3; i++) {
      const html = await expectPage(await visit(env, link.slug, { ip: nextIp() }), 200)
      expect(html).toContain('<h1>Test link</h1>')
    }
    clock.advance(61_000)
    const html = await expectPage(await visit(env, link.slug), 200)
    expect(html).toContain('<h1>Test link</h1>')
    expect(html).toContain('https://example.com/t')
    expect(await settledClicks(link.id)).toEqual({ rows: 0, bots: 0, total_clicks: 0, unique_clicks: 0, events: 0 })
  })

  test('the visitor query shown on the sandbox page is escaped too', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/q' }, api.testKey)
    const html = await expectPage(await visit(env, `${link.slug}?x=%22%3E%3Cb%3Ebold%3C%2Fb%3E`), 200)
    expect(html).not.toContain('<b>bold')
    expect(await texts(html, 'p.dest')).toHaveLength(1)
  })
})

describe('expired links and reached limits', () => {
  test('expiresAt passed: fallbackUrl with a 302 when set, else the 410 page', async () => {
    const expiresAt = new Date(clock.now() + 60_000).toISOString()
    const withFallback = await api.make({
      destinationUrl: 'https://example.com/exp',
      expiresAt,
      fallbackUrl: 'https://example.com/expired',
      redirectStatus: 301,
    })
    const without = await api.make({ destinationUrl: 'https://example.com/exp2', expiresAt })
    expectRedirect(await visit(env, withFallback.slug), 301, 'https://example.com/exp')
    expectRedirect(await visit(env, without.slug), 302, 'https://example.com/exp2')
    clock.advance(59_999)
    expectRedirect(await visit(env, without.slug), 302, 'https://example.com/exp2')
    clock.advance(1)
    // The fallback is always a temporary, uncacheable redirect, whatever the link's own status.
    const fb = await visit(env, withFallback.slug)
    expectRedirect(fb, 302, 'https://example.com/expired')
    expect(fb.headers.get('cache-control')).toBe('private, no-store')
    const html = await expectPage(await visit(env, without.slug), 410)
    expect(html).toContain('This link has expired.')
    const head = await visit(env, without.slug, { method: 'HEAD' })
    expect(head.status).toBe(410)
  })

  test('clickLimit reached: the next visit gets the fallback or the 410 page', async () => {
    const withFallback = await api.make({ destinationUrl: 'https://example.com/cl', clickLimit: 2, fallbackUrl: 'https://example.com/cl-full' })
    const without = await api.make({ destinationUrl: 'https://example.com/cl2', clickLimit: 2 })
    for (let i = 0; i < 2; i++) {
      expectRedirect(await visit(env, withFallback.slug, { ip: nextIp() }), 302, 'https://example.com/cl')
      expectRedirect(await visit(env, without.slug, { ip: nextIp() }), 302, 'https://example.com/cl2')
    }
    expectRedirect(await visit(env, withFallback.slug, { ip: nextIp() }), 302, 'https://example.com/cl-full')
    const html = await expectPage(await visit(env, without.slug, { ip: nextIp() }), 410)
    expect(html).toContain('click limit')
    expect(await settledClicks(without.id)).toEqual({ rows: 2, bots: 0, total_clicks: 2, unique_clicks: 2, events: 2 })
  })

  test('uniqueIpLimit reached: new addresses get the fallback or 410, admitted ones still pass', async () => {
    const withFallback = await api.make({ destinationUrl: 'https://example.com/ui', uniqueIpLimit: 2, fallbackUrl: 'https://example.com/ui-full' })
    const without = await api.make({ destinationUrl: 'https://example.com/ui2', uniqueIpLimit: 2 })
    const [a, b, c] = [nextIp(), nextIp(), nextIp()]
    for (const ip of [a, b, a]) {
      expectRedirect(await visit(env, withFallback.slug, { ip }), 302, 'https://example.com/ui')
      expectRedirect(await visit(env, without.slug, { ip }), 302, 'https://example.com/ui2')
    }
    expectRedirect(await visit(env, withFallback.slug, { ip: c }), 302, 'https://example.com/ui-full')
    expect(await expectPage(await visit(env, without.slug, { ip: c }), 410)).toContain('visitors')
    expectRedirect(await visit(env, without.slug, { ip: b }), 302, 'https://example.com/ui2')
  })

  test('limits come before the password form, the preview page and deep links', async () => {
    const link = await api.make({
      destinationUrl: 'https://www.youtube.com/watch?v=x',
      clickLimit: 1,
      fallbackUrl: 'https://example.com/over',
      deepLinkEnabled: true,
      ogTitle: 'T',
    })
    expectRedirect(await visit(env, link.slug), 302, 'https://www.youtube.com/watch?v=x')
    expectRedirect(await visit(env, link.slug, { ua: UA.iphone }), 302, 'https://example.com/over')
    expectRedirect(await visit(env, link.slug, { ua: CRAWLERS.facebook }), 302, 'https://example.com/over')
    const pw = await api.make({ destinationUrl: 'https://example.com/pw', clickLimit: 1, password: 'secret-pw' })
    expect(pw.hasPassword).toBe(true)
    // Not yet reached: the form; showing it counts nothing.
    for (let i = 0; i < 3; i++) expect(await expectPage(await visit(env, pw.slug), 200)).toContain('<form')
    const passed = await visit(env, pw.slug, { form: { gate: 'password', password: 'secret-pw' } })
    expect(passed.status).toBe(303)
    const cookie = passed.headers.get('set-cookie')!.split(';')[0]!
    expectRedirect(await visit(env, pw.slug, { cookie }), 302, 'https://example.com/pw')
    // Reached: the 410 page, before the form, with or without the cookie, and for a POSTed password too.
    expect(await expectPage(await visit(env, pw.slug), 410)).not.toContain('<form')
    expect((await visit(env, pw.slug, { cookie })).status).toBe(410)
    expect((await visit(env, pw.slug, { form: { gate: 'password', password: 'secret-pw' } })).status).toBe(410)
  })
})

describe('gates come before social crawlers, in the contract order', () => {
  test('password, then captcha, then consent; a crawler sees the password form, not the preview', async () => {
    const link = await api.make({
      destinationUrl: 'https://example.com/gated',
      password: 'open-sesame',
      captchaEnabled: true,
      consentRequired: true,
      ogTitle: 'Secret title',
    })
    const form = await expectPage(await visit(env, link.slug), 200)
    expect(form).toContain('Password required')
    expect(form).not.toContain('example.com/gated')
    const crawler = await expectPage(await visit(env, link.slug, { ua: CRAWLERS.facebook }), 200)
    expect(crawler).toContain('Password required')
    expect(crawler).not.toContain('Secret title')
    expect(await attrs(crawler, 'meta[property="og:title"]', 'content')).toEqual([])
    const passed = await visit(env, link.slug, { form: { gate: 'password', password: 'open-sesame' } })
    expect(passed.status).toBe(303)
    const pwCookie = passed.headers.get('set-cookie')!.split(';')[0]!
    const captcha = await expectPage(await visit(env, link.slug, { cookie: pwCookie }), 200)
    expect(captcha).toContain('Checking your browser')
    // Consent without the captcha cookie changes nothing: the captcha is asked first.
    const consent = await visit(env, link.slug, { cookie: pwCookie, form: { gate: 'consent' } })
    expect(consent.status).toBe(303)
    const okCookie = consent.headers.get('set-cookie')!.split(';')[0]!
    expect(await expectPage(await visit(env, link.slug, { cookie: `${pwCookie}; ${okCookie}` }), 200)).toContain('Checking your browser')
    expect(await settledClicks(link.id)).toEqual({ rows: 0, bots: 0, total_clicks: 0, unique_clicks: 0, events: 0 })
  })
})

describe('social crawlers', () => {
  test('each preview fetcher gets a 200 page with the link OG and Twitter tags; a bot hit is recorded, no click', async () => {
    const link = await api.make({
      destinationUrl: 'https://example.com/article',
      ogTitle: 'An article worth reading',
      ogDescription: 'What it says, briefly',
      ogImageUrl: 'https://example.com/og.png',
      twitterCard: 'summary_large_image',
    })
    for (const [name, ua] of Object.entries(CRAWLERS)) {
      const res = await visit(env, link.slug, { ua, ip: nextIp() })
      const html = await expectPage(res, 200)
      const meta = async (sel: string) => attrs(html, sel, 'content')
      expect({ name, title: await meta('meta[property="og:title"]') }).toEqual({ name, title: ['An article worth reading'] })
      expect(await meta('meta[property="og:description"]')).toEqual(['What it says, briefly'])
      expect(await meta('meta[property="og:image"]')).toEqual(['https://example.com/og.png'])
      expect(await meta('meta[property="og:url"]')).toEqual([link.shortUrl])
      expect(await meta('meta[name="twitter:card"]')).toEqual(['summary_large_image'])
      expect(await meta('meta[name="twitter:title"]')).toEqual(['An article worth reading'])
      expect(await meta('meta[name="twitter:image"]')).toEqual(['https://example.com/og.png'])
    }
    expect(await settledClicks(link.id)).toEqual({ rows: 0, bots: Object.keys(CRAWLERS).length, total_clicks: 0, unique_clicks: 0, events: 0 })
    // A browser is still redirected.
    expectRedirect(await visit(env, link.slug), 302, 'https://example.com/article')
  })

  test('without OG fields the preview falls back to title, description and a summary card', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/plain', title: 'Plain title', description: 'Plain description' })
    const html = await expectPage(await visit(env, link.slug, { ua: CRAWLERS.twitter }), 200)
    expect(await attrs(html, 'meta[property="og:title"]', 'content')).toEqual(['Plain title'])
    expect(await attrs(html, 'meta[property="og:description"]', 'content')).toEqual(['Plain description'])
    expect(await attrs(html, 'meta[property="og:image"]', 'content')).toEqual([])
    expect(await attrs(html, 'meta[name="twitter:card"]', 'content')).toEqual(['summary'])
  })

  test('OG values with markup and & are escaped: no <script> from user data reaches the page', async () => {
    const evil = '"><script>alert(1)</script> & <img src=x onerror=alert(2)>'
    const link = await api.make({ destinationUrl: 'https://example.com/x?a=1&b=2', title: evil, ogTitle: `T ${evil}`, ogDescription: `D ${evil}` })
    const html = await expectPage(await visit(env, link.slug, { ua: CRAWLERS.imessage }), 200)
    expect(html).not.toContain('<script')
    expect(html).not.toContain('<img')
    expect(html).not.toMatch(/&(?![#a-z0-9]+;)/i)
    expect(await attrs(html, 'meta[property="og:title"]', 'content')).toEqual([`T ${evil}`])
    expect(await attrs(html, 'meta[property="og:description"]', 'content')).toEqual([`D ${evil}`])
    expect(await attrs(html, 'meta[name="twitter:title"]', 'content')).toEqual([`T ${evil}`])
    expect(await texts(html, 'title')).toEqual([`T ${evil}`])
    expect(await texts(html, 'h1')).toEqual([`T ${evil}`])
    expect(await attrs(html, 'a', 'href')).toEqual(['https://example.com/x?a=1&b=2'])
    // The parser sees exactly the page's own elements: no script, no injected img.
    expect(await attrs(html, 'script', 'src')).toEqual([])
    expect(await texts(html, 'script')).toEqual([])
  })
})

describe('deep links', () => {
  const YT = 'https://www.youtube.com/watch?v=dQw4w9WgXcQ'

  test('iPhone: a page with the youtube:// link and the web fallback', async () => {
    const link = await api.make({ destinationUrl: YT, deepLinkEnabled: true })
    const html = await expectPage(await visit(env, link.slug, { ua: UA.iphone }), 200)
    const hrefs = await attrs(html, 'a', 'href')
    expect(hrefs).toEqual(['youtube://www.youtube.com/watch?v=dQw4w9WgXcQ', YT])
    expect(html).toContain('Opening YouTube')
  })

  test('Android: an intent:// link with the package and the browser fallback', async () => {
    const link = await api.make({ destinationUrl: YT, deepLinkEnabled: true, utmSource: 'app' })
    const html = await expectPage(await visit(env, link.slug, { ua: UA.android }), 200)
    const dest = `${YT}&utm_source=app`
    const [app, web] = await attrs(html, 'a', 'href')
    expect(app).toBe(
      `intent://www.youtube.com/watch?v=dQw4w9WgXcQ&utm_source=app#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=${encodeURIComponent(dest)};end`,
    )
    expect(app).toMatch(/^intent:\/\/.*;package=com\.google\.android\.youtube;.*S\.browser_fallback_url=/)
    expect(web).toBe(dest)
  })

  test('desktop browsers, unknown app hosts and links without deepLinkEnabled get the plain redirect', async () => {
    const yt = await api.make({ destinationUrl: YT, deepLinkEnabled: true })
    expectRedirect(await visit(env, yt.slug, { ua: UA.chrome }), 302, YT)
    expectRedirect(await visit(env, yt.slug, { ua: UA.firefox }), 302, YT)
    const other = await api.make({ destinationUrl: 'https://example.com/app', deepLinkEnabled: true })
    expectRedirect(await visit(env, other.slug, { ua: UA.iphone }), 302, 'https://example.com/app')
    expectRedirect(await visit(env, other.slug, { ua: UA.android }), 302, 'https://example.com/app')
    const off = await api.make({ destinationUrl: YT })
    expectRedirect(await visit(env, off.slug, { ua: UA.iphone }), 302, YT)
  })
})

describe('the redirect', () => {
  test.each([301, 302, 307, 308])('redirectStatus %d is answered with its headers', async (status) => {
    const link = await api.make({ destinationUrl: `https://example.com/s${status}`, redirectStatus: status })
    const res = await visit(env, link.slug)
    expectRedirect(res, status, `https://example.com/s${status}`)
    expect(res.headers.get('cache-control')).toBe(status === 301 || status === 308 ? 'public, max-age=300' : 'private, no-store')
    expect(await res.text()).toBe('')
  })

  test('the default status is 302', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/default' })
    expect(link.redirectStatus).toBe(302)
    expectRedirect(await visit(env, link.slug), 302, 'https://example.com/default')
  })

  test.each([
    ['clickLimit', { clickLimit: 100 }],
    ['uniqueIpLimit', { uniqueIpLimit: 100 }],
    ['expiresAt', { expiresAt: '2099-01-01T00:00:00.000Z' }],
    ['conversionTracking', { conversionTracking: true }],
  ])('a 301/308 link with %s is never publicly cacheable', async (_name, options) => {
    for (const redirectStatus of [301, 308]) {
      const link = await api.make({ destinationUrl: 'https://example.com/pv', redirectStatus, ...options })
      const res = await visit(env, link.slug, { ip: nextIp() })
      expect(res.status).toBe(redirectStatus)
      expect(res.headers.get('cache-control')).toBe('private, no-store')
    }
  })

  test('a 308 link behind a password or consent is not cacheable even once the gate is passed', async () => {
    for (const options of [{ password: 'pass-9876' }, { consentRequired: true }]) {
      const link = await api.make({ destinationUrl: 'https://example.com/gate308', redirectStatus: 308, ...options })
      const gate: Record<string, string> = 'password' in options ? { gate: 'password', password: 'pass-9876' } : { gate: 'consent' }
      const passed = await visit(env, link.slug, { form: gate })
      expect(passed.status).toBe(303)
      const res = await visit(env, link.slug, { cookie: passed.headers.get('set-cookie')!.split(';')[0] })
      expectRedirect(res, 308, 'https://example.com/gate308')
      expect(res.headers.get('cache-control')).toBe('private, no-store')
    }
  })

  test('HEAD answers the same status and Location as GET and records no click', async () => {
    for (const redirectStatus of [301, 302, 307, 308]) {
      const link = await api.make({ destinationUrl: `https://example.com/head${redirectStatus}?k=v`, redirectStatus, utmSource: 'h' })
      const head = await visit(env, `${link.slug}?extra=1`, { method: 'HEAD' })
      const get = await visit(env, `${link.slug}?extra=1`)
      expect({ status: head.status, location: head.headers.get('location') }).toEqual({ status: get.status, location: get.headers.get('location') })
      expect(head.headers.get('location')).toBe(`https://example.com/head${redirectStatus}?k=v&utm_source=h&extra=1`)
      for (let i = 0; i < 3; i++) expect((await visit(env, link.slug, { method: 'HEAD' })).status).toBe(redirectStatus)
      expect(await settledClicks(link.id)).toEqual({ rows: 1, bots: 0, total_clicks: 1, unique_clicks: 1, events: 1 })
    }
  })

  test('HEAD does not use up a click limit', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/headlimit', clickLimit: 1 })
    for (let i = 0; i < 5; i++) expectRedirect(await visit(env, link.slug, { method: 'HEAD' }), 302, 'https://example.com/headlimit')
    expectRedirect(await visit(env, link.slug), 302, 'https://example.com/headlimit')
    expect((await visit(env, link.slug)).status).toBe(410)
  })

  test('bots (curl, Googlebot, short agents, none) are redirected but not counted: bot hits apart, the limit untouched', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/bots', clickLimit: 1 })
    for (const ua of [
      'curl/8.5.0',
      'curl/8',
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Googlebot/2.1 (+http://www.google.com/bot.html)',
      'Mozilla/5.0',
      '',
    ]) {
      expectRedirect(await visit(env, link.slug, { ua, ip: nextIp() }), 302, 'https://example.com/bots')
    }
    expect(await settledClicks(link.id)).toEqual({ rows: 0, bots: 6, total_clicks: 0, unique_clicks: 0, events: 0 })
    // The one click the limit allows is still there for a person.
    expectRedirect(await visit(env, link.slug), 302, 'https://example.com/bots')
    expect(await settledClicks(link.id)).toEqual({ rows: 1, bots: 6, total_clicks: 1, unique_clicks: 1, events: 1 })
  })

  test('the public stats path {slug}+ of a link without publicStatsEnabled is the 404 page', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/stats' })
    expect(await expectPage(await visit(env, `${link.slug}+`), 404)).toContain('Link not found')
  })
})
