// One event to the developer's app: the exact body bytes and the signed headers as the server handed them
// over, POSTed once; a redirect is an answer, never followed. Only a failure to connect is tried again (after
// 1, 2 and 4 s): then the app never saw the request, so a retry cannot deliver it twice.
import type { ForwardOutcome } from './listen-output'

export type Fetch = (url: string, init: RequestInit & { tls?: { rejectUnauthorized?: boolean } }) => Promise<Response>
/** Resolves after `ms`, or as soon as `signal` aborts. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>

export interface ForwardedEvent {
  id: string
  type: string
  /** The raw event body, exactly as signed. */
  body: string
  headers: Record<string, string>
}

export interface ForwardOptions {
  target: string
  extraHeaders: [string, string][]
  skipVerify: boolean
  timeoutMs: number
  retryDelaysMs: readonly number[]
}

export interface ForwardDeps {
  fetch: Fetch
  sleep: Sleep
  now: () => number
  /** Called on every refused connection (the caller warns once). */
  onRefused(): void
}

/** Headers of one hop that fetch sets itself; copying them would lie about this request. */
const HOP_BY_HOP = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer'])

/** Errors raised before a request could reach the app. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ConnectionRefused', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'FailedToOpenSocket'])
const REFUSED = new Set(['ECONNREFUSED', 'ConnectionRefused'])

const codeOf = (err: unknown) => String((err as { code?: unknown } | null)?.code ?? '')

/** A failed request in a few words. */
export function describe(err: unknown): string {
  if ((err as Error | null)?.name === 'TimeoutError') return 'no answer in time'
  const code = codeOf(err)
  if (REFUSED.has(code)) return 'connection refused'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found'
  if (code === 'ECONNRESET') return 'connection closed before an answer'
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|TLS|SSL/i.test(code)) return `TLS failed (${code}); --skip-verify accepts a self-signed certificate`
  const message = err instanceof Error ? err.message : String(err)
  return (code ? `${code}: ` : '') + message.split('\n')[0]!.replace(/^\w+: /, '')
}

export function forwardHeaders(event: ForwardedEvent, extra: [string, string][]): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(event.headers)) if (!HOP_BY_HOP.has(name.toLowerCase())) headers.set(name, value)
  for (const [name, value] of extra) headers.set(name, value)
  return headers
}

export function createForwarder(o: ForwardOptions, deps: ForwardDeps) {
  return async function forward(event: ForwardedEvent, stop: AbortSignal): Promise<ForwardOutcome> {
    const headers = forwardHeaders(event, o.extraHeaders)
    const body = new TextEncoder().encode(event.body)
    const started = deps.now()
    for (let attempt = 1; ; attempt++) {
      const timeout = AbortSignal.timeout(o.timeoutMs)
      try {
        const res = await deps.fetch(o.target, {
          method: 'POST',
          headers,
          body,
          redirect: 'manual',
          signal: AbortSignal.any([stop, timeout]),
          ...(o.skipVerify ? { tls: { rejectUnauthorized: false } } : {}),
        })
        const ms = deps.now() - started
        // The answer's body is the app's business; dropping it frees the connection.
        await res.body?.cancel().catch(() => {})
        const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null
        return { kind: 'answered', status: res.status, ms, attempts: attempt, location }
      } catch (err) {
        if (stop.aborted) return { kind: 'stopped' }
        const ms = deps.now() - started
        if (timeout.aborted)
          return {
            kind: 'failed',
            error: `no answer within ${o.timeoutMs % 1000 === 0 ? `${o.timeoutMs / 1000} s` : `${o.timeoutMs} ms`}`,
            ms,
            attempts: attempt,
          }
        const code = codeOf(err)
        if (REFUSED.has(code)) deps.onRefused()
        const delay = o.retryDelaysMs[attempt - 1]
        if (!NOT_CONNECTED.has(code) || delay === undefined) return { kind: 'failed', error: describe(err), ms, attempts: attempt }
        await deps.sleep(delay, stop)
        if (stop.aborted) return { kind: 'stopped' }
      }
    }
  }
}
