// `lnk listen`: the client against a scripted stand-in of the sessions API and a loopback receiver (real
// sockets, injected pauses so retries and backoff take no time), the command line spawned as a process,
// and the whole path against a real lnk: an event made through the API reaches the receiver with the exact
// bytes and two signatures that the standardwebhooks and stripe packages accept.
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { type AddressInfo, createServer } from 'node:net'
import { Webhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { parseCommandLine, UsageError } from '../../src/cli/command'
import { listen } from '../../src/cli/listen'
import { apiBaseOf, type ListenSettings, listenSettings, parseHeader, targetUrl } from '../../src/cli/listen-args'
import { ListenError, type ListenDeps, printSecret, runListener } from '../../src/cli/listen-client'
import type { ForwardedEvent, Sleep } from '../../src/cli/listen-forward'
import { createReporter } from '../../src/cli/listen-output'
import { body, bootstrapAccount, makeKey, ROOT, tempDir } from '../helpers'
import { startLnk } from '../redirect/_server'
import { freePort, lnkEnv, runLnk } from './lnk-process'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

/** Waits (bounded) until `check` holds; fails with `what` otherwise. */
async function until(what: string, check: () => boolean, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(5)
  }
}

const envelope = (status: number, data: unknown, headers: Record<string, string> = {}) => Response.json({ success: true, data }, { status, headers })
const failure = (status: number, code: string, message = code, headers: Record<string, string> = {}) =>
  Response.json({ success: false, error: { code, message, details: null } }, { status, headers })

type Script = (req: Request, url: URL) => Response | Promise<Response> | undefined

/**
 * The sessions API as forwarding-api.md describes it, in memory: sessions with one secret, queues handed over
 * once, a poll held until an event arrives (or briefly, so tests never wait for `wait`). `script` answers
 * first when it returns a response.
 */
function fakeApi() {
  let n = 0
  const sessions = new Map<string, ForwardedEvent[]>()
  const requests: { method: string; path: string; auth: string | null; body: string }[] = []
  const deleted: string[] = []
  const opened: unknown[] = []
  let waiters: (() => void)[] = []
  let script: Script = () => undefined
  let secret = SECRET
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url)
      const body = await req.text()
      requests.push({ method: req.method, path: url.pathname + url.search, auth: req.headers.get('authorization'), body })
      const scripted = await script(req, url)
      if (scripted) return scripted
      if (req.headers.get('authorization') !== 'Bearer lnk_live_test') return failure(401, 'unauthorized')
      if (req.method === 'POST' && url.pathname === '/v1/webhooks/cli/sessions') {
        const asked = body ? JSON.parse(body) : {}
        opened.push(asked)
        const id = `cls_${++n}`
        sessions.set(id, [])
        return envelope(201, {
          id,
          secret,
          mode: 'live',
          events: asked.events ?? ['*'],
          deviceName: asked.deviceName ?? null,
          pollWaitSeconds: 5,
          idleTimeoutSeconds: 60,
        })
      }
      const del = /^\/v1\/webhooks\/cli\/sessions\/(.+)$/.exec(url.pathname)
      if (req.method === 'DELETE' && del) {
        if (!sessions.delete(del[1]!)) return failure(404, 'not_found')
        deleted.push(del[1]!)
        return envelope(200, { id: del[1], deleted: true })
      }
      if (req.method === 'GET' && url.pathname === '/v1/webhooks/cli/events') {
        const id = url.searchParams.get('session')!
        if (!sessions.has(id)) return failure(410, 'session_expired')
        if (sessions.get(id)!.length === 0) await Promise.race([new Promise<void>((r) => waiters.push(r)), Bun.sleep(50)])
        const queue = sessions.get(id) ?? []
        const limit = Number(url.searchParams.get('limit') ?? 100)
        return envelope(200, queue.splice(0, limit))
      }
      return failure(404, 'not_found')
    },
  })
  return {
    origin: `http://127.0.0.1:${server.port}`,
    requests,
    deleted,
    opened,
    sessions,
    setSecret: (s: string) => (secret = s),
    script: (s: Script) => (script = s),
    /** Queues events on every open session (the outbox fan-out) and wakes the waiting polls. */
    emit(...events: ForwardedEvent[]) {
      for (const queue of sessions.values()) queue.push(...events)
      for (const w of waiters) w()
      waiters = []
    },
    polls: () => requests.filter((r) => r.path.startsWith('/v1/webhooks/cli/events')).length,
    stop: () => server.stop(true),
  }
}

interface Hit {
  method: string
  path: string
  headers: Record<string, string>
  bytes: Uint8Array
}

