// The visitor pages in a real browser (headless Chromium against a loopback lnk): the captcha page's
// inline proof-of-work really solves the ALTCHA challenge and submits it, ending at the destination; and
// screenshots of the pages people look at render with readable text (set LNK_SCREENSHOT_DIR to keep them).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import { axeViolations } from '../pages/_browser'
import { account, clicksOf, CRAWLERS, UA, type Api } from './_redirect'
import { chromium, requireChromium, startLnk, startReceiver, withBrowserPage, type Lnk } from './_server'

let lnk: Lnk
let api: Api
let receiver: ReturnType<typeof startReceiver>
const keep = process.env.LNK_SCREENSHOT_DIR
const shots = keep ?? mkdtempSync(join(tmpdir(), 'lnk-shots-'))

beforeAll(async () => {
  lnk = await startLnk()
  api = await account(lnk.env)
  receiver = startReceiver()
  mkdirSync(shots, { recursive: true })
})
afterAll(async () => {
  receiver?.stop()
  await lnk?.stop()
  if (!keep) rmSync(shots, { recursive: true, force: true })
})

test('Chromium is installed (CI installs it; locally: apt-get install -y chromium)', () => {
  expect(requireChromium()).toBeTruthy()
})

describe('captcha in a browser', () => {
  test('the inline script solves the challenge, posts it, and the browser lands on the destination; the click is counted once', async () => {
    const link = await api.make({ destinationUrl: `${receiver.origin}/landed?from=lnk`, captchaEnabled: true })
    const before = receiver.hits.length
    const run = await chromium([`--user-agent=${UA.chrome}`, '--virtual-time-budget=15000', '--dump-dom', `${link.shortUrl}?ref=browser`], 30_000)
    expect({ timedOut: run.timedOut, code: run.code }).toEqual({ timedOut: false, code: 0 })
    // The DOM Chromium ended on is the receiver's page: the browser got past the challenge.
    expect(run.stdout).toContain('landed at /landed')
    expect(run.stdout).not.toContain('Checking your browser')
    const hits = receiver.hits.slice(before)
    expect(hits).toEqual([{ method: 'GET', path: '/landed?from=lnk&ref=browser', userAgent: UA.chrome }])
    await lnk.env.rt.modules.clicks.buffer.flush()
    const clicks = await clicksOf(lnk.env, link.id)
    expect(clicks).toHaveLength(1)
    expect(clicks[0]!.user_agent).toBe(UA.chrome)
  }, 90_000)

  test('without JavaScript the page stays on the challenge (the proof of work is what passes the check)', async () => {
    const link = await api.make({ destinationUrl: `${receiver.origin}/nojs`, captchaEnabled: true })
    const before = receiver.hits.length
    const file = join(shots, 'captcha-nojs-mobile.png')
    await withBrowserPage({ userAgent: UA.iphone, javaScript: false, width: 390, height: 844 }, async (page) => {
      await page.goto(link.shortUrl)
      // Give a working script ample time to have solved and posted (it takes well under a second).
      await Bun.sleep(3_000)
      expect(await page.evaluate('location.href')).toBe(link.shortUrl)
      expect(await page.evaluate('document.body.innerText')).toContain('This check needs JavaScript')
      expect(await page.evaluate('document.getElementById("altcha").value')).toBe('')
      await page.screenshot(file)
    })
    expect(inkOf(file).ink).toBeGreaterThan(0.004)
    expect(receiver.hits.slice(before)).toEqual([])
    await lnk.env.rt.modules.clicks.buffer.flush()
    expect(await clicksOf(lnk.env, link.id)).toHaveLength(0)
  }, 90_000)
})

describe('the password and consent forms in a browser', () => {
  test('typing a wrong then the right password and pressing Continue ends at the destination, query kept', async () => {
    const link = await api.make({ destinationUrl: `${receiver.origin}/pw-landed`, password: 'typed-in-browser' })
    const before = receiver.hits.length
    await withBrowserPage({ userAgent: UA.chrome }, async (page) => {
      await page.goto(`${link.shortUrl}?ref=form`)
      expect(await page.evaluate('document.title')).toBe('Password required')
      await page.evaluate(`document.getElementById('pw').value = 'not-it'; document.querySelector('button[type=submit]').click()`)
      await page.waitFor(`document.querySelector('.error') !== null`)
      expect(await page.evaluate('document.querySelector(".error").textContent')).toContain('not right')
      await page.evaluate(`document.getElementById('pw').value = 'typed-in-browser'; document.querySelector('button[type=submit]').click()`)
      await page.waitFor(`location.href.startsWith(${JSON.stringify(receiver.origin)})`)
      expect(await page.evaluate('location.href')).toBe(`${receiver.origin}/pw-landed?ref=form`)
      // The cookie now opens the link directly.
      await page.goto(link.shortUrl)
      expect(await page.evaluate('location.href')).toBe(`${receiver.origin}/pw-landed`)
      expect(page.messages.filter((m) => /Content Security Policy/i.test(m))).toEqual([])
    })
    expect(receiver.hits.slice(before).map((h) => h.path)).toEqual(['/pw-landed?ref=form', '/pw-landed'])
    await lnk.env.rt.modules.clicks.buffer.flush()
    expect(await clicksOf(lnk.env, link.id)).toHaveLength(2)
  }, 60_000)

  test('Continue on the consent page ends at the destination; Go back returns to the previous page', async () => {
    const link = await api.make({ destinationUrl: `${receiver.origin}/consented`, consentRequired: true })
    await withBrowserPage({ userAgent: UA.chrome }, async (page) => {
      await page.goto(`${receiver.origin}/before-consent`)
      await page.goto(link.shortUrl)
      expect(await page.evaluate('document.title')).toBe('You are leaving this site')
      await page.evaluate(`document.getElementById('back').click()`)
      await page.waitFor(`location.href === ${JSON.stringify(`${receiver.origin}/before-consent`)}`, 5_000)
      await page.goto(link.shortUrl)
      await page.evaluate(`document.querySelector('button[type=submit]').click()`)
      await page.waitFor(`location.href === ${JSON.stringify(`${receiver.origin}/consented`)}`)
      expect(page.messages.filter((m) => /Content Security Policy/i.test(m))).toEqual([])
    })
  }, 60_000)
})

