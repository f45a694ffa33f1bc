// What the bridge-page browser tests add to test/browser.ts's withBrowserPage: every request to a host other
// than 127.0.0.1 answered here (images and embeds get a local stand-in, anything else fails), so no request
// leaves the machine while pages keep their real https image URLs (DNS is mapped to nowhere as a second
// fence); `prefers-color-scheme` emulation; and axe-core's serious and critical violations.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import { withBrowserPage, type BrowserPage } from '../browser'

export interface PagesBrowser extends BrowserPage {
  colorScheme(scheme: 'light' | 'dark'): Promise<void>
  /** Requests for hosts other than 127.0.0.1: answered here, never sent. */
  outside: { url: string; type: string }[]
}

const PAGES_FLAGS = [
  '--hide-scrollbars',
  // Frames stay in the page's process, so the page session sees (and answers) their requests too.
  '--disable-features=IsolateOrigins,site-per-process',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
]

/** A 96×64 grey picture: what every outside image becomes. */
const STAND_IN_IMAGE = (() => {
  const png = new PNG({ width: 96, height: 64 })
  for (let i = 0; i < png.data.length; i += 4) png.data.set([150, 150, 150, 255], i)
  return PNG.sync.write(png).toString('base64')
})()
const STAND_IN_FRAME = Buffer.from('<!doctype html><title>Embedded player</title><p>player</p>').toString('base64')

const isLoopback = (url: string) => {
  try {
    return new URL(url).hostname === '127.0.0.1'
  } catch {
    return false
  }
}

/** Answers one paused request: loopback goes on, outside images and frames get a stand-in, the rest fails. */
function answer(page: PagesBrowser, params: any): Promise<unknown> {
  const { requestId, request, resourceType } = params
  if (isLoopback(request.url)) return page.send('Fetch.continueRequest', { requestId })
  page.outside.push({ url: request.url, type: resourceType })
  const standIn = resourceType === 'Image' ? ['image/png', STAND_IN_IMAGE] : resourceType === 'Document' ? ['text/html', STAND_IN_FRAME] : null
  if (!standIn) return page.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' })
  return page.send('Fetch.fulfillRequest', { requestId, responseCode: 200, responseHeaders: [{ name: 'content-type', value: standIn[0] }], body: standIn[1] })
}

/** Runs `fn` against one page of a fresh headless Chromium of the given viewport; everything bounded by `timeoutMs`. */
export async function withPagesBrowser(
  options: { userAgent: string; width: number; height: number; timeoutMs?: number },
  fn: (page: PagesBrowser) => Promise<void>,
): Promise<void> {
  await withBrowserPage({ ...options, timeoutMs: options.timeoutMs ?? 45_000, extraFlags: PAGES_FLAGS }, async (base) => {
    const page: PagesBrowser = Object.assign(base, {
      outside: [] as PagesBrowser['outside'],
      colorScheme: (scheme: 'light' | 'dark') => base.send('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-color-scheme', value: scheme }] }),
    })
    // The browser may be torn down with requests still paused: their answers have nowhere to go.
    page.onEvent((method, params) => void (method === 'Fetch.requestPaused' && answer(page, params).catch(() => {})))
    await page.send('Fetch.enable', { patterns: [{ urlPattern: '*' }] })
    // A headless window never has focus of its own; without this, focus() styles nothing.
    await page.send('Emulation.setFocusEmulationEnabled', { enabled: true })
    await fn(page)
  })
}

const AXE = readFileSync(join(import.meta.dir, '../../node_modules/axe-core/axe.min.js'), 'utf8')
const AXE_RUN = `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations
  .filter((v) => v.impact === 'serious' || v.impact === 'critical')
  .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((x) => x.target.join(' ') + ' :: ' + x.failureSummary) })))`

/**
 * axe-core's serious and critical violations of the current document. DevTools evaluation is not bound by
 * the page's CSP, so axe runs on pages that allow no script.
 */
export async function axeViolations(page: BrowserPage): Promise<unknown[]> {
  if (!(await page.evaluate<boolean>('typeof axe === "object"'))) await page.evaluate(AXE)
  return page.evaluate<unknown[]>(AXE_RUN)
}