/** The developer's app: records every request; `answer` decides the response. */
function receiver(answer: (hit: Hit) => Response | Promise<Response> = () => new Response('ok'), port = 0, tls?: { cert: string; key: string }) {
  const hits: Hit[] = []
  let inFlight = 0
  let maxInFlight = 0
  const server = Bun.serve({
    port,
    hostname: '127.0.0.1',
    ...(tls ? { tls } : {}),
    async fetch(req) {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      try {
        const url = new URL(req.url)
        const hit = { method: req.method, path: url.pathname, headers: Object.fromEntries(req.headers), bytes: new Uint8Array(await req.arrayBuffer()) }
        hits.push(hit)
        return await answer(hit)
      } finally {
        inFlight--
      }
    },
  })
  return {
    hits,
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${server.port}/hooks`,
    port: server.port!,
    maxInFlight: () => maxInFlight,
    stop: () => server.stop(true),
  }
}

let seq = 0
function event(type = 'link.created', body?: string): ForwardedEvent {
  const id = `evt_${++seq}`
  return {
    id,
    type,
    body: body ?? `{"id":"${id}","type":"${type}","timestamp":"2025-01-01T00:00:00.000Z","mode":"live","data":{"n":${seq}}}`,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': '1735689600',
      'webhook-signature': `v1,sig-of-${id}`,
      'x-service-signature': `t=1735689600,v1=hex-of-${id}`,
      'content-type': 'application/json',
      'user-agent': 'lnk-webhooks/1',
    },
  }
}

/** A listener wired to the stand-ins: JSON lines collected, pauses recorded and skipped, a fixed clock. */
function harness(api: ReturnType<typeof fakeApi>, target: string, over: Partial<ListenSettings> = {}, tuning: ListenDeps['tuning'] = {}) {
  const lines: any[] = []
  const sleeps: number[] = []
  let onSleep: (ms: number) => void = () => {}
  const sleep: Sleep = async (ms) => {
    sleeps.push(ms)
    onSleep(ms)
    await Bun.sleep(1)
  }
  const settings: ListenSettings = {
    apiKey: 'lnk_live_test',
    apiBase: `${api.origin}/v1`,
    target,
    events: undefined,
    headers: [],
    skipVerify: false,
    printSecret: false,
    format: 'json',
    ...over,
  }
  const deps: ListenDeps = {
    fetch: (url, init) => fetch(url, init),
    sleep,
    now: () => 1_000,
    deviceName: 'test-box',
    report: createReporter({
      format: 'json',
      out: (l) => lines.push(JSON.parse(l)),
      err: (l) => lines.push({ type: 'stderr', l }),
      color: { out: false, err: false },
      now: () => 0,
    }),
    tuning: { pollWaitSeconds: 1, ...tuning },
  }
  const stop = new AbortController()
  return {
    lines,
    sleeps,
    settings,
    deps,
    onSleep: (f: (ms: number) => void) => (onSleep = f),
    of: (type: string) => lines.filter((l) => l.type === type),
    start: () => runListener(settings, deps, stop.signal),
    stop: () => stop.abort(),
  }
}

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})
function track<T extends { stop(): void }>(thing: T): T {
  cleanups.push(() => thing.stop())
  return thing
}

describe('settings from flags and environment', () => {
  test('--forward-to: a port is localhost, host:port gets http, URLs stay, anything else is usage', () => {
    expect(targetUrl('3000')).toBe('http://localhost:3000/')
    expect(targetUrl('localhost:4242/webhooks')).toBe('http://localhost:4242/webhooks')
    expect(targetUrl('127.0.0.1:8000')).toBe('http://127.0.0.1:8000/')
    expect(targetUrl('https://dev.test:8443/hooks?x=1')).toBe('https://dev.test:8443/hooks?x=1')
    for (const bad of ['0', '70000', 'ftp://x/', 'not a url', 'mailto:a@b.c']) expect(() => targetUrl(bad)).toThrow(UsageError)
  })

  test('--base-url is an origin; /v1 is added once', () => {
    expect(apiBaseOf('http://localhost:8080', 'x')).toBe('http://localhost:8080/v1')
    expect(apiBaseOf('https://lnk.example/', 'x')).toBe('https://lnk.example/v1')
    expect(apiBaseOf('https://lnk.example/v1/', 'x')).toBe('https://lnk.example/v1')
    expect(apiBaseOf('https://example.com/lnk', 'x')).toBe('https://example.com/lnk/v1')
    expect(() => apiBaseOf('lnk.example', 'x')).toThrow(UsageError)
  })

  test('-H takes "Name: value"', () => {
    expect(parseHeader('X-Tenant:  acme ')).toEqual(['X-Tenant', 'acme'])
    expect(parseHeader('Authorization: Bearer a:b')).toEqual(['Authorization', 'Bearer a:b'])
    for (const bad of ['no colon', ': empty name', 'bad name: x']) expect(() => parseHeader(bad)).toThrow(UsageError)
  })

  test('the environment stands in for --api-key and --base-url; flags win', () => {
    const env = { LNK_API_KEY: 'lnk_live_env', LNK_BASE_URL: 'http://lnk.internal:9000' }
    const fromEnv = listenSettings({ 'forward-to': '3000' }, env)
    expect(fromEnv).toMatchObject({
      apiKey: 'lnk_live_env',
      apiBase: 'http://lnk.internal:9000/v1',
      target: 'http://localhost:3000/',
      format: 'text',
      events: undefined,
    })
    const fromFlags = listenSettings({ 'forward-to': '3000', 'api-key': 'lnk_live_flag', 'base-url': 'https://x.test', events: 'link.*, domain.created,' }, env)
    expect(fromFlags).toMatchObject({ apiKey: 'lnk_live_flag', apiBase: 'https://x.test/v1', events: ['link.*', 'domain.created'] })
    expect(listenSettings({ 'forward-to': '3000', 'api-key': 'k' }, {}).apiBase).toBe('http://localhost:8080/v1')
  })

  test('missing key, missing target, bad format and empty events are usage errors', () => {
    expect(() => listenSettings({ 'forward-to': '3000' }, {})).toThrow(UsageError)
    expect(() => listenSettings({ 'api-key': 'k' }, {})).toThrow(UsageError)
    expect(listenSettings({ 'api-key': 'k', 'print-secret': true }, {}).target).toBe('')
    expect(() => listenSettings({ 'api-key': 'k', 'forward-to': '3000', format: 'yaml' }, {})).toThrow(UsageError)
    expect(() => listenSettings({ 'api-key': 'k', 'forward-to': '3000', events: ' , ' }, {})).toThrow(UsageError)
  })

  test('-H repeats and keeps every value through the real command-line parser', () => {
    const inv = parseCommandLine(['--api-key', 'k', '--forward-to', '3000', '-H', 'A: 1', '--header', 'B: 2', '--skip-verify', '--format', 'json'], listen)!
    const s = listenSettings(inv.values, {})
    expect(s.headers).toEqual([
      ['A', '1'],
      ['B', '2'],
    ])
    expect(s.skipVerify).toBe(true)
    expect(s.format).toBe('json')
  })
})

describe('forwarding', () => {
  test("POSTs the exact body bytes with the event's headers and the -H extras, and says so", async () => {
    const api = track(fakeApi())
    const app = track(receiver())
    const h = harness(api, app.url, {
      headers: [
        ['X-Tenant', 'acme'],
        ['Webhook-Extra', 'yes'],
      ],
    })
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    expect(h.of('ready')[0]).toMatchObject({ session: 'cls_1', secret: SECRET, mode: 'live', events: ['*'], forwardTo: app.url })
    expect(api.opened).toEqual([{ deviceName: 'test-box' }])
    // Spacing, key order, escapes, a line separator and non-ASCII: what a re-serialiser would change.
    const raw = '{"type":"link.created",  "id":"evt_raw","data":{"title":"Caf\\u00e9 \u2028 ünïcode 🎉","b":1,"a":2.50}}\n'
    const e = event('link.created', raw)
    api.emit(e)
    await until('the forward', () => h.of('forwarded').length === 1)
    const hit = app.hits[0]!
    expect(hit.method).toBe('POST')
    expect(hit.path).toBe('/hooks')
    expect(Buffer.from(hit.bytes).equals(Buffer.from(raw, 'utf8'))).toBe(true)
    for (const [name, value] of Object.entries(e.headers)) expect(hit.headers[name]).toBe(value)
    expect(hit.headers['x-tenant']).toBe('acme')
    expect(hit.headers['webhook-extra']).toBe('yes')
    expect(hit.headers['content-length']).toBe(String(Buffer.byteLength(raw)))
    expect(h.of('received')[0].event).toEqual({ id: e.id, type: 'link.created' })
    expect(h.of('forwarded')[0]).toMatchObject({ event: { id: e.id, type: 'link.created' }, url: app.url, status: 200, attempts: 1, ms: 0 })
    h.stop()
    expect(await done).toBe(0)
  })

  test('a full backlog stops taking events: the rest stay on the server until the app catches up', async () => {
    const api = track(fakeApi())
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    const app = track(receiver(async () => (await held, new Response('ok'))))
    const h = harness(api, app.url, {}, { backlogMax: 3 })
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    const events = Array.from({ length: 10 }, () => event())
    api.emit(...events)
    await until('the first forward', () => app.hits.length === 1)
    const before = api.polls()
    await Bun.sleep(100)
    // Three taken (one at the app, two waiting); the other seven are still the server's, and no poll asked.
    expect(api.sessions.get('cls_1')!.length).toBe(7)
    expect(api.polls()).toBe(before)
    const limits = api.requests
      .filter((r) => r.path.startsWith('/v1/webhooks/cli/events'))
      .map((r) => Number(new URL(r.path, api.origin).searchParams.get('limit')))
    for (const limit of limits) expect(limit).toBeLessThanOrEqual(3)
    release()
    await until('every forward', () => h.of('forwarded').length === 10)
    expect(app.hits.map((hit) => JSON.parse(Buffer.from(hit.bytes).toString()).id)).toEqual(events.map((e) => e.id))
    h.stop()
    expect(await done).toBe(0)
  })

  test('a full backlog still polls, one event at a time, so the session does not expire', async () => {
    const api = track(fakeApi())
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    const app = track(receiver(async () => (await held, new Response('ok'))))
    const h = harness(api, app.url, {}, { backlogMax: 2, keepAliveMs: 0 })
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    api.emit(...Array.from({ length: 6 }, () => event()))
    await until('the first forward', () => app.hits.length === 1)
    await until('keep-alive polls', () => api.requests.filter((r) => r.path.includes('limit=1')).length >= 2)
    release()
    await until('every forward', () => h.of('forwarded').length === 6)
    h.stop()
    expect(await done).toBe(0)
  })

  test('one event at a time, in the order handed over, a slow answer holding the next', async () => {
    const api = track(fakeApi())
    let first = true
    const app = track(
      receiver(async () => {
        if (first) {
          first = false
          await Bun.sleep(150)
        }
        return new Response(null, { status: 204 })
      }),
    )
    const h = harness(api, app.url)
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    const events = [event(), event('link.updated'), event('link.deleted')]
    api.emit(events[0]!)
    await until('the first request', () => app.hits.length === 1)
    api.emit(...events.slice(1), event('link.clicked'), event('link.clicked'))
    await until('five forwards', () => h.of('forwarded').length === 5)
    const order = app.hits.map((hit) => JSON.parse(Buffer.from(hit.bytes).toString()).id)
    expect(order).toEqual(h.of('received').map((l) => l.event.id))
    expect(order.slice(0, 3)).toEqual(events.map((e) => e.id))
    expect(app.maxInFlight()).toBe(1)
    expect(h.of('forwarded').every((l) => l.status === 204)).toBe(true)
    // The poller went on while the slow answer was pending: the session never sat unpolled.
    h.stop()
    expect(await done).toBe(0)
  })

  test('a refused connection is tried again after 1, 2 and 4 s, then skipped; the warning comes once', async () => {
    const api = track(fakeApi())
    const nobody = `http://127.0.0.1:${freePort()}/hooks`
    const h = harness(api, nobody)
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    api.emit(event(), event())
    await until('two failures', () => h.of('failed').length === 2)
    for (const f of h.of('failed')) expect(f).toMatchObject({ error: 'connection refused', attempts: 4 })
    expect(h.sleeps).toEqual([1_000, 2_000, 4_000, 1_000, 2_000, 4_000])
    const warnings = h.of('warning')
    expect(warnings).toHaveLength(1)
    expect(warnings[0].message).toContain(`nothing is listening on ${nobody}`)
    h.stop()
    expect(await done).toBe(0)
  })

  test('an app that comes up during the retries gets the event', async () => {
    const api = track(fakeApi())
    const port = freePort()
    let app: ReturnType<typeof receiver> | undefined
    const h = harness(api, `http://127.0.0.1:${port}/hooks`)
    h.onSleep(() => {
      app ??= track(receiver(() => new Response('ok'), port))
    })
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    const e = event()
    api.emit(e)
    await until('the forward', () => h.of('forwarded').length === 1)
    expect(h.of('forwarded')[0]).toMatchObject({ status: 200, attempts: 2 })
    expect(h.sleeps).toEqual([1_000])
    expect(app!.hits).toHaveLength(1)
    h.stop()
    expect(await done).toBe(0)
  })

  test('answers are never retried: a 500 and a timeout are tried once each', async () => {
    const api = track(fakeApi())
    let calls = 0
    const app = track(
      receiver(async () => {
        calls++
        if (calls === 1) return new Response('boom', { status: 500 })
        await Bun.sleep(2_000)
        return new Response('late')
      }),
    )
    const h = harness(api, app.url, {}, { forwardTimeoutMs: 200 })
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    api.emit(event(), event())
    await until('both outcomes', () => h.of('forwarded').length + h.of('failed').length === 2)
    expect(h.of('forwarded')[0]).toMatchObject({ status: 500, attempts: 1 })
    expect(h.of('failed')[0]).toMatchObject({ error: 'no answer within 200 ms', attempts: 1 })
    expect(calls).toBe(2)
    expect(h.sleeps).toEqual([])
    expect(h.of('warning')).toEqual([])
    h.stop()
    expect(await done).toBe(0)
  })

  test('a connection cut after the request was sent is not retried: the app may have acted on it', async () => {
    const cutter = createServer((socket) => socket.once('data', () => socket.destroy()))
    await new Promise<void>((listening) => cutter.listen(0, '127.0.0.1', listening))
    cleanups.push(() => cutter.close())
    const api = track(fakeApi())
    const h = harness(api, `http://127.0.0.1:${(cutter.address() as AddressInfo).port}/hooks`)
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    api.emit(event())
    await until('the failure', () => h.of('failed').length === 1)
    expect(h.of('failed')[0]).toMatchObject({ error: 'connection closed before an answer', attempts: 1 })
    expect(h.sleeps).toEqual([])
    h.stop()
    expect(await done).toBe(0)
  })

  test('a redirect is shown, never followed', async () => {
    const api = track(fakeApi())
    const app = track(
      receiver((hit) => (hit.path === '/hooks' ? new Response(null, { status: 307, headers: { location: '/elsewhere' } }) : new Response('followed'))),
    )
    const h = harness(api, app.url)
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    api.emit(event())
    await until('the forward', () => h.of('forwarded').length === 1)
    expect(h.of('forwarded')[0]).toMatchObject({ status: 307, location: '/elsewhere', attempts: 1 })
    expect(app.hits.map((x) => x.path)).toEqual(['/hooks'])
    h.stop()
    expect(await done).toBe(0)
  })

  test('--skip-verify accepts a certificate this machine does not trust; without it the line says why', async () => {
    const { makePki } = await import('../net/_tls')
    const pki = makePki(['IP:127.0.0.1'])
    const app = track(receiver(() => new Response('ok'), 0, { cert: pki.serverCert, key: pki.serverKey }))
    for (const skipVerify of [false, true]) {
      const api = track(fakeApi())
      const h = harness(api, app.url, { skipVerify })
      const done = h.start()
      await until('the session', () => h.of('ready').length === 1)
      api.emit(event())
      await until('an outcome', () => h.of('forwarded').length + h.of('failed').length === 1)
      if (skipVerify) expect(h.of('forwarded')[0]).toMatchObject({ status: 200 })
      else expect(h.of('failed')[0]).toMatchObject({ error: expect.stringContaining('--skip-verify'), attempts: 1 })
      expect(h.sleeps).toEqual([])
      h.stop()
      expect(await done).toBe(0)
    }
    expect(app.hits).toHaveLength(1)
  })
})

