// What `lnk listen` shows: a Ready line, a --> and a <-- line per event, notices; or the same as one JSON
// object a line (--format json, everything on stdout so a pipe gets one stream). Colours only when asked
// (the caller decides from the TTY and NO_COLOR).
import type { ListenFormat } from './listen-args'

export interface SessionInfo {
  id: string
  secret: string
  mode: string
  events: string[]
}

export interface EventRef {
  id: string
  type: string
}

export type ForwardOutcome =
  | { kind: 'answered'; status: number; ms: number; attempts: number; location: string | null }
  | { kind: 'failed'; error: string; ms: number; attempts: number }
  | { kind: 'stopped' }

export interface Reporter {
  /** A session is open; `renewedFrom` when it replaces one the server no longer knows. */
  ready(session: SessionInfo, target: string, renewedFrom?: string): void
  /** Forwarding of an event begins. */
  received(event: EventRef): void
  forwarded(event: EventRef, outcome: Exclude<ForwardOutcome, { kind: 'stopped' }>, target: string): void
  warn(message: string): void
  info(message: string): void
  ended(sessionId: string, unforwarded: number): void
}

export interface ReporterOptions {
  format: ListenFormat
  out: (line: string) => void
  err: (line: string) => void
  /** ANSI colours on out / on err. */
  color: { out: boolean; err: boolean }
  now: () => number
}

const paint = (on: boolean) => (code: string, s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s)

const pad = (n: number) => String(n).padStart(2, '0')

/** Local wall-clock time, as a developer reads their own terminal. */
function stamp(ms: number): string {
  const d = new Date(ms)
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
}

function textReporter(o: ReporterOptions): Reporter {
  const c = paint(o.color.out)
  const e = paint(o.color.err)
  const statusColor = (status: number) => (status >= 200 && status < 300 ? '32' : status >= 300 && status < 400 ? '33' : '31')
  return {
    ready(s, target, renewedFrom) {
      const why = renewedFrom ? `, replacing ${renewedFrom}` : ''
      o.out(
        `${c('1', 'Ready!')} Session ${s.id} (${s.mode}, events ${s.events.join(',')}${why}) forwarding to ${target}; ` +
          `signing secret ${c('1', s.secret)} (^C to stop)`,
      )
    },
    received(ev) {
      o.out(`${stamp(o.now())}  --> ${ev.type} [${ev.id}]`)
    },
    forwarded(ev, r, target) {
      if (r.kind === 'failed') {
        const tries = r.attempts > 1 ? ` after ${r.attempts} attempts` : ''
        o.out(`${stamp(o.now())}  <-- [${c('31', 'ERR')}] POST ${target} ${r.error}${tries} (${r.ms} ms) [${ev.id}]`)
        return
      }
      const moved = r.location !== null ? ` redirect to ${r.location} not followed` : ''
      o.out(`${stamp(o.now())}  <-- [${c(statusColor(r.status), String(r.status))}] POST ${target} (${r.ms} ms) [${ev.id}]${moved}`)
    },
    warn(message) {
      o.err(`${e('33', 'Warning:')} ${message}`)
    },
    info(message) {
      o.err(message)
    },
    ended(id, unforwarded) {
      const left = unforwarded > 0 ? `; ${unforwarded} received event(s) were not forwarded` : ''
      o.out(`Session ${id} ended${left}.`)
    },
  }
}

function jsonReporter(o: ReporterOptions): Reporter {
  const line = (type: string, fields: Record<string, unknown>) => o.out(JSON.stringify({ type, time: new Date(o.now()).toISOString(), ...fields }))
  return {
    ready(s, target, renewedFrom) {
      line('ready', { session: s.id, secret: s.secret, mode: s.mode, events: s.events, forwardTo: target, ...(renewedFrom ? { replaces: renewedFrom } : {}) })
    },
    received(ev) {
      line('received', { event: ev })
    },
    forwarded(ev, r, target) {
      if (r.kind === 'failed') line('failed', { event: ev, url: target, error: r.error, attempts: r.attempts, ms: r.ms })
      else
        line('forwarded', {
          event: ev,
          url: target,
          status: r.status,
          ms: r.ms,
          attempts: r.attempts,
          ...(r.location !== null ? { location: r.location } : {}),
        })
    },
    warn(message) {
      line('warning', { message })
    },
    info(message) {
      line('info', { message })
    },
    ended(id, unforwarded) {
      line('ended', { session: id, unforwarded })
    },
  }
}

export function createReporter(o: ReporterOptions): Reporter {
  return o.format === 'json' ? jsonReporter(o) : textReporter(o)
}
