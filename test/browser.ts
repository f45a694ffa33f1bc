// Headless Chromium for tests of pages people look at: Debian's /usr/bin/chromium, a fresh profile per
// run, no background networking, every run bounded in time.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Flags of every run: headless as root, nothing fetched from outside. */
export const HEADLESS_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
]

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p)) ?? Bun.which('chromium')

/** Fails (not skips) when Chromium is missing: CI installs it. */
export function requireChromium(): string {
  if (!CHROMIUM) throw new Error('Chromium is not installed: run `apt-get install -y chromium` (CI installs it); the browser tests need /usr/bin/chromium')
  return CHROMIUM
}

export interface BrowserRun {
  code: number | null
  stdout: string
  stderr: string
  timedOut: boolean
}

/** One headless Chromium run with a fresh profile, killed after `timeoutMs`. */
export async function chromium(args: string[], timeoutMs = 45_000): Promise<BrowserRun> {
  const bin = requireChromium()
  const profile = mkdtempSync(join(tmpdir(), 'lnk-chromium-'))
  const proc = Bun.spawn([bin, ...HEADLESS_FLAGS, '--hide-scrollbars', `--user-data-dir=${profile}`, ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, HOME: profile },
  })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    proc.kill('SIGKILL')
  }, timeoutMs)
  try {
    const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    const code = await proc.exited
    return { code, stdout, stderr, timedOut }
  } finally {
    clearTimeout(timer)
    rmSync(profile, { recursive: true, force: true })
  }
}

export interface BrowserPage {
  /** Navigates and waits for the load event. */
  goto(url: string): Promise<void>
  /** Evaluates an expression in the page (promises awaited) and answers its value. */
  evaluate<T = unknown>(expression: string): Promise<T>
  /** Polls `expression` until it is truthy, for at most `timeoutMs`. */
  waitFor(expression: string, timeoutMs?: number): Promise<void>
  /** Writes a PNG of the viewport. */
  screenshot(file: string): Promise<void>
  /** Console and log messages the page produced (CSP violations among them). */
  messages: string[]
  /** A raw DevTools call in the page's session, for powers the helpers above do not wrap. */
  send(method: string, params?: Record<string, unknown>): Promise<any>
  /** Calls `listener` with every DevTools event (Fetch.requestPaused among them once Fetch is enabled). */
  onEvent(listener: (method: string, params: any) => void): void
}

export interface BrowserPageOptions {
  userAgent: string
  timeoutMs?: number
  javaScript?: boolean
  width?: number
  height?: number
  /** Chromium flags added to HEADLESS_FLAGS, e.g. DNS rules or features a test needs. */
  extraFlags?: string[]
}

/**
 * Runs `fn` against one page of a headless Chromium driven over the DevTools protocol (loopback only),
 * so a test can type into a form and click like a person. Everything is bounded by `timeoutMs`.
 */
