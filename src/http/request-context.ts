// Per-request facts kept beside the Request object: id, start time, final status and the socket address
// (Bun.serve hands that to server.ts, which records it here before Elysia sees the request).
import type { Config } from '../platform/config'
import { unmapIp } from '../platform/ip'
import { base62 } from '../platform/random'

export interface RequestState {
  id: string
  start: number
  /** Set by the error handler; success responses use Elysia's set.status. */
  status?: number
}

const states = new WeakMap<Request, RequestState>()
const socketAddresses = new WeakMap<Request, string>()

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function beginRequest(request: Request): RequestState {
  const incoming = request.headers.get('x-request-id')
  const state: RequestState = { id: incoming && INCOMING_ID.test(incoming) ? incoming : `req_${base62(20)}`, start: performance.now() }
  states.set(request, state)
  return state
}

export const requestState = (request: Request) => states.get(request)

export function recordSocketAddress(request: Request, address: string | undefined) {
  if (address) socketAddresses.set(request, unmapIp(address))
}

/** What can lift the idle timeout of one request's connection: Bun's server. */
export interface IdleTimeouts {
  timeout(request: Request, seconds: number): void
}
const listeners = new WeakMap<Request, IdleTimeouts>()

/** Recorded for API requests (not redirects), so a route may hold its answer longer than the idle timeout. */
export function recordListener(request: Request, server: IdleTimeouts) {
  listeners.set(request, server)
}

/**
 * Lets this request's connection stay silent for `seconds` (Bun closes one silent for 10 s by default): for
 * a long poll. A no-op outside a real server.
 */
export function holdOpen(request: Request, seconds: number) {
  listeners.get(request)?.timeout(request, seconds)
}

/** The socket peer's address (what connected to us, proxies included), or null outside a real server. */
export const socketAddress = (request: Request): string | null => socketAddresses.get(request) ?? null

/**
 * The client address: the socket peer, or with LNK_TRUST_PROXY=N the N-th X-Forwarded-For entry from the
 * right (the one the outermost trusted proxy saw). Never the header when no proxy is trusted.
 */
export function clientIp(request: Request, config: Pick<Config, 'trustProxy'>): string | null {
  const socket = socketAddresses.get(request) ?? null
  if (!config.trustProxy) return socket
  const hops = (request.headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (!hops.length) return socket
  const ip = hops[Math.max(0, hops.length - config.trustProxy)] ?? socket
  return ip ? unmapIp(ip) : ip
}