describe('the session', () => {
  test('410 or 404 on a poll opens a new session with the same secret, and events keep coming', async () => {
    const api = track(fakeApi())
    const app = track(receiver())
    const h = harness(api, app.url, { events: ['link.*'] })
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    api.sessions.delete('cls_1') // expired on the server: 410
    await until('a second session', () => h.of('ready').length === 2)
    expect(h.of('ready')[1]).toMatchObject({ session: 'cls_2', secret: SECRET, replaces: 'cls_1', events: ['link.*'] })
    api.script((req, url) => (url.searchParams.get('session') === 'cls_2' ? failure(404, 'not_found') : undefined))
    await until('a third session', () => h.of('ready').length === 3)
    api.script(() => undefined)
    expect(h.of('ready')[2]).toMatchObject({ session: 'cls_3', secret: SECRET, replaces: 'cls_2' })
    expect(api.opened.every((o: any) => JSON.stringify(o.events) === '["link.*"]')).toBe(true)
    api.emit(event())
    await until('the forward', () => h.of('forwarded').length === 1)
    expect(h.of('warning')).toEqual([])
    h.stop()
    expect(await done).toBe(0)
    expect(api.deleted).toEqual(['cls_3'])
  })

  test('a new secret after a key rotation is announced', async () => {
    const api = track(fakeApi())
    const h = harness(api, 'http://127.0.0.1:9/')
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    api.setSecret('whsec_rotated')
    api.sessions.delete('cls_1')
    await until('a second session', () => h.of('ready').length === 2)
    expect(h.of('ready')[1].secret).toBe('whsec_rotated')
    expect(h.of('warning')[0].message).toContain('signing secret changed')
    h.stop()
    expect(await done).toBe(0)
  })

  test('a server away or failing is waited out with backoff 1, 2, 4, 8, 15, 15 s, said once, then welcomed back', async () => {
    const api = track(fakeApi())
    const app = track(receiver())
    const h = harness(api, app.url)
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    let failing = 6
    // A restart: connections dropped without an answer, then 503s; the session survives it.
    api.script((_req, url) => {
      if (!url.pathname.endsWith('/events') || failing === 0) return undefined
      failing--
      return failing % 2 === 0 ? new Response('<html>bad gateway</html>', { status: 502 }) : failure(503, 'unavailable')
    })
    await until('the outage to pass', () => failing === 0 && h.of('info').length === 1)
    expect(h.sleeps).toEqual([1_000, 2_000, 4_000, 8_000, 15_000, 15_000])
    expect(h.of('warning')).toHaveLength(1)
    expect(h.of('warning')[0].message).toContain(`cannot reach lnk at ${api.origin}/v1`)
    expect(h.of('info')[0].message).toContain('again')
    api.emit(event())
    await until('the forward', () => h.of('forwarded').length === 1)
    expect(h.of('ready')).toHaveLength(1)
    h.stop()
    expect(await done).toBe(0)
  })

  test('429 waits as long as Retry-After says', async () => {
    const api = track(fakeApi())
    const h = harness(api, 'http://127.0.0.1:9/')
    let limited = true
    api.script((_req, url) => {
      if (!url.pathname.endsWith('/events') || !limited) return undefined
      limited = false
      return failure(429, 'rate_limited', 'slow down', { 'retry-after': '7' })
    })
    const done = h.start()
    await until('the retry', () => !limited && api.polls() >= 2)
    expect(h.sleeps).toEqual([7_000])
    h.stop()
    expect(await done).toBe(0)
  })

  test('a server not there at start is waited for', async () => {
    const port = freePort()
    const api = track(fakeApi())
    const h = harness(api, 'http://127.0.0.1:9/')
    h.settings.apiBase = `http://127.0.0.1:${port}/v1`
    h.onSleep(() => {
      if (h.sleeps.length === 3) h.settings.apiBase = `${api.origin}/v1`
    })
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    expect(h.sleeps).toEqual([1_000, 2_000, 4_000])
    expect(h.of('warning')).toHaveLength(1)
    h.stop()
    expect(await done).toBe(0)
  })

  test('stopping ends the session on the server, even mid-forward, and exits 0', async () => {
    const api = track(fakeApi())
    const app = track(receiver(() => new Promise<Response>(() => {})))
    const h = harness(api, app.url)
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    api.emit(event(), event())
    await until('the first request', () => app.hits.length === 1)
    h.stop()
    expect(await done).toBe(0)
    expect(api.deleted).toEqual(['cls_1'])
    expect(h.of('ended')).toEqual([expect.objectContaining({ session: 'cls_1', unforwarded: 2 })])
    expect(api.requests.at(-1)).toMatchObject({ method: 'DELETE', path: '/v1/webhooks/cli/sessions/cls_1', auth: 'Bearer lnk_live_test' })
  })

  test('a refused key ends it with an error: at the start, and when the key is revoked later', async () => {
    const api = track(fakeApi())
    const bad = harness(api, 'http://127.0.0.1:9/', { apiKey: 'lnk_live_wrong' })
    await expect(bad.start()).rejects.toThrow(ListenError)
    const h = harness(api, 'http://127.0.0.1:9/')
    const done = h.start()
    await until('the session', () => h.of('ready').length === 1)
    api.script(() => failure(403, 'forbidden', 'permission webhooks:read missing'))
    await expect(done).rejects.toThrow(/refused.*403 forbidden/)
    await done.catch(() => {})
  })

  test('a --base-url that is not lnk ends it with an error naming the URL', async () => {
    const api = track(fakeApi())
    api.script(() => new Response('<h1>Not Found</h1>', { status: 404, headers: { 'content-type': 'text/html' } }))
    const h = harness(api, 'http://127.0.0.1:9/')
    await expect(h.start()).rejects.toThrow(`answered 404 without lnk's envelope: is ${api.origin}/v1 an lnk server?`)
    expect(h.sleeps).toEqual([])
  })

  test('an invalid --events list is a usage error', async () => {
    const api = track(fakeApi())
    api.script((req) => (req.method === 'POST' ? failure(400, 'validation_failed', 'events[0]: unknown event type nope.*') : undefined))
    const h = harness(api, 'http://127.0.0.1:9/', { events: ['nope.*'] })
    await expect(h.start()).rejects.toThrow(UsageError)
  })

  test('--print-secret prints the secret alone and leaves no session behind', async () => {
    const api = track(fakeApi())
    const h = harness(api, '', { printSecret: true })
    const out: string[] = []
    expect(await printSecret(h.settings, { ...h.deps, out: (l) => out.push(l) })).toBe(0)
    expect(out).toEqual([SECRET])
    expect(api.sessions.size).toBe(0)
    expect(api.deleted).toEqual(['cls_1'])
  })
})