/** Share of pixels that stand out from the page background (text, borders), and of the accent blue. */
function inkOf(file: string) {
  const png = PNG.sync.read(readFileSync(file))
  const luma = (i: number) => 0.2126 * png.data[i]! + 0.7152 * png.data[i + 1]! + 0.0722 * png.data[i + 2]!
  const background = luma(0)
  let ink = 0
  let accent = 0
  for (let i = 0; i < png.data.length; i += 4) {
    if (Math.abs(luma(i) - background) > 90) ink++
    const [r, b] = [png.data[i]!, png.data[i + 2]!]
    if (b > 150 && b - r > 60) accent++
  }
  const pixels = png.width * png.height
  return { width: png.width, height: png.height, background, ink: ink / pixels, accent: accent / pixels }
}

/** WCAG relative luminance of an sRGB pixel. */
function luminance(r: number, g: number, b: number) {
  const lin = (c: number) => {
    const s = c / 255
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

/**
 * Contrast ratio between the first filled accent button of a screenshot and its label: the button is the
 * first run of at least 40 accent pixels; its label is the pixel inside it that differs most from it.
 */
function buttonContrast(file: string) {
  const png = PNG.sync.read(readFileSync(file))
  const at = (x: number, y: number) => {
    const i = (y * png.width + x) * 4
    return [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!] as const
  }
  const isAccent = (x: number, y: number) => {
    const [r, , b] = at(x, y)
    return b > 150 && b - r > 60
  }
  let box: { x0: number; x1: number; y0: number; y1: number } | null = null
  for (let y = 0; y < png.height && !box; y++) {
    let run = 0
    for (let x = 0; x < png.width; x++) {
      run = isAccent(x, y) ? run + 1 : 0
      if (run === 40) {
        const x0 = x - 39
        let x1 = x
        while (x1 + 1 < png.width && isAccent(x1 + 1, y)) x1++
        // Down the left padding (no label there) to the bottom edge.
        let y1 = y
        while (y1 + 1 < png.height && isAccent(x0 + 4, y1 + 1)) y1++
        box = { x0, x1, y0: y, y1 }
        break
      }
    }
  }
  if (!box || box.y1 - box.y0 < 10) throw new Error(`no filled button in ${file}`)
  // The button's colour: the most common one inside it.
  const counts = new Map<string, number>()
  for (let y = box.y0; y <= box.y1; y++) for (let x = box.x0; x <= box.x1; x++) counts.set(at(x, y).join(','), (counts.get(at(x, y).join(',')) ?? 0) + 1)
  const bg = [...counts]
    .sort((a, b) => b[1] - a[1])[0]![0]
    .split(',')
    .map(Number) as [number, number, number]
  const bgL = luminance(...bg)
  let best = bgL
  for (let y = box.y0; y <= box.y1; y++) {
    for (let x = box.x0; x <= box.x1; x++) {
      const l = luminance(...at(x, y))
      if (Math.abs(l - bgL) > Math.abs(best - bgL)) best = l
    }
  }
  return (Math.max(bgL, best) + 0.05) / (Math.min(bgL, best) + 0.05)
}

describe('screenshots of the visitor pages', () => {
  const pages: { name: string; path: () => Promise<string>; ua?: string; text: string; button?: boolean }[] = [
    { name: '404', path: async () => `${lnk.origin}/no-such-link`, text: 'Link not found' },
    {
      name: '410',
      path: async () => {
        const link = await api.make({ destinationUrl: 'https://example.com/used-up', clickLimit: 1 })
        const first = await fetch(link.shortUrl, { redirect: 'manual', headers: { 'user-agent': UA.chrome } })
        expect(first.status).toBe(302)
        return link.shortUrl
      },
      text: 'This link is no longer available',
    },
    {
      name: 'sandbox',
      path: async () =>
        (await api.make({ destinationUrl: 'https://example.com/a/rather/long/path/that/has/to/wrap?campaign=spring&utm_source=newsletter' }, api.testKey))
          .shortUrl,
      text: 'Test link',
    },
    {
      name: 'password',
      path: async () => (await api.make({ destinationUrl: 'https://example.com/members', password: 'hunter2-long' })).shortUrl,
      text: 'Password required',
      button: true,
    },
    {
      name: 'consent',
      path: async () => (await api.make({ destinationUrl: 'https://example.com/elsewhere?ref=lnk', consentRequired: true })).shortUrl,
      text: 'Continue to another site?',
      button: true,
    },
    {
      name: 'preview',
      path: async () =>
        (
          await api.make({
            destinationUrl: 'https://example.com/article',
            ogTitle: 'A preview title & more',
            ogDescription: 'What crawlers show <b>under</b> the title',
            ogImageUrl: 'https://example.com/og.png',
          })
        ).shortUrl,
      ua: CRAWLERS.facebook,
      text: 'A preview title &#38; more',
    },
  ]

  for (const page of pages) {
    test(`${page.name} page renders legibly on a phone (390x844)`, async () => {
      const url = await page.path()
      // What the browser will be shown, checked first over HTTP.
      const html = await (await fetch(url, { redirect: 'manual', headers: { 'user-agent': page.ua ?? UA.iphone } })).text()
      expect(html).toContain(page.text)
      const file = join(shots, `${page.name}-mobile.png`)
      const run = await chromium([`--user-agent=${page.ua ?? UA.iphone}`, '--window-size=390,844', `--screenshot=${file}`, url], 45_000)
      expect({ timedOut: run.timedOut, code: run.code }).toEqual({ timedOut: false, code: 0 })
      const ink = inkOf(file)
      expect({ width: ink.width, height: ink.height }).toEqual({ width: 390, height: 844 })
      // A light page with text on it (not a blank or error page), and not a wall of ink either.
      expect(ink.background).toBeGreaterThan(200)
      expect(ink.ink).toBeGreaterThan(0.004)
      expect(ink.ink).toBeLessThan(0.3)
      if (page.button) expect(ink.accent).toBeGreaterThan(0.002)
    }, 60_000)
  }

  test('the password page renders on a desktop window too (1280x800)', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/desk', password: 'desk-pass' })
    const file = join(shots, 'password-desktop.png')
    const run = await chromium([`--user-agent=${UA.chrome}`, '--window-size=1280,800', `--screenshot=${file}`, link.shortUrl], 45_000)
    expect(run.timedOut).toBe(false)
    const ink = inkOf(file)
    expect({ width: ink.width, height: ink.height }).toEqual({ width: 1280, height: 800 })
    expect(ink.ink).toBeGreaterThan(0.001)
    expect(ink.accent).toBeGreaterThan(0.0005)
  }, 60_000)

  test('the consent page stays legible in dark mode', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/dark?mode=1', consentRequired: true })
    const file = join(shots, 'consent-dark-mobile.png')
    const run = await chromium(
      [`--user-agent=${UA.iphone}`, '--blink-settings=preferredColorScheme=0', '--window-size=390,844', `--screenshot=${file}`, link.shortUrl],
      45_000,
    )
    expect(run.timedOut).toBe(false)
    const ink = inkOf(file)
    expect(ink.background).toBeLessThan(60)
    expect(ink.ink).toBeGreaterThan(0.004)
    expect(ink.accent).toBeGreaterThan(0.002)
    // The Continue label must be readable on its button (WCAG AA: 4.5:1), in dark mode as in light mode.
    expect(buttonContrast(file)).toBeGreaterThanOrEqual(4.5)
    expect(buttonContrast(join(shots, 'consent-mobile.png'))).toBeGreaterThanOrEqual(4.5)
  }, 60_000)
})

test('a routed test link’s sandbox page names the destination chosen and the rule, with no serious accessibility violation', async () => {
  const rule = { name: 'German speakers', conditions: [{ field: 'language', op: 'eq', value: 'de' }], destinationUrl: 'https://example.de/willkommen' }
  const link = await api.make({ destinationUrl: 'https://example.com/everyone-else', routingRules: [rule] }, api.testKey)
  const ruleId: string = link.routingRules[0].id
  const file = join(shots, 'sandbox-routed-mobile.png')
  await withBrowserPage({ userAgent: UA.iphone, width: 390, height: 844, extraFlags: ['--lang=de-DE', '--accept-lang=de-DE,de'] }, async (page) => {
    await page.goto(`${link.shortUrl}?ref=qr`)
    expect(await page.evaluate('document.querySelector(".dest").innerText')).toBe('https://example.de/willkommen?ref=qr')
    expect(await page.evaluate('document.body.innerText')).toContain(`Chosen by the routing rule “German speakers” (${ruleId}).`)
    expect(await axeViolations(page)).toEqual([])
    await page.screenshot(file)
  })
  const ink = inkOf(file)
  expect(ink.ink).toBeGreaterThan(0.004)
  expect(ink.ink).toBeLessThan(0.3)
}, 60_000)
