// Shared helpers of the webhooks tests (not a test file itself): an environment with the loopback opt-ins,
// a real receiver on 127.0.0.1 that records what it gets and answers what it is told, events published the
// way the areas publish them, and receiver-side verification with the standardwebhooks and stripe packages.
import { afterAll, afterEach, beforeAll, expect } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { ManualClock } from '../../src/platform/clock'
import { body, bootstrapAccount, makeKey, publishEvent, setup, type TestEnv } from '../helpers'

export const LOOPBACK_ENV = { LNK_WEBHOOK_ALLOW_HTTP: 'true', LNK_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' }

export interface Received {
  method: string
  path: string
  headers: Record<string, string>
  body: string
  at: number
}

export interface Answer {
  status?: number
  headers?: Record<string, string>
  body?: string
  delayMs?: number
}

/** An HTTP receiver on 127.0.0.1 (port 0). `answer` decides each response; every request is recorded. */
export function receiver(answer: (req: Received, n: number) => Answer = () => ({ status: 200 })) {
  const received: Received[] = []
  let inFlight = 0
  let maxInFlight = 0
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request): Promise<Response> {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      try {
        const rec: Received = {
          method: request.method,
          path: new URL(request.url).pathname,
          headers: Object.fromEntries(request.headers),
          body: await request.text(),
          at: Date.now(),
        }
        received.push(rec)
        const a: Answer = state.answer(rec, received.length)
        if (a.delayMs) await Bun.sleep(a.delayMs)
        return new Response(a.body ?? 'ok', { status: a.status ?? 200, headers: a.headers })
      } finally {
        inFlight--
      }
    },
  })
  const state: { server: typeof server; received: Received[]; answer: typeof answer; url(path?: string): string; readonly maxInFlight: number; stop(): void } =
    {
      server,
      received,
      answer,
      url: (path = '/hook') => `http://127.0.0.1:${server.port}${path}`,
      get maxInFlight() {
        return maxInFlight
      },
      stop: () => void server.stop(true),
    }
  return state
}

export type Receiver = ReturnType<typeof receiver>