describe('text output', () => {
  const session = { id: 'cls_9', secret: SECRET, mode: 'test', events: ['*'] }
  const lines = (color: boolean) => {
    const out: string[] = []
    const err: string[] = []
    const r = createReporter({
      format: 'text',
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      color: { out: color, err: color },
      now: () => Date.UTC(2025, 0, 2, 3, 4, 5),
    })
    r.ready(session, 'http://localhost:3000/')
    r.received({ id: 'evt_1', type: 'link.created' })
    r.forwarded({ id: 'evt_1', type: 'link.created' }, { kind: 'answered', status: 200, ms: 12, attempts: 1, location: null }, 'http://localhost:3000/')
    r.forwarded({ id: 'evt_2', type: 'link.created' }, { kind: 'failed', error: 'connection refused', ms: 7003, attempts: 4 }, 'http://localhost:3000/')
    r.warn('careful')
    r.ended('cls_9', 0)
    return { out, err }
  }

  test('a Ready line with the session and the secret, then --> and <-- lines with status and time', () => {
    const { out, err } = lines(false)
    expect(out[0]).toBe(`Ready! Session cls_9 (test, events *) forwarding to http://localhost:3000/; signing secret ${SECRET} (^C to stop)`)
    expect(out[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}--> link\.created \[evt_1\]$/)
    expect(out[2]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}<-- \[200\] POST http:\/\/localhost:3000\/ \(12 ms\) \[evt_1\]$/)
    expect(out[3]).toMatch(/<-- \[ERR\] POST http:\/\/localhost:3000\/ connection refused after 4 attempts \(7003 ms\) \[evt_2\]$/)
    expect(out[4]).toBe('Session cls_9 ended.')
    expect(err).toEqual(['Warning: careful'])
    expect(out.join('\n') + err.join('\n')).not.toContain('\x1b[')
  })

  test('colours only when asked for', () => {
    const { out, err } = lines(true)
    expect(out[2]).toContain('[\x1b[32m200\x1b[0m]')
    expect(out[3]).toContain('[\x1b[31mERR\x1b[0m]')
    expect(err[0]).toContain('\x1b[33m')
  })
})

