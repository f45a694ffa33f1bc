// The session side of `lnk listen`: open a forwarding session, long-poll its events, hand them one at a time
// to the forwarder, end the session on stop. Every connection is outbound. Two loops share a queue: the
// poller keeps polling while an event is being forwarded (a session unpolled for 60 s expires and its queue
// with it), the forwarder keeps the order. Lost contact with the server is retried with a capped backoff and
// said once per outage; a session the server no longer knows (404, 410) is replaced, and the secret, which
// belongs to the API key, stays the same. Only a refused key or a request the server will never accept ends
// the listener with an error. fetch, sleep and the clock come from the caller.
import { UsageError } from './command'
import type { ListenSettings } from './listen-args'
import { createForwarder, describe, type Fetch, type ForwardedEvent, type Sleep } from './listen-forward'
import type { Reporter, SessionInfo } from './listen-output'

export interface Tuning {
  /** `wait` of each poll (the server's maximum is 25). */
  pollWaitSeconds: number
  forwardTimeoutMs: number
  /** Pauses before the 2nd, 3rd, 4th attempt when the app refused the connection. */
  retryDelaysMs: readonly number[]
  /** Pauses while the server is unreachable: one per failure in a row, the last one repeated. */
  backoffMs: readonly number[]
  /** How much longer than its `wait` a poll may take before it counts as lost. */
  pollSlackMs: number
  /** Bound of each request that is not a poll. */
  requestTimeoutMs: number
  /**
   * Events held here waiting for the app, at most. A full listener stops taking events (the server keeps
   * them, up to its own per-session cap) and polls only to keep the session open, for one event at a time.
   */
  backlogMax: number
  /** While full, the longest pause between polls: well within the 60 s a session lives unpolled. */
  keepAliveMs: number
}

export const TUNING: Tuning = {
  pollWaitSeconds: 25,
  forwardTimeoutMs: 30_000,
  retryDelaysMs: [1_000, 2_000, 4_000],
  backoffMs: [1_000, 2_000, 4_000, 8_000, 15_000],
  pollSlackMs: 10_000,
  requestTimeoutMs: 10_000,
  backlogMax: 1_000,
  keepAliveMs: 40_000,
}

export interface ListenDeps {
  fetch: Fetch
  sleep: Sleep
  now: () => number
  report: Reporter
  deviceName: string
  tuning?: Partial<Tuning>
}

/** The listener cannot go on (exit 1). */
export class ListenError extends Error {}

type Answer<T> =
  | { ok: true; status: number; data: T }
  /** status 0: no answer at all (connection failed or timed out). */
  | { ok: false; status: number; code: string; message: string; retryAfterMs: number | null }

const stopped = Symbol('stopped')
/** Events asked for per poll (the server's maximum). */
const POLL_LIMIT = 100

function apiClient(s: ListenSettings, deps: ListenDeps, t: Tuning) {
  async function call<T>(method: string, path: string, stop: AbortSignal, timeoutMs: number, json?: unknown): Promise<Answer<T> | typeof stopped> {
    const headers: Record<string, string> = { authorization: `Bearer ${s.apiKey}`, accept: 'application/json', 'user-agent': 'lnk-listen' }
    if (json !== undefined) headers['content-type'] = 'application/json'
    const lost = (err: unknown) =>
      stop.aborted ? stopped : ({ ok: false, status: 0, code: 'unreachable', message: describe(err), retryAfterMs: null } as const)
    let res: Response
    try {
      res = await deps.fetch(`${s.apiBase}${path}`, {
        method,
        headers,
        body: json === undefined ? undefined : JSON.stringify(json),
        redirect: 'manual',
        signal: AbortSignal.any([stop, AbortSignal.timeout(timeoutMs)]),
      })
    } catch (err) {
      return lost(err)
    }
    let payload: any = null
    try {
      payload = JSON.parse(await res.text())
    } catch (err) {
      // Not JSON still has a status worth reading (a proxy's 502 page, some other server).
      if (!(err instanceof SyntaxError)) return lost(err)
    }
    if (payload?.success === true) return { ok: true, status: res.status, data: payload.data as T }
    const enveloped = typeof payload?.success === 'boolean'
    const error = enveloped ? (payload.error ?? {}) : {}
    const retryAfter = Number(res.headers.get('retry-after'))
    return {
      ok: false,
      status: res.status,
      code: String(error.code ?? `http_${res.status}`),
      message: String(error.message ?? `answered ${res.status} without lnk's envelope: is ${s.apiBase} an lnk server?`),
      retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 60) * 1000 : null,
    }
  }
  return {
    open: (stop: AbortSignal) =>
      call<SessionInfo>('POST', '/webhooks/cli/sessions', stop, t.requestTimeoutMs, {
        ...(s.events ? { events: s.events } : {}),
        ...(deps.deviceName ? { deviceName: deps.deviceName } : {}),
      }),
    poll: (id: string, limit: number, stop: AbortSignal) =>
      call<ForwardedEvent[]>(
        'GET',
        `/webhooks/cli/events?session=${encodeURIComponent(id)}&wait=${t.pollWaitSeconds}&limit=${limit}`,
        stop,
        t.pollWaitSeconds * 1000 + t.pollSlackMs,
      ),
    close: (id: string) => call<unknown>('DELETE', `/webhooks/cli/sessions/${encodeURIComponent(id)}`, new AbortController().signal, t.requestTimeoutMs),
  }
}