/** A receiver that answers `status`, but only once released; `arrived` settles when the first request is in. */
export function holdingReceiver(status: number) {
  let arrived!: () => void
  let release!: () => void
  const inbound = new Promise<void>((resolve) => (arrived = resolve))
  const released = new Promise<void>((resolve) => (release = resolve))
  const received: Received[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      received.push({
        method: request.method,
        path: new URL(request.url).pathname,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
        at: Date.now(),
      })
      arrived()
      await released
      return new Response('ok', { status })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hook`, received, arrived: inbound, release, stop: () => server.stop(true) }
}

export interface Env extends TestEnv {
  clock: ManualClock
  key: string
  workspaceId: string
  /** Sends an authenticated request with the account's key. */
  api(path: string, init?: RequestInit & { json?: unknown; key?: string }): Promise<Response>
  /** Creates an endpoint and answers the created body (with secret). */
  createEndpoint(input: Record<string, unknown>, key?: string): Promise<any>
  /** Publishes an event the way an area does (in a transaction of the main connection). */
  emit(type: string, data?: Record<string, unknown>, mode?: 'live' | 'test'): Promise<string>
  /** Dispatches the outbox and runs every job due now. */
  run(): Promise<number>
}

type SetupOptions = NonNullable<Parameters<typeof setup>[0]>

export async function webhooksEnv(
  options: { env?: Record<string, string>; clock?: ManualClock; worker?: SetupOptions['worker']; log?: SetupOptions['log'] } = {},
): Promise<Env> {
  const clock = options.clock ?? new ManualClock(Date.now())
  const e = await setup({ clock, env: { ...LOOPBACK_ENV, ...options.env }, worker: options.worker, log: options.log })
  const account = await bootstrapAccount(e.rt)
  const key = account.apiKey.key
  const workspaceId = account.workspace.id
  const env: Env = {
    ...e,
    clock,
    key,
    workspaceId,
    api: (path, init = {}) => e.request(`/v1${path}`, { key, ...init }),
    async createEndpoint(input, k = key) {
      const res = await e.request('/v1/webhooks', { method: 'POST', key: k, json: input })
      const payload = await body(res)
      if (res.status !== 201) throw new Error(`endpoint not created: ${res.status} ${JSON.stringify(payload)}`)
      return payload.data
    },
    emit(type, data = sampleLink(), mode = 'live') {
      return publishEvent(e.rt, { type, workspaceId, mode, data })
    },
    run: () => e.rt.worker.runDue(),
  }
  return env
}

export function sampleLink(overrides: Record<string, unknown> = {}) {
  return {
    id: '0190e0e0-0000-7000-8000-000000000001',
    slug: 'launch',
    domain: 'lnk.example',
    shortUrl: 'https://lnk.example/launch',
    destinationUrl: 'https://example.com/launch',
    title: 'Launch',
    tags: ['spring'],
    totalClicks: 3,
    ...overrides,
  }
}

export async function makeTestKey(env: Env) {
  const k = await makeKey(env.rt, env.workspaceId, '*', 'test')
  return k.key as string
}

/** Stripe's verifier with a tolerance, for requests signed at a time the test clock moved to. */
export async function stripeVerifies(req: Received, secret: string, toleranceSeconds = 10 ** 9): Promise<boolean> {
  try {
    await new Stripe('sk_test_unused').webhooks.constructEventAsync(req.body, req.headers['x-service-signature']!, secret, toleranceSeconds)
    return true
  } catch {
    return false
  }
}

/** Verifies a received request exactly as a receiver would, with both packages; answers the parsed body. */
export async function verifyBoth(req: Received, secret: string): Promise<unknown> {
  const fromStandard = new Webhook(secret).verify(req.body, req.headers)
  const stripe = new Stripe('sk_test_unused')
  const fromStripe = await stripe.webhooks.constructEventAsync(req.body, req.headers['x-service-signature']!, secret)
  expect(fromStripe as unknown).toEqual(fromStandard)
  return fromStandard
}

export async function expectRefusedByBoth(req: Received, secret: string) {
  expect(() => new Webhook(secret).verify(req.body, req.headers)).toThrow()
  const stripe = new Stripe('sk_test_unused')
  expect(stripe.webhooks.constructEventAsync(req.body, req.headers['x-service-signature']!, secret)).rejects.toThrow()
}

export const state = (env: Env) => env.rt.modules.webhooks.ctx.state

export async function deliveries(env: Env, endpointId: string, query = '') {
  const res = await env.api(`/webhooks/${endpointId}/deliveries${query}`)
  expect(res.status).toBe(200)
  return (await body(res)).data as any[]
}

export async function delivery(env: Env, endpointId: string, id: string) {
  const res = await env.api(`/webhooks/${endpointId}/deliveries/${id}`)
  expect(res.status).toBe(200)
  return (await body(res)).data as any
}

export async function endpoint(env: Env, id: string) {
  const res = await env.api(`/webhooks/${id}`)
  expect(res.status).toBe(200)
  return (await body(res)).data as any
}

/**
 * A webhooks environment and a receiver shared by a test file's tests: made before them (handed to `use`),
 * stopped after them, and the receiver's log and answer reset after each test.
 */
export function sharedWorld(use: (world: { env: Env; rx: Receiver }) => void, options: Parameters<typeof webhooksEnv>[0] = {}) {
  let world: { env: Env; rx: Receiver }
  beforeAll(async () => {
    world = { env: await webhooksEnv(options), rx: receiver() }
    use(world)
  })
  afterAll(async () => {
    world.rx.stop()
    await world.env.cleanup()
  })
  afterEach(() => {
    world.rx.received.length = 0
    world.rx.answer = () => ({ status: 200 })
  })
}