describe('the command as a process', () => {
  const dir = tempDir('lnk-listen-')
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  test('usage errors exit 2 with the help', async () => {
    for (const args of [
      ['listen', '--forward-to', '3000'],
      ['listen', '--api-key', 'k'],
      ['listen', '--api-key', 'k', '--forward-to', 'ftp://x'],
      ['listen', '--api-key', 'k', '--forward-to', '3000', '--nope'],
    ]) {
      const r = await runLnk(args, { dataDir: dir })
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('Usage: lnk listen')
      expect(r.stdout).toBe('')
    }
  })

  test('a key the server refuses exits 1 with one line; LNK_API_KEY and LNK_BASE_URL are read', async () => {
    const api = track(fakeApi())
    const r = await runLnk(['listen', '--forward-to', '3000'], { dataDir: dir, env: { LNK_API_KEY: 'lnk_live_nope', LNK_BASE_URL: api.origin } })
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toMatch(/^lnk: the API key was refused \(401 unauthorized/)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(api.requests[0]).toMatchObject({ method: 'POST', path: '/v1/webhooks/cli/sessions', auth: 'Bearer lnk_live_nope' })
  })

  test('--print-secret prints one line and exits 0', async () => {
    const api = track(fakeApi())
    const r = await runLnk(['listen', '--api-key', 'lnk_live_test', '--base-url', api.origin, '--print-secret'], { dataDir: dir })
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`${SECRET}\n`)
    expect(api.sessions.size).toBe(0)
  })
})