type Failure = Extract<Answer<unknown>, { ok: false }>

const refusedKey = (a: Failure) => a.status === 401 || a.status === 403
/** Worth waiting out: no answer, overload, a restart in progress. */
const passing = (a: Failure) => a.status === 0 || a.status === 429 || a.status >= 500
const told = (a: Failure) => (a.status === 0 ? a.message : `${a.status} ${a.code}: ${a.message}`)

/** Contact with the server: a capped backoff per failure in a row, announced once per outage. */
function contact(s: ListenSettings, deps: ListenDeps, t: Tuning, stop: AbortSignal) {
  let failures = 0
  return {
    async trouble(a: Failure) {
      if (failures === 0) {
        const cap = Math.max(...t.backoffMs) / 1000
        deps.report.warn(`cannot reach lnk at ${s.apiBase} (${told(a)}); trying again, at most ${cap} s apart`)
      }
      const delay = a.retryAfterMs ?? t.backoffMs[Math.min(failures, t.backoffMs.length - 1)]!
      failures++
      await deps.sleep(delay, stop)
    },
    fine() {
      if (failures > 0) deps.report.info(`connected to lnk at ${s.apiBase} again`)
      failures = 0
    },
  }
}

/** `--print-secret`: the key's signing secret on a line of its own; the session opened to learn it is ended. */
export async function printSecret(s: ListenSettings, deps: ListenDeps & { out: (line: string) => void }): Promise<number> {
  const api = apiClient(s, deps, { ...TUNING, ...deps.tuning })
  const a = await api.open(new AbortController().signal)
  if (a === stopped) return 0
  if (!a.ok) {
    if (refusedKey(a)) throw new ListenError(`the API key was refused (${told(a)})`)
    throw new ListenError(`could not open a session at ${s.apiBase} (${told(a)})`)
  }
  deps.out(a.data.secret)
  await api.close(a.data.id)
  return 0
}

