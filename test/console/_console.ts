// The console's browser harness (not a test file itself): a loopback lnk started as `lnk serve` runs it,
// a workspace with a key, and headless Chromium (network fenced to 127.0.0.1) driven like a person: type
// into labelled fields, press buttons by their names, and check every screen with a screenshot at phone and
// desktop widths, axe-core, CSP complaints and sideways overflow.
import { expect } from 'bun:test'
import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { axeViolations, withPagesBrowser, type PagesBrowser } from '../pages/_browser'
import { account, UA, type Api } from '../redirect/_redirect'
import { startLnk, type Lnk } from '../redirect/_server'

export { UA }

/** Where screenshots go: LNK_SCREENSHOT_DIR/console (CI keeps it with its logs), else a temporary folder. */
export const SHOTS = (() => {
  const dir = process.env.LNK_SCREENSHOT_DIR ? join(process.env.LNK_SCREENSHOT_DIR, 'console') : mkdtempSync(join(tmpdir(), 'lnk-console-shots-'))
  mkdirSync(dir, { recursive: true })
  return dir
})()

export const PHONE = { width: 390, height: 844 }
export const DESKTOP = { width: 1280, height: 800 }

export interface ConsoleServer {
  lnk: Lnk
  api: Api
  origin: string
  stop(): Promise<void>
}

export async function startConsoleServer(env: Record<string, string> = {}): Promise<ConsoleServer> {
  const lnk = await startLnk(env)
  const api = await account(lnk.env)
  return { lnk, api, origin: lnk.origin, stop: () => lnk.stop() }
}

