// The console's analytics screens in a real browser against a real server: a desktop visit to a short link
// shows in the link's chart, table, totals and bar lists (issue 19, e2e step 5); the range buttons and the
// custom dates ask the API for the range they name; a key without analytics:read sees no Analytics entry and
// words instead of figures; an empty workspace says so. Every screen is checked at phone and desktop widths.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { account } from '../redirect/_redirect'
import { call, DESKTOP, PHONE, startConsoleServer, UA, withConsole, type ConsolePage, type ConsoleServer } from './_console'

let server: ConsoleServer
let link: any
/** When the visit was made, to check the click landed in the bucket holding it. */
let visitedAt = 0

beforeAll(async () => {
  // Visitors' addresses from X-Forwarded-For, so the visit has a public address with a country.
  server = await startConsoleServer({ LNK_TRUST_PROXY: '1' })
  link = await call(server, 'POST', '/links', { destinationUrl: 'https://example.com/spring', title: 'Spring sale', conversionTracking: true })
  visitedAt = Date.now()
  const res = await fetch(link.shortUrl, {
    headers: { 'user-agent': UA.chrome, 'x-forwarded-for': '8.8.8.8', accept: 'text/html,application/xhtml+xml' },
    redirect: 'manual',
  })
  expect(res.status).toBeGreaterThanOrEqual(301)
  expect(res.status).toBeLessThanOrEqual(308)
  const location = new URL(res.headers.get('location')!)
  expect(location.origin + location.pathname).toBe('https://example.com/spring')
  // The visitor buys something: the destination's beacon, as docs/conversions.md describes it.
  const conversion = await fetch(`${server.origin}/v1/conversions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clickId: location.searchParams.get('lnk_cid'), eventName: 'purchase', value: 19.99, currency: 'EUR' }),
  })
  expect(conversion.status).toBeLessThan(300)
})
afterAll(() => server.stop())

/** The figure shown under a total's label ("Clicks", "Revenue", …). */
const stat = (label: string) =>
  `[...document.querySelectorAll('dl.totals > div')].find((d) => d.querySelector('dt').textContent === ` +
  `${JSON.stringify(label)})?.querySelector('dd').textContent`

/** Polls the page until the Clicks total reads `want`, pressing Refresh whenever the figures are not loading. */
async function untilClicks(page: ConsolePage, want: string) {
  await page.waitFor(`(() => {
    if (${stat('Clicks')} === ${JSON.stringify(want)}) return true
    const refresh = [...document.querySelectorAll('main button')].find((b) => b.textContent.trim() === 'Refresh')
    if (refresh && !refresh.disabled && !document.querySelector('.figures[aria-busy="true"]')) refresh.click()
    return false
  })()`)
}

/** The text of one bar list ("Countries", "Browsers", …). */
const barList = (page: ConsolePage, title: string) =>
  page.evaluate<string>(`document.querySelector('section.breakdown[aria-label=${JSON.stringify(title)}]')?.innerText ?? ''`)

/** The query strings of the console's timeline requests, as the browser sent them. */
function timelineRequests(page: ConsolePage): URLSearchParams[] {
  const seen: URLSearchParams[] = []
  page.onEvent((method, params) => {
    if (method !== 'Fetch.requestPaused') return
    const url = new URL(params.request.url)
    if (url.pathname === '/v1/analytics/timeline') seen.push(url.searchParams)
  })
  return seen
}

describe('console analytics', () => {
  test("a desktop visit shows in the link's chart, table, totals and bar lists", async () => {
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(server.api.key)
      await page.open(`/analytics/links/${link.id}?range=24h`)
      await page.see('Analytics: Spring sale')
      await untilClicks(page, '1')
      expect(await page.evaluate<string>(stat('Unique visitors'))).toBe('1')
      expect(await page.evaluate<string>(stat('Conversions'))).toBe('1')
      expect(await page.evaluate<string>(stat('Revenue'))).toContain('19.99')

      // The chart is drawn, and says what it shows in words.
      expect(await page.evaluate<number>(`document.querySelectorAll('.chart canvas').length`)).toBeGreaterThan(0)
      const label = await page.evaluate<string>(`document.querySelector('.chart[role=img]').getAttribute('aria-label')`)
      expect(label).toContain('1 click in')

      // The table row with one click is the API's bucket for the same range, and it holds the visit's time.
      const tz = await page.evaluate<string>('Intl.DateTimeFormat().resolvedOptions().timeZone')
      const [from, to] = await page.evaluate<string[]>(`[...document.querySelectorAll('.range-line time')].map((t) => t.dateTime)`)
      const timeline = await call(
        server,
        'GET',
        `/analytics/timeline?from=${encodeURIComponent(from!)}&to=${encodeURIComponent(to!)}&tz=${encodeURIComponent(tz)}&interval=hour&linkId=${link.id}`,
      )
      const clicked = timeline.buckets.filter((b: any) => b.clicks > 0)
      expect(clicked).toHaveLength(1)
      const bucket = clicked[0]
      expect(Date.parse(bucket.start)).toBeLessThanOrEqual(visitedAt)
      expect(Date.parse(bucket.start) + 3_600_000).toBeGreaterThan(visitedAt)
      const rows = await page.evaluate<{ start: string; clicks: string }[]>(
        `[...document.querySelectorAll('.chart-table tbody tr')].map((tr) => ({ start: tr.dataset.start, clicks: tr.querySelector('td').textContent }))`,
      )
      expect(rows.length).toBe(timeline.buckets.length)
      expect(rows.filter((r) => r.clicks !== '0')).toEqual([{ start: bucket.start, clicks: '1' }])
      expect(bucket.conversions).toBe(1)

      // Where the click came from: a desktop Chrome on Linux in the United States, typed in directly.
      expect(await barList(page, 'Countries')).toContain('United States')
      expect(await barList(page, 'Devices')).toContain('Desktop')
      expect(await barList(page, 'Browsers')).toContain('Chrome')
      expect(await barList(page, 'Operating systems')).toContain('Linux')
      expect(await barList(page, 'Referrers')).toContain('Direct (no referrer)')
      expect(await page.evaluate<string>(`document.querySelector('.link-facts').innerText`)).toContain(link.shortUrl)
      expect(
        await page.evaluate<string | null>(`[...document.querySelectorAll('main a')].find((a) => a.textContent === 'Link settings')?.getAttribute('href')`),
      ).toBe(`#/links/${link.id}`)

      await page.press('Show the figures as a table')
      await page.checkScreen('analytics-link')
      await page.colorScheme('dark')
      // The chart is drawn again in the dark scheme's colours (read from the stylesheet's variables).
      await page.checkScreen('analytics-link-dark')
      await page.colorScheme('light')

      // The workspace overview counts the same click and leads to the link.
      await page.press('← All analytics')
      await page.waitFor(`location.hash === '#/analytics?range=24h'`)
      await untilClicks(page, '1')
      expect(await page.evaluate<string>(stat('Links'))).toBe('1')
      await page.waitFor(`document.querySelectorAll('section[aria-labelledby=top-links] tbody a').length > 0`)
      const top = await page.evaluate<{ text: string; href: string }[]>(
        `[...document.querySelectorAll('section[aria-labelledby=top-links] tbody a')].map((a) => ({ text: a.textContent, href: a.getAttribute('href') }))`,
      )
      expect(top).toEqual([
        { text: 'Spring sale', href: `#/analytics/links/${link.id}?range=24h` },
        { text: 'Settings', href: `#/links/${link.id}` },
      ])
      await page.checkScreen('analytics-workspace')
    })
  }, 30_000)

  test('each range asks the API for that range, and a custom one is checked first', async () => {
    await withConsole(server, PHONE, async (page) => {
      const asked = timelineRequests(page)
      await page.signIn(server.api.key)
      await page.open('/analytics')
      await page.see('Clicks over time')
      const tz = await page.evaluate<string>('Intl.DateTimeFormat().resolvedOptions().timeZone')
      /** The browser's local date `days` days ago, or the first of the month `months` months ago. */
      const localDate = (expr: string) =>
        page.evaluate<string>(
          `(() => { const d = ${expr}; return d.getFullYear() + '-' + String(d.getMonth() + 1).padStart(2, '0') + '-' + String(d.getDate()).padStart(2, ` +
            `'0') })()`,
        )
      const last = () => Object.fromEntries(asked.at(-1)!)

      // The default is 30 days, in days, in the viewer's zone.
      await untilClicks(page, '1')
      expect(last()).toEqual({
        from: await localDate('new Date(new Date().getFullYear(), new Date().getMonth(), new Date().getDate() - 29)'),
        tz,
        interval: 'day',
      })
      await page.checkScreen('analytics-workspace')

      await page.press('12 months')
      await page.waitFor(`location.hash.includes('range=12m')`)
      await page.waitFor(`document.querySelector('.range-line')?.innerText.includes('per month')`)
      expect(last()).toEqual({ from: await localDate('new Date(new Date().getFullYear(), new Date().getMonth() - 11, 1)'), tz, interval: 'month' })
      // What the page shows is the API's answer for the same question.
      const year = await call(server, 'GET', `/analytics/overview?from=${last().from}&tz=${encodeURIComponent(tz)}`)
      expect(await page.evaluate<string>(stat('Clicks'))).toBe(String(year.totals.clicks))
      expect(await page.evaluate<number>(`document.querySelectorAll('.chart-table tbody tr').length`)).toBe(12)

      await page.press('24 hours')
      await page.waitFor(`document.querySelector('.range-line')?.innerText.includes('per hour')`)
      expect(last().interval).toBe('hour')
      const from = Date.parse(last().from!)
      expect(Math.abs(Date.now() - 86_400_000 - from)).toBeLessThan(60_000)
      await untilClicks(page, '1')

      await page.press('7 days')
      await page.waitFor(`location.hash.includes('range=7d')`)
      await page.waitFor(`document.querySelectorAll('.chart-table tbody tr').length === 7`)
      expect(last()).toEqual({
        from: await localDate('new Date(new Date().getFullYear(), new Date().getMonth(), new Date().getDate() - 6)'),
        tz,
        interval: 'day',
      })

      // A custom range with its end before its start is refused in words, and not asked for.
      const before = asked.length
      await page.press('Custom')
      await page.fill('From', '2024-02-10')
      await page.fill('To', '2024-02-01')
      await page.press('Show range')
      await page.see('The end date must be on or after the start date.')
      // Said at the end date's field, and tied to it for screen readers.
      const described = await page.evaluate<string>(`(() => {
        const input = document.getElementById([...document.querySelectorAll('label')].find((l) => l.textContent === 'To').htmlFor)
        return input.getAttribute('aria-invalid') + ' ' + document.getElementById(input.getAttribute('aria-describedby')).textContent
      })()`)
      expect(described).toBe('true The end date must be on or after the start date.')
      expect(asked.length).toBe(before)
      await page.checkScreen('analytics-custom-error')

      // A month before the link existed: asked for exactly, and nothing in it.
      await page.fill('To', '2024-02-29')
      await page.press('Show range')
      await page.waitFor(`location.hash === '#/analytics?range=custom&from=2024-02-10&to=2024-02-29'`)
      await untilClicks(page, '0')
      expect(last()).toEqual({ from: '2024-02-10', to: '2024-02-29', tz, interval: 'day' })
      await page.see('No clicks or conversions in this range.')
      await page.see('No link had clicks or conversions in this range.')
      await page.checkScreen('analytics-custom')
    })
  }, 30_000)

  test('the link screen at phone width, and an unknown link', async () => {
    await withConsole(server, PHONE, async (page) => {
      await page.signIn(server.api.key)
      await page.open(`/analytics/links/${link.id}?range=30d`)
      await untilClicks(page, '1')
      await page.checkScreen('analytics-link')
      await page.open('/analytics/links/lnk_doesnotexist')
      await page.waitFor(`document.querySelector('main [role=alert]') !== null`)
      await page.see('Try again')
      await page.checkScreen('analytics-link-unknown')
    })
  }, 30_000)

  test('a key without analytics:read sees no Analytics entry, and words if it opens the address', async () => {
    const reader = await call(server, 'POST', '/api-keys', { name: 'links only', permissions: ['links:read'] })
    for (const size of [PHONE, DESKTOP]) {
      await withConsole(server, size, async (page) => {
        await page.signIn(reader.key)
        const nav = await page.evaluate<string[]>(`[...document.querySelectorAll('nav.main-nav a')].map((a) => a.textContent)`)
        expect(nav).toContain('Links')
        expect(nav).not.toContain('Analytics')
        await page.open('/analytics')
        await page.see('This API key cannot read analytics')
        expect(await page.evaluate<number>(`document.querySelectorAll('dl.totals, .chart').length`)).toBe(0)
        await page.checkScreen('analytics-forbidden')
        await page.open(`/analytics/links/${link.id}`)
        await page.see('This API key cannot read analytics')
      })
    }
  }, 30_000)

  test('an empty workspace says it has nothing to count', async () => {
    const empty = await account(server.lnk.env)
    for (const size of [PHONE, DESKTOP]) {
      await withConsole(server, size, async (page) => {
        await page.signIn(empty.key)
        await page.open('/analytics')
        await page.see('This workspace has no links yet')
        expect(await page.evaluate<string>(stat('Clicks'))).toBe('0')
        await page.see('Create a link')
        if (size === DESKTOP) await page.colorScheme('dark')
        await page.checkScreen(size === DESKTOP ? 'analytics-empty-dark' : 'analytics-empty')
      })
    }
  }, 30_000)
})
