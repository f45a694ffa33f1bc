// The public stats page `{short domain}/{slug}+`, through real requests: gated by publicStatsEnabled (and
// never for test links), figures from real redirects (varied addresses through a trusted proxy header,
// referrers, bots left out), days bucketed in UTC with a manual clock, the one-minute page cache and its
// invalidation by a PATCH, escaping of hostile values, nothing private on the page, and one phone-sized
// screenshot in headless Chromium.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { PNG } from 'pngjs'
import { ManualClock } from '../../src/platform/clock'
import type { TestEnv } from '../helpers'
import { account, clicksOf, redirectEnv, sql, UA, visit } from './_redirect'
import { chromium, startLnk } from './_server'

const DAY = 86_400_000
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
const HOSTILE = '"><script>alert(1)</script>'

const envs: TestEnv[] = []
afterAll(async () => {
  for (const env of envs) await env.cleanup()
})

async function fresh(clock?: ManualClock) {
  const env = await redirectEnv({ clock })
  envs.push(env)
  return env
}

const statsOf = (env: TestEnv, slug: string, init: RequestInit = {}) => visit(env, `${slug}+`, { method: init.method })

/** The figures of a stats page, read back from its HTML. */
function figures(html: string) {
  const strong = (label: string) =>
    Number(new RegExp(`<strong>([\\d,]+)</strong><span class="muted">${label}</span>`).exec(html)?.[1]?.replace(/,/g, '') ?? NaN)
  const days: Record<string, number> = {}
  const table = /<table class="sr-only">(.*?)<\/table>/.exec(html)?.[1] ?? ''
  for (const m of table.matchAll(/<tr><th scope="row">(\d{4}-\d\d-\d\d)<\/th><td>(\d+)<\/td><\/tr>/g)) days[m[1]!] = Number(m[2])
  const top = (id: string) => {
    const t = new RegExp(`<table class="top" aria-labelledby="${id}">(.*?)</table>`).exec(html)?.[1] ?? ''
    return [...t.matchAll(/<span class="label">(.*?)<\/span><\/th><td>([\d,]+)<\/td>/g)].map((m) => [m[1]!, Number(m[2]!.replace(/,/g, ''))] as const)
  }
  return { total: strong('total clicks'), unique: strong('unique visitors'), days, countries: top('countries'), referrers: top('referrers') }
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

describe('gating', () => {
  test('404 without publicStatsEnabled, 200 with it, 404 again right after PATCH false (the page cache follows the link)', async () => {
    const env = await fresh()
    const api = await account(env)
    const link = await api.make({ destinationUrl: 'https://example.com/gated', title: 'Gated' })
    expect(link.publicStatsEnabled).toBe(false)

    const off = await statsOf(env, link.slug)
    expect(off.status).toBe(404)
    expect(off.headers.get('x-robots-tag')).toBe('noindex')
    expect(await off.text()).toContain('Link not found')

    expect((await api.patch(link.id, { publicStatsEnabled: true })).status).toBe(200)
    const on = await statsOf(env, link.slug)
    expect(on.status).toBe(200)
    expect(on.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(on.headers.get('x-robots-tag')).toBe('noindex')
    expect(on.headers.get('content-security-policy')).not.toContain('script-src')
    const html = await on.text()
    expect(html).toContain('Link statistics')
    expect(html).toContain(`${link.shortUrl}</p>`)
    expect(html).toContain('<p class="title">Gated</p>')
    // Served from the cache the second time, body intact.
    expect(await (await statsOf(env, link.slug)).text()).toBe(html)
    // HEAD answers like GET; POST is not a stats request.
    expect((await statsOf(env, link.slug, { method: 'HEAD' })).status).toBe(200)
    expect((await statsOf(env, link.slug, { method: 'POST' })).status).toBe(404)

    // A changed title shows at once, cache or not.
    expect((await api.patch(link.id, { title: 'Renamed' })).status).toBe(200)
    expect(await (await statsOf(env, link.slug)).text()).toContain('<p class="title">Renamed</p>')

    expect((await api.patch(link.id, { publicStatsEnabled: false })).status).toBe(200)
    expect((await statsOf(env, link.slug)).status).toBe(404)
    // The redirect itself is untouched by the switch.
    expect((await visit(env, link.slug, { ip: '203.0.113.1' })).status).toBe(302)
  })

  test('unknown slugs, inactive links and test links have no stats page', async () => {
    const env = await fresh()
    const api = await account(env)
    expect((await statsOf(env, 'no-such-link')).status).toBe(404)
    const sandbox = await api.make({ destinationUrl: 'https://example.com/sandbox', publicStatsEnabled: true }, api.testKey)
    expect(sandbox.publicStatsEnabled).toBe(true)
    const res = await statsOf(env, sandbox.slug)
    expect(res.status).toBe(404)
    expect(res.headers.get('x-robots-tag')).toBe('noindex')
    const paused = await api.make({ destinationUrl: 'https://example.com/paused', publicStatsEnabled: true })
    expect((await statsOf(env, paused.slug)).status).toBe(200)
    expect((await api.patch(paused.id, { isActive: false })).status).toBe(200)
    expect((await statsOf(env, paused.slug)).status).toBe(404)
  })
})

describe('figures', () => {
  test('totals, clicks per UTC day over 30 days, top countries and referrers; bots left out; a minute of cache', async () => {
    const today = Date.UTC(2026, 2, 10)
    const clock = new ManualClock(today - 40 * DAY)
    const env = await fresh(clock)
    const api = await account(env)
    const link = await api.make({ destinationUrl: 'https://example.com/figures?campaign=private-token', publicStatsEnabled: true })
    const go = async (at: number, ip: string, o: { ua?: string; referer?: string } = {}) => {
      clock.set(at)
      const res = await visit(env, link.slug, { ip, ...o })
      expect(res.status).toBe(302)
    }

    // 35 days ago: outside the window, still part of the all-time totals.
    await go(today - 35 * DAY, '8.8.8.8', { referer: 'https://old.example/' })
    // The first day of the window (today - 29 days), at its very first millisecond.
    await go(today - 29 * DAY, '8.8.4.4', { ua: UA.firefox, referer: 'https://news.example.org/a' })
    // Yesterday's last millisecond and today's first: two different days.
    await go(today - 1, '1.1.1.1', { ua: UA.iphone })
    await go(today, '8.8.8.8', { referer: 'https://news.example.org/b' })
    await go(today + 5 * 3_600_000, '8.8.8.8') // the same visitor again: a click, not a new visitor
    await go(today + 6 * 3_600_000, '203.0.113.20', { ua: UA.android, referer: 'https://t.co/x' })
    await go(today + 7 * 3_600_000, '10.0.0.7', { ua: UA.chromeMac, referer: 'https://news.example.org/c' })
    // Bots: recorded as bot hits, on no figure of the page.
    await go(today + 8 * 3_600_000, '9.9.9.9', { ua: GOOGLEBOT, referer: 'https://bots.example/' })
    await go(today + 8 * 3_600_000, '9.9.9.9', { ua: 'curl/8.5.0', referer: 'https://bots.example/' })
    await env.rt.modules.clicks.buffer.flush()
    expect((await clicksOf(env, link.id)).filter((c) => c.is_bot)).toHaveLength(2)

    clock.set(today + 12 * 3_600_000)
    const res = await statsOf(env, link.slug)
    expect(res.status).toBe(200)
    const html = await res.text()
    const f = figures(html)
    const countryOf = async (ip: string) =>
      (await sql<{ country: string | null }>(env, 'SELECT country FROM clicks WHERE link_id = ? AND NOT is_bot ORDER BY clicked_at', link.id))[
        ['8.8.8.8', '8.8.4.4', '1.1.1.1', '8.8.8.8', '8.8.8.8', '203.0.113.20', '10.0.0.7'].indexOf(ip)
      ]!.country
    expect(await countryOf('8.8.8.8')).toBe('US')

    expect(f.total).toBe(7)
    expect(f.unique).toBe(5)
    expect(Object.keys(f.days)).toHaveLength(30)
    const first = today - 29 * DAY
    expect(Object.keys(f.days)[0]).toBe(isoDay(first))
    expect(Object.keys(f.days).at(-1)).toBe(isoDay(today))
    const expected: Record<string, number> = {}
    for (let i = 0; i < 30; i++) expected[isoDay(first + i * DAY)] = 0
    expected[isoDay(first)] = 1
    expected[isoDay(today - DAY)] = 1
    expected[isoDay(today)] = 4
    expect(f.days).toEqual(expected)

    // In the window: 8.8.4.4, 1.1.1.1 and three from 8.8.8.8 minus the old one => US 3 (+1 when 1.1.1.1 is
    // placed in the US), two without a country (documentation and private addresses).
    const oneOne = await countryOf('1.1.1.1')
    const counted = new Map<string, number>([
      ['United States (US)', 3],
      ['Unknown', 2],
    ])
    if (oneOne === 'US') counted.set('United States (US)', 4)
    else if (oneOne) counted.set(new Intl.DisplayNames(['en'], { type: 'region' }).of(oneOne) + ` (${oneOne})`, 1)
    else counted.set('Unknown', 3)
    expect(new Map(f.countries)).toEqual(counted)
    expect(f.countries[0]).toEqual(['United States (US)', counted.get('United States (US)')!])

    expect(f.referrers).toEqual([
      ['news.example.org', 3],
      ['direct', 2],
      ['t.co', 1],
    ])
    expect(html).not.toContain('bots.example')
    expect(html).not.toContain('old.example')
    // The chart: an accessible SVG with axis labels.
    expect(html).toMatch(
      /<svg class="chart" viewBox="[^"]+" role="img" aria-labelledby="chart-title" aria-label="Clicks per day from Feb 9 to Mar 10 \(UTC\): 6 clicks in total, most on Mar 10 \(4\)\."/,
    )
    expect(html).toContain('<title id="chart-title">Clicks per day from Feb 9 to Mar 10 (UTC): 6 clicks in total, most on Mar 10 (4).</title>')
    expect(html).toContain('>Feb 9</text>')
    expect(html).toContain('>Mar 10</text>')
    expect(html.match(/<rect class="bar"/g)).toHaveLength(3)

    // Nothing private: no destination, no visitor hashes, no user agents, no addresses.
    expect(html).not.toContain('private-token')
    expect(html).not.toContain('example.com/figures')
    for (const c of await clicksOf(env, link.id)) expect(html).not.toContain(c.visitor_hash)
    expect(html).not.toContain('Mozilla')
    expect(html).not.toContain('8.8.')

    // More clicks: the page is kept a minute, then shows them.
    await go(today + 12 * 3_600_000, '8.8.4.4', { ua: UA.chromeMac })
    await env.rt.modules.clicks.buffer.flush()
    clock.set(today + 12 * 3_600_000 + 59_999)
    expect(figures(await (await statsOf(env, link.slug)).text()).total).toBe(7)
    clock.set(today + 12 * 3_600_000 + 60_000)
    const later = figures(await (await statsOf(env, link.slug)).text())
    expect(later.total).toBe(8)
    expect(later.unique).toBe(6)
    expect(later.days[isoDay(today)]).toBe(5)

    // Next day: the window moves on by one UTC day.
    clock.set(today + DAY + 61_000)
    const tomorrow = figures(await (await statsOf(env, link.slug)).text())
    expect(Object.keys(tomorrow.days)[0]).toBe(isoDay(first + DAY))
    expect(tomorrow.days[isoDay(first)]).toBeUndefined()
    expect(tomorrow.days[isoDay(today)]).toBe(5)
    expect(tomorrow.days[isoDay(today + DAY)]).toBe(0)
  })

  test('a hostile title and referrer hosts are escaped; the page carries no script', async () => {
    const env = await fresh()
    const api = await account(env)
    const link = await api.make({ destinationUrl: 'https://example.com/x', title: HOSTILE, publicStatsEnabled: true })
    // Quotes and ampersands survive URL parsing into a referrer host.
    expect((await visit(env, link.slug, { ip: '203.0.113.30', referer: `http://evil"'&x.example/` })).status).toBe(302)
    await env.rt.modules.clicks.buffer.flush()
    expect((await clicksOf(env, link.id))[0]!.referrer_host).toBe(`evil"'&x.example`)
    // A stored host or country no browser could send (an import, another writer): escaped all the same.
    // The page reads the link's day rollups, so that is where such values are planted.
    const dims = JSON.stringify({ country: { '<b>': 1 }, referrer: { [HOSTILE]: 1, 'evil"\'&x.example': 1 } })
    await sql(env, "UPDATE link_rollups SET dims = ?, clicks = 2 WHERE link_id = ? AND grain = 'day'", dims, link.id)
    const html = await (await statsOf(env, link.slug)).text()
    expect(html).not.toContain('<script')
    expect(html).not.toContain('<b>')
    expect(html).not.toContain(`evil"'&x`)
    expect(html).toContain('<p class="title">&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;</p>')
    expect(html).toContain('<span class="label">&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;</span>')
    expect(html).toContain('<span class="label">evil&#34;&#39;&#38;x.example</span>')
    expect(html).toContain('<title>Statistics of http://localhost:8080/')
  })
})

describe('in a browser', () => {
  test('renders legibly on a phone (390x844): screenshot at /tmp/stats.png', async () => {
    const lnk = await startLnk()
    try {
      const api = await account(lnk.env)
      const link = await api.make({ destinationUrl: 'https://example.com/launch', title: 'Spring launch announcement', publicStatsEnabled: true })
      // A few real clicks over the loopback server, then a month of history written straight into the table.
      for (const referer of ['https://news.ycombinator.com/item', 'https://t.co/abc', '', 'https://www.google.com/']) {
        const res = await fetch(link.shortUrl, { redirect: 'manual', headers: { 'user-agent': UA.iphone, ...(referer ? { referer } : {}) } })
        expect(res.status).toBe(302)
      }
      await lnk.env.rt.modules.clicks.buffer.flush()
      const now = Date.now()
      const countries = ['US', 'DE', 'GB', 'FR', 'IN', 'BR', 'JP', 'CA', 'NL', 'SE', 'ES']
      const hosts = [
        null,
        'news.ycombinator.com',
        't.co',
        'www.google.com',
        'www.linkedin.com',
        'l.facebook.com',
        'www.reddit.com',
        'duckduckgo.com',
        'mail.example.org',
        'lobste.rs',
        'old.example',
      ]
      let n = 0
      for (let d = 0; d < 30; d++) {
        const perDay = Math.round(4 + 3 * Math.sin(d / 3) + d / 3)
        for (let i = 0; i < perDay; i++, n++) {
          await sql(
            lnk.env,
            'INSERT INTO clicks (id, link_id, workspace_id, clicked_at, visitor_hash, referrer_host, country, is_bot) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
            `clk_seed${n}`,
            link.id,
            api.workspaceId,
            now - d * DAY - i * 1000,
            `v${n % 40}`,
            hosts[n % 3 === 0 ? 0 : (n * 7) % hosts.length] ?? null,
            countries[n % 2 === 0 ? 0 : (n * 5) % countries.length],
            false,
          )
        }
      }
      await sql(lnk.env, 'UPDATE links SET total_clicks = total_clicks + ?, unique_clicks = unique_clicks + 40 WHERE id = ?', n, link.id)

      const url = `${link.shortUrl}+`
      const html = await (await fetch(url, { headers: { 'user-agent': UA.iphone } })).text()
      expect(html).toContain('Spring launch announcement')
      const file = '/tmp/stats.png'
      const run = await chromium([`--user-agent=${UA.iphone}`, '--window-size=390,844', `--screenshot=${file}`, url], 45_000)
      expect({ timedOut: run.timedOut, code: run.code }).toEqual({ timedOut: false, code: 0 })
      expect(existsSync(file)).toBe(true)
      expect(statSync(file).size).toBeGreaterThan(10_000)
      const png = PNG.sync.read(readFileSync(file))
      expect({ width: png.width, height: png.height }).toEqual({ width: 390, height: 844 })
    } finally {
      await lnk.stop()
    }
  }, 60_000)
})