export async function withBrowserPage(options: BrowserPageOptions, fn: (page: BrowserPage) => Promise<void>): Promise<void> {
  const bin = requireChromium()
  const timeoutMs = options.timeoutMs ?? 45_000
  const deadline = Date.now() + timeoutMs
  const profile = mkdtempSync(join(tmpdir(), 'lnk-chromium-'))
  const proc = Bun.spawn(
    [
      bin,
      ...HEADLESS_FLAGS,
      '--remote-debugging-address=127.0.0.1',
      '--remote-debugging-port=0',
      `--user-agent=${options.userAgent}`,
      `--user-data-dir=${profile}`,
      ...(options.extraFlags ?? []),
      'about:blank',
    ],
    { stdout: 'ignore', stderr: 'ignore', env: { ...process.env, HOME: profile } },
  )
  const killer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs + 5_000)
  let ws: WebSocket | null = null
  try {
    // Chromium writes its DevTools port and browser path once it listens.
    let endpoint = ''
    for (let i = 0; i < 200 && !endpoint; i++) {
      const file = join(profile, 'DevToolsActivePort')
      if (existsSync(file)) {
        const [port, path] = (await Bun.file(file).text()).split('\n')
        if (port && path) endpoint = `ws://127.0.0.1:${port}${path}`
      }
      if (!endpoint) await Bun.sleep(50)
    }
    if (!endpoint) throw new Error('Chromium did not open its DevTools endpoint within 10 s')
    const socket = new WebSocket(endpoint)
    ws = socket
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve()
      socket.onerror = () => reject(new Error('DevTools connection failed'))
    })
    let nextId = 0
    const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>()
    const listeners: ((method: string, params: any) => void)[] = []
    socket.onmessage = (ev) => {
      const msg = JSON.parse(String(ev.data))
      if (msg.id !== undefined && pending.has(msg.id)) {
        const p = pending.get(msg.id)!
        pending.delete(msg.id)
        if (msg.error) p.reject(new Error(`${msg.error.message}`))
        else p.resolve(msg.result)
      } else if (msg.method) {
        for (const l of listeners) l(msg.method, msg.params)
      }
    }
    const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<any> => {
      const id = ++nextId
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject })
        // Inside the promise: a send on a socket that closed meanwhile rejects rather than throws.
        socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }))
        setTimeout(
          () => {
            if (pending.delete(id)) reject(new Error(`DevTools ${method} did not answer`))
          },
          Math.max(1_000, deadline - Date.now()),
        )
      })
    }
    const { targetInfos } = await send('Target.getTargets')
    const target = (targetInfos as { targetId: string; type: string }[]).find((t) => t.type === 'page')
    if (!target) throw new Error('no page target')
    const { sessionId } = await send('Target.attachToTarget', { targetId: target.targetId, flatten: true })
    const messages: string[] = []
    let loads = 0
    listeners.push((method, params) => {
      if (method === 'Page.loadEventFired') loads++
      if (method === 'Log.entryAdded') messages.push(`${params.entry.source}: ${params.entry.text}`)
      if (method === 'Runtime.consoleAPICalled') messages.push(`console: ${params.args.map((a: any) => a.value ?? a.description).join(' ')}`)
    })
    await send('Page.enable', {}, sessionId)
    await send('Runtime.enable', {}, sessionId)
    await send('Log.enable', {}, sessionId)
    if (options.javaScript === false) await send('Emulation.setScriptExecutionDisabled', { value: true }, sessionId)
    if (options.width && options.height)
      await send('Emulation.setDeviceMetricsOverride', { width: options.width, height: options.height, deviceScaleFactor: 1, mobile: false }, sessionId)
    const evaluate = async <T>(expression: string): Promise<T> => {
      const r = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, sessionId)
      if (r.exceptionDetails) throw new Error(`page threw: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`)
      return r.result.value as T
    }
    const page: BrowserPage = {
      messages,
      send: (method, params = {}) => send(method, params, sessionId),
      onEvent: (listener) => void listeners.push(listener),
      async goto(url) {
        const before = loads
        await send('Page.navigate', { url }, sessionId)
        for (let i = 0; i < 400 && loads === before && Date.now() < deadline; i++) await Bun.sleep(25)
        if (loads === before) throw new Error(`no load event for ${url}`)
      },
      evaluate,
      async screenshot(file) {
        const { data } = await send('Page.captureScreenshot', { format: 'png' }, sessionId)
        await Bun.write(file, Buffer.from(data, 'base64'))
      },
      async waitFor(expression, wait = 10_000) {
        const until = Math.min(deadline, Date.now() + wait)
        let last: unknown
        for (let i = 0; i < 1_000 && Date.now() < until; i++) {
          try {
            last = await evaluate(expression)
            if (last) return
          } catch (err) {
            // A navigation destroyed the context mid-evaluation; try again.
            last = err
          }
          await Bun.sleep(50)
        }
        throw new Error(`timed out waiting for ${expression} (last: ${String(last)}); messages: ${messages.join(' | ')}`)
      },
    }
    await fn(page)
  } finally {
    clearTimeout(killer)
    try {
      ws?.close()
    } catch {
      /* closed */
    }
    proc.kill('SIGKILL')
    await proc.exited
    rmSync(profile, { recursive: true, force: true })
  }
}