/** `lnk listen …` as a process: its output collected, lines awaited and the exit bounded in time. */
function spawnListen(args: string[], dataDir: string) {
  const proc = Bun.spawn(['bun', 'run', 'src/main.ts', 'listen', ...args], { cwd: ROOT, env: lnkEnv(dataDir), stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const out = { text: '' }
  const err = { text: '' }
  const pump = async (stream: ReadableStream<Uint8Array>, sink: { text: string }) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) sink.text += decoder.decode(chunk, { stream: true })
  }
  const pumped = Promise.all([pump(proc.stdout, out), pump(proc.stderr, err)])
  const show = () => `stdout:\n${out.text}\nstderr:\n${err.text}`
  return {
    proc,
    stdout: () => out.text,
    stderr: () => err.text,
    async line(re: RegExp, timeoutMs = 10_000): Promise<string> {
      let found: string | undefined
      await until(`a line matching ${re}; ${show()}`, () => (found = out.text.split('\n').find((l) => re.test(l))) !== undefined, timeoutMs).catch((e) => {
        proc.kill('SIGKILL')
        throw e
      })
      return found!
    },
    async exit(timeoutMs = 10_000): Promise<number> {
      const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs)
      const code = await proc.exited
      clearTimeout(timer)
      await pumped
      if (proc.signalCode === 'SIGKILL') throw new Error(`lnk listen did not exit within ${timeoutMs} ms; ${show()}`)
      return code
    },
    stop: () => proc.kill('SIGKILL'),
  }
}