/** One API call with the server's key; answers the envelope's data, or throws with the answer. */
export async function call(server: ConsoleServer, method: string, path: string, json?: unknown, key = server.api.key): Promise<any> {
  const res = await server.lnk.env.request(`/v1${path}`, { method, key, json })
  if (res.status === 204) return undefined
  const payload: any = await res.json()
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(payload)}`)
  return payload.data
}

export interface ConsolePage extends PagesBrowser {
  origin: string
  width: number
  /** Opens /console#<path> (signed in or not, as the tab's sessionStorage says). */
  open(path?: string): Promise<void>
  signIn(key: string): Promise<void>
  /** Types into the input, select or textarea labelled `label` (exact text of its <label>). */
  fill(label: string, value: string): Promise<void>
  /** Sets a checkbox labelled `label`. */
  check(label: string, checked?: boolean): Promise<void>
  /** Chooses an option (by value or visible text) of the select labelled `label`. */
  select(label: string, option: string): Promise<void>
  /** Clicks the button or link whose accessible name (text or aria-label) is `name`; the first visible one. */
  press(name: string): Promise<void>
  /** Waits until the page shows `text` somewhere in the main region (or the whole body). */
  see(text: string, timeoutMs?: number): Promise<void>
  /** Screenshot (`<SHOTS>/<name>-<width>.png`), axe (no serious or critical), no CSP complaints, no sideways scroll. */
  checkScreen(name: string): Promise<void>
}

const js = (value: unknown) => JSON.stringify(value)

/** The element labelled `label` (its <label for>, aria-label, or a label wrapping it). */
const byLabel = (label: string) => `(() => {
  const want = ${js(label)}
  for (const l of document.querySelectorAll('label')) {
    if (l.textContent.trim() !== want) continue
    const el = l.htmlFor ? document.getElementById(l.htmlFor) : l.querySelector('input,select,textarea')
    if (el) return el
  }
  return document.querySelector('[aria-label=' + JSON.stringify(want) + ']')
})()`

const visible = `(el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden' }`

/** Runs `fn` with a fresh headless Chromium at the given size, pointed at the server's console. */
export async function withConsole(
  server: ConsoleServer,
  size: { width: number; height: number },
  fn: (page: ConsolePage) => Promise<void>,
  timeoutMs = 60_000,
): Promise<void> {
  await withPagesBrowser({ userAgent: UA.chrome, ...size, timeoutMs }, async (base) => {
    const page = Object.assign(base, {
      origin: server.origin,
      width: size.width,
      async open(path = '') {
        const url = `${server.origin}/console${path ? `#${path}` : ''}`
        // Already in the console: a new hash is a route change, which fires no load event.
        const here = await base.evaluate<string>('location.origin + location.pathname')
        if (here === `${server.origin}/console` && path) {
          // Answers once the router has seen the change and painted the new screen.
          await base.evaluate(`new Promise((done) => {
            if (location.hash === ${js(`#${path}`)}) return done()
            addEventListener('hashchange', () => requestAnimationFrame(() => setTimeout(done)), { once: true })
            location.hash = ${js(path)}
          })`)
        } else await base.goto(url)
        // Signed in: the screen's heading, with its first load done; else the sign-in form.
        await base.waitFor(
          `document.querySelector('#api-key') !== null || (document.querySelector('main h1') !== null && !document.querySelector('main .state.loading') ` +
            `&& !document.querySelector('main [aria-busy=true]'))`,
          10_000,
        )
      },
      async signIn(key: string) {
        await page.open()
        await page.fill('API key', key)
        await page.press('Sign in')
        await base.waitFor(`document.querySelector('nav.main-nav') !== null`, 10_000)
      },
      async fill(label: string, value: string) {
        const ok = await base.evaluate<boolean>(`(() => {
          const el = ${byLabel(label)}
          if (!el) return false
          el.focus()
          const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype
          Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, ${js(value)})
          el.dispatchEvent(new Event('input', { bubbles: true }))
          el.dispatchEvent(new Event('change', { bubbles: true }))
          return true
        })()`)
        if (!ok) throw new Error(`no field labelled "${label}"`)
      },
      async check(label: string, checked = true) {
        const ok = await base.evaluate<boolean>(`(() => {
          const el = ${byLabel(label)}
          if (!el) return false
          if (el.checked !== ${checked}) el.click()
          return true
        })()`)
        if (!ok) throw new Error(`no checkbox labelled "${label}"`)
      },
      async select(label: string, option: string) {
        const ok = await base.evaluate<boolean>(`(() => {
          const el = ${byLabel(label)}
          if (!el) return false
          const o = [...el.options].find((o) => o.value === ${js(option)} || o.textContent.trim() === ${js(option)})
          if (!o) return false
          el.value = o.value
          el.dispatchEvent(new Event('input', { bubbles: true }))
          el.dispatchEvent(new Event('change', { bubbles: true }))
          return true
        })()`)
        if (!ok) throw new Error(`no select labelled "${label}" with option "${option}"`)
      },
      async press(name: string) {
        const expression = `(() => {
          const isVisible = ${visible}
          const want = ${js(name)}
          const name = (el) => (el.getAttribute('aria-label') ?? el.textContent ?? '').trim()
          const el = [...document.querySelectorAll('button, a, [role=button], summary')].find((el) => isVisible(el) && (name(el) === want || el.textContent.trim() === want))
          if (!el || el.disabled) return false
          el.click()
          return true
        })()`
        // The control may appear a moment later (after a load).
        await base.waitFor(expression, 10_000).catch(() => {
          throw new Error(`no enabled button or link named "${name}" on ${page.origin}`)
        })
      },
      async see(text: string, timeoutMs = 10_000) {
        await base.waitFor(`document.body.innerText.includes(${js(text)})`, timeoutMs).catch(async () => {
          const shown = await base.evaluate<string>('document.body.innerText.slice(0, 2000)')
          throw new Error(`"${text}" never appeared; the page shows:\n${shown}`)
        })
      },
      async checkScreen(name: string) {
        // Let pending loads finish: no "Loading…" left in the main region.
        await base.waitFor(`!document.querySelector('main .state.loading')`, 10_000).catch(() => {})
        await base.screenshot(join(SHOTS, `${name}-${size.width}.png`))
        const violations = await axeViolations(base)
        expect({ screen: name, width: size.width, violations }).toEqual({ screen: name, width: size.width, violations: [] })
        const csp = base.messages.filter((m) => /Content Security Policy|Refused to/i.test(m))
        expect({ screen: name, csp }).toEqual({ screen: name, csp: [] })
        const overflow = await base.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
        expect({ screen: name, width: size.width, overflow }).toEqual({ screen: name, width: size.width, overflow: 0 })
      },
    })
    await fn(page)
  })
}
