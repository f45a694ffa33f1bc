// Headless Chromium for the bridge-page browser tests. Unlike test/browser.ts's withBrowserPage it needs two
// more DevTools powers: emulating `prefers-color-scheme`, and answering every request to a host other than
// 127.0.0.1 itself (images and embeds get a local stand-in, anything else fails), so no request leaves the
// machine while the pages keep their real https image URLs. DNS is mapped to nowhere as a second fence.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import { HEADLESS_FLAGS, requireChromium } from '../browser'

export interface PagesBrowser {
  /** Navigates and waits for the load event. */
  goto(url: string): Promise<void>
  /** Evaluates an expression in the page (promises awaited); DevTools evaluation is not bound by the page's CSP. */
  evaluate<T = unknown>(expression: string): Promise<T>
  /** Writes a PNG of the viewport. */
  screenshot(file: string): Promise<void>
  colorScheme(scheme: 'light' | 'dark'): Promise<void>
  /** Console and log messages (CSP violations among them). */
  messages: string[]
  /** Requests for hosts other than 127.0.0.1: answered here, never sent. */
  outside: { url: string; type: string }[]
}

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

/** Runs `fn` against one page of a fresh headless Chromium of the given viewport; everything bounded by `timeoutMs`. */
export async function withPagesBrowser(options: { width: number; height: number; timeoutMs?: number }, fn: (page: PagesBrowser) => Promise<void>): Promise<void> {
  const bin = requireChromium()
  const deadline = Date.now() + (options.timeoutMs ?? 45_000)
  const profile = mkdtempSync(join(tmpdir(), 'lnk-pages-chromium-'))
  const proc = Bun.spawn(
    [
      bin,
      ...HEADLESS_FLAGS,
      '--hide-scrollbars',
      '--remote-debugging-address=127.0.0.1',
      '--remote-debugging-port=0',
      // Frames stay in the page's process, so the page session sees (and answers) their requests too.
      '--disable-features=IsolateOrigins,site-per-process',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      `--user-data-dir=${profile}`,
      'about:blank',
    ],
    { stdout: 'ignore', stderr: 'ignore', env: { ...process.env, HOME: profile } },
  )
  const killer = setTimeout(() => proc.kill('SIGKILL'), deadline - Date.now() + 5_000)
  let socket: WebSocket | null = null
  try {
    const portFile = join(profile, 'DevToolsActivePort')
    for (let i = 0; i < 200 && !existsSync(portFile); i++) await Bun.sleep(50)
    const [port, path] = existsSync(portFile) ? readFileSync(portFile, 'utf8').split('\n') : []
    if (!port || !path) throw new Error('Chromium did not open its DevTools endpoint within 10 s')
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`)
    socket = ws
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve()
      ws.onerror = () => reject(new Error('DevTools connection failed'))
    })

    let nextId = 0
    let sessionId: string | undefined
    const waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>()
    const send = (method: string, params: Record<string, unknown> = {}): Promise<any> =>
      new Promise((resolve, reject) => {
        const id = ++nextId
        waiting.set(id, { resolve, reject })
        ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }))
        setTimeout(() => waiting.delete(id) && reject(new Error(`DevTools ${method} did not answer in time`)), Math.max(1_000, deadline - Date.now()))
      })

    const page: PagesBrowser = { messages: [], outside: [], goto, evaluate, screenshot, colorScheme }
    let loads = 0
    const onEvent = (method: string, params: any) => {
      if (method === 'Page.loadEventFired') loads++
      else if (method === 'Log.entryAdded') page.messages.push(`${params.entry.source}: ${params.entry.text}`)
      else if (method === 'Runtime.consoleAPICalled') page.messages.push(`console: ${params.args.map((a: any) => a.value ?? a.description).join(' ')}`)
      else if (method === 'Fetch.requestPaused') {
        const { requestId, request, resourceType } = params
        if (isLoopback(request.url)) return void send('Fetch.continueRequest', { requestId }).catch(() => {})
        page.outside.push({ url: request.url, type: resourceType })
        const answer =
          resourceType === 'Image'
            ? send('Fetch.fulfillRequest', { requestId, responseCode: 200, responseHeaders: [{ name: 'content-type', value: 'image/png' }], body: STAND_IN_IMAGE })
            : resourceType === 'Document'
              ? send('Fetch.fulfillRequest', { requestId, responseCode: 200, responseHeaders: [{ name: 'content-type', value: 'text/html' }], body: STAND_IN_FRAME })
              : send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' })
        answer.catch(() => {})
      }
    }
    ws.onmessage = (ev) => {
      const msg = JSON.parse(String(ev.data))
      const pending = msg.id === undefined ? undefined : waiting.get(msg.id)
      if (pending) {
        waiting.delete(msg.id)
        if (msg.error) pending.reject(new Error(msg.error.message))
        else pending.resolve(msg.result)
      } else if (msg.method) onEvent(msg.method, msg.params)
    }

    const { targetInfos } = await send('Target.getTargets')
    const target = (targetInfos as { targetId: string; type: string }[]).find((t) => t.type === 'page')
    if (!target) throw new Error('no page target')
    sessionId = (await send('Target.attachToTarget', { targetId: target.targetId, flatten: true })).sessionId
    for (const domain of ['Page', 'Runtime', 'Log']) await send(`${domain}.enable`)
    await send('Fetch.enable', { patterns: [{ urlPattern: '*' }] })
    // A headless window never has focus of its own; without this, focus() styles nothing.
    await send('Emulation.setFocusEmulationEnabled', { enabled: true })
    await send('Emulation.setDeviceMetricsOverride', { width: options.width, height: options.height, deviceScaleFactor: 1, mobile: false })

    async function goto(url: string) {
      const before = loads
      await send('Page.navigate', { url })
      for (let i = 0; i < 400 && loads === before && Date.now() < deadline; i++) await Bun.sleep(25)
      if (loads === before) throw new Error(`no load event for ${url}`)
    }
    async function evaluate<T>(expression: string): Promise<T> {
      const r = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true })
      if (r.exceptionDetails) throw new Error(`page threw: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`)
      return r.result.value as T
    }
    async function screenshot(file: string) {
      const { data } = await send('Page.captureScreenshot', { format: 'png' })
      await Bun.write(file, Buffer.from(data, 'base64'))
    }
    async function colorScheme(scheme: 'light' | 'dark') {
      await send('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-color-scheme', value: scheme }] })
    }
    await fn(page)
  } finally {
    clearTimeout(killer)
    try {
      socket?.close()
    } catch {
      /* already closed */
    }
    proc.kill('SIGKILL')
    await proc.exited
    rmSync(profile, { recursive: true, force: true })
  }
}