describe('against a real lnk', () => {
  test('an event made through the API reaches the app with its exact bytes and both signatures valid; ^C ends the session', async () => {
    const lnk = await startLnk()
    cleanups.push(() => lnk.stop())
    const acct = await bootstrapAccount(lnk.env.rt)
    const key = acct.apiKey.key as string
    const received: { body: string; headers: Record<string, string> }[] = []
    const app = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        received.push({ body: await req.text(), headers: Object.fromEntries(req.headers) })
        return new Response('thanks')
      },
    })
    cleanups.push(() => app.stop(true))
    const target = `http://127.0.0.1:${app.port}/webhooks`
    const cli = track(spawnListen(['--api-key', key, '--base-url', lnk.origin, '--forward-to', target, '--events', 'link.*'], lnk.env.dir))

    const ready = await cli.line(/^Ready!/)
    const session = /Session (cls_\S+)/.exec(ready)?.[1]
    const secret = /signing secret (whsec_\S+)/.exec(ready)?.[1]
    expect(session).toBeDefined()
    expect(secret).toBeDefined()
    expect(ready).toContain(`forwarding to ${target}`)

    const api = (path: string, init: RequestInit & { json?: unknown } = {}) => lnk.env.request(path, { key, ...init })
    const listed = await body(await api('/v1/webhooks/cli/sessions'))
    expect(listed.data.map((s: any) => s.id)).toEqual([session])
    expect(JSON.stringify(listed)).not.toContain(secret!)

    const made = await api('/v1/links', { method: 'POST', json: { destinationUrl: 'https://example.com/listen', title: 'Café ✓ "quoted"' } })
    expect(made.status).toBe(201)
    const link = (await body(made)).data

    const sent = await cli.line(/<-- \[200\]/)
    expect(sent).toContain(`POST ${target}`)
    expect(cli.stdout()).toMatch(/--> link\.created \[evt_/)
    expect(received).toHaveLength(1)
    const got = received[0]!
    // Both verifiers recompute the HMAC over the bytes received: any change to the body fails them.
    const standard = new Webhook(secret!).verify(got.body, got.headers) as any
    const stripe = (await new Stripe('sk_test_unused').webhooks.constructEventAsync(got.body, got.headers['x-service-signature']!, secret!)) as any
    expect(stripe).toEqual(standard)
    expect(standard.type).toBe('link.created')
    expect(standard.id).toBe(got.headers['webhook-id'])
    expect(standard.data).toMatchObject({ id: link.id, title: 'Café ✓ "quoted"' })
    expect(got.headers['content-type']).toBe('application/json')
    // A second session of the same key signs with the same secret (it belongs to the key).
    const other = await api('/v1/webhooks/cli/sessions', { method: 'POST', json: {} })
    const otherSession = (await body(other)).data
    expect(otherSession.secret).toBe(secret)
    await api(`/v1/webhooks/cli/sessions/${otherSession.id}`, { method: 'DELETE' })

    cli.proc.kill('SIGINT')
    expect(await cli.exit()).toBe(0)
    expect(cli.stdout()).toContain(`Session ${session} ended.`)
    const after = await body(await api('/v1/webhooks/cli/sessions'))
    expect(after.data).toEqual([])
  }, 30_000)

  test('a key without the webhooks permission exits 1 with one line; an event name the server does not know exits 2', async () => {
    const lnk = await startLnk()
    cleanups.push(() => lnk.stop())
    const acct = await bootstrapAccount(lnk.env.rt)
    const narrow = await makeKey(lnk.env.rt, acct.workspace.slug, 'links:read')
    const cli = track(spawnListen(['--api-key', narrow.key, '--base-url', lnk.origin, '--forward-to', '3000'], lnk.env.dir))
    expect(await cli.exit()).toBe(1)
    expect(cli.stderr().trim()).toMatch(/^lnk: the API key was refused \(403 forbidden/)
    expect(cli.stdout()).toBe('')

    const typo = track(spawnListen(['--api-key', acct.apiKey.key, '--base-url', lnk.origin, '--forward-to', '3000', '--events', 'link.creatd'], lnk.env.dir))
    expect(await typo.exit()).toBe(2)
    expect(typo.stderr()).toStartWith('lnk: the server refused the session: ')
    expect(typo.stderr()).toContain('Usage: lnk listen')
  }, 30_000)
})