/** Runs until `stop` aborts (answers 0) or the server refuses the key (throws ListenError). */
export async function runListener(s: ListenSettings, deps: ListenDeps, stop: AbortSignal): Promise<number> {
  const t: Tuning = { ...TUNING, ...deps.tuning }
  const api = apiClient(s, deps, t)
  const halt = new AbortController()
  const onStop = () => halt.abort()
  stop.addEventListener('abort', onStop, { once: true })
  if (stop.aborted) halt.abort()
  const link = contact(s, deps, t, halt.signal)

  /** A session, retrying while the server is away; null once stopped. */
  async function establish(first: boolean): Promise<SessionInfo | null> {
    for (;;) {
      const a = await api.open(halt.signal)
      if (a === stopped || halt.signal.aborted) return null
      if (a.ok) {
        link.fine()
        return a.data
      }
      if (refusedKey(a)) throw new ListenError(`the API key was refused (${told(a)})`)
      if (!passing(a)) {
        // Only the flags can make the first request invalid (an unknown event name, say).
        if (first && a.status === 400) throw new UsageError(`the server refused the session: ${a.message}`)
        throw new ListenError(`could not open a session (${told(a)})`)
      }
      await link.trouble(a)
    }
  }

  let session: SessionInfo | null = null
  let fatal: unknown = null
  const backlog: ForwardedEvent[] = []
  let arrived: (() => void) | null = null
  const wake = () => {
    arrived?.()
    arrived = null
  }
  halt.signal.addEventListener('abort', wake, { once: true })
  let roomMade: (() => void) | null = null

  /** While the backlog is full: until the app takes an event, or until the session needs a poll to live. */
  async function waitForRoom(lastPollAt: number) {
    while (backlog.length >= t.backlogMax && !halt.signal.aborted) {
      const left = lastPollAt + t.keepAliveMs - deps.now()
      if (left <= 0) return
      const done = new AbortController()
      const room = new Promise<void>((settle) => (roomMade = settle))
      await Promise.race([room, deps.sleep(left, AbortSignal.any([halt.signal, done.signal]))])
      done.abort()
      roomMade = null
    }
  }

  let warnedRefused = false
  const forward = createForwarder(
    { target: s.target, extraHeaders: s.headers, skipVerify: s.skipVerify, timeoutMs: t.forwardTimeoutMs, retryDelaysMs: t.retryDelaysMs },
    {
      fetch: deps.fetch,
      sleep: deps.sleep,
      now: deps.now,
      onRefused() {
        if (warnedRefused) return
        warnedRefused = true
        const tries = t.retryDelaysMs.length + 1
        deps.report.warn(`nothing is listening on ${s.target} (connection refused): start your app there; each event is tried ${tries} times, then skipped`)
      },
    },
  )

  async function pollLoop(current: SessionInfo) {
    let lastPollAt = deps.now()
    while (!halt.signal.aborted) {
      await waitForRoom(lastPollAt)
      if (halt.signal.aborted) return
      lastPollAt = deps.now()
      const a = await api.poll(current.id, Math.min(POLL_LIMIT, Math.max(1, t.backlogMax - backlog.length)), halt.signal)
      if (a === stopped || halt.signal.aborted) return
      if (a.ok) {
        link.fine()
        if (!Array.isArray(a.data)) throw new ListenError('polling for events answered something other than a list')
        if (a.data.length > 0) {
          backlog.push(...a.data)
          wake()
        }
        continue
      }
      if (a.status === 404 || a.status === 410) {
        const fresh = await establish(false)
        if (!fresh) return
        if (fresh.secret !== current.secret) deps.report.warn('the signing secret changed (the API key was rotated): use the new one below')
        deps.report.ready(fresh, s.target, current.id)
        session = current = fresh
        continue
      }
      if (refusedKey(a)) throw new ListenError(`the API key was refused (${told(a)})`)
      if (!passing(a)) throw new ListenError(`polling for events failed (${told(a)})`)
      await link.trouble(a)
    }
  }

  async function forwardLoop() {
    for (;;) {
      while (backlog.length === 0) {
        if (halt.signal.aborted) return
        await new Promise<void>((settle) => (arrived = settle))
      }
      if (halt.signal.aborted) return
      const event = backlog[0]!
      deps.report.received({ id: event.id, type: event.type })
      const outcome = await forward(event, halt.signal)
      if (outcome.kind === 'stopped') return
      backlog.shift()
      roomMade?.()
      deps.report.forwarded({ id: event.id, type: event.type }, outcome, s.target)
    }
  }

  try {
    session = await establish(true)
    if (!session) return 0
    deps.report.ready(session, s.target)
    await Promise.all([
      pollLoop(session).catch((err) => {
        fatal = err
        halt.abort()
      }),
      forwardLoop(),
    ])
    if (fatal) throw fatal
    // Ended by the user: the session goes now rather than expiring in 60 s.
    const open = session as SessionInfo
    const closed = await api.close(open.id)
    if (closed !== stopped && !closed.ok && closed.status !== 404 && closed.status !== 410) {
      deps.report.warn(`could not end session ${open.id} (${told(closed)}); it expires by itself 60 s after the last poll`)
    }
    deps.report.ended(open.id, backlog.length)
    return 0
  } finally {
    stop.removeEventListener('abort', onStop)
  }
}
