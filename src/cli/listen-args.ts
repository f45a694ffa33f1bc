// `lnk listen`'s command line and environment turned into settings: the forward target, the API base, the
// extra headers. Pure; every mistake is a UsageError (exit 2).
import { UsageError, type Values } from './command'

export type ListenFormat = 'text' | 'json'

export interface ListenSettings {
  apiKey: string
  /** The server's origin with /v1, no trailing slash. */
  apiBase: string
  /** Absolute http(s) URL the events are POSTed to; empty with --print-secret alone. */
  target: string
  /** Event names or patterns; undefined lets the server default to every event. */
  events: string[] | undefined
  headers: [string, string][]
  skipVerify: boolean
  printSecret: boolean
  format: ListenFormat
}

/** The same default as LNK_BASE_URL on the server side (contract section 1). */
export const DEFAULT_BASE_URL = 'http://localhost:8080'

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** `3000` → http://localhost:3000/, `localhost:3000/hooks` → http://localhost:3000/hooks, URLs as given. */
export function targetUrl(value: string): string {
  const text = value.trim()
  if (/^\d+$/.test(text)) {
    const port = Number(text)
    if (port < 1 || port > 65535) throw new UsageError(`--forward-to ${value}: a port is 1-65535`)
    return `http://localhost:${port}/`
  }
  // host:port[/path] without a scheme would parse as a URL whose scheme is the host.
  const withScheme = /^[A-Za-z0-9.-]+:\d+(\/|$)/.test(text) || /^\[[0-9A-Fa-f:.]+\]:\d+(\/|$)/.test(text) ? `http://${text}` : text
  let url: URL
  try {
    url = new URL(withScheme)
  } catch {
    throw new UsageError(`--forward-to ${value}: expected a port, host:port or an http(s) URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--forward-to ${value}: only http and https targets`)
  return url.href
}

/** The origin as LNK_BASE_URL spells it, plus /v1 (a trailing /v1 given by habit is not doubled). */
export function apiBaseOf(origin: string, source: string): string {
  let url: URL
  try {
    url = new URL(origin.trim())
  } catch {
    throw new UsageError(`${source} ${origin}: expected the server's origin, such as ${DEFAULT_BASE_URL}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${source} ${origin}: only http and https`)
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')
  return `${url.origin}${path}/v1`
}

/** `Name: value` as curl's -H takes it. */
export function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':')
  const name = colon < 0 ? '' : text.slice(0, colon).trim()
  if (!HEADER_NAME.test(name)) throw new UsageError(`-H "${text}": expected "Name: value"`)
  const value = text.slice(colon + 1).trim()
  if (/[\r\n\0]/.test(value)) throw new UsageError(`-H "${text}": a header value is one line`)
  return [name, value]
}

function eventList(text: string): string[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  if (names.length === 0) throw new UsageError('--events: name at least one event, such as link.created or link.*')
  return names
}

/** A flag's value or values: a repeatable flag arrives as a list, a single one as a string. */
function many(value: unknown): string[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value.map(String) : [String(value)]
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

export function listenSettings(values: Values, env: Record<string, string | undefined>): ListenSettings {
  const printSecret = values['print-secret'] === true
  const apiKey = text(values['api-key']) ?? env.LNK_API_KEY ?? ''
  if (apiKey.trim() === '') throw new UsageError('missing --api-key (or LNK_API_KEY)')
  const forwardTo = text(values['forward-to'])
  if (forwardTo === undefined && !printSecret) throw new UsageError('missing --forward-to (a port, host:port or URL)')
  const format = text(values.format) ?? 'text'
  if (format !== 'text' && format !== 'json') throw new UsageError(`--format ${format}: expected text or json`)
  const baseFlag = text(values['base-url'])
  const base = baseFlag ?? env.LNK_BASE_URL ?? DEFAULT_BASE_URL
  const events = text(values.events)
  return {
    apiKey: apiKey.trim(),
    apiBase: apiBaseOf(base, baseFlag !== undefined ? '--base-url' : env.LNK_BASE_URL !== undefined ? 'LNK_BASE_URL' : 'base URL'),
    target: forwardTo === undefined ? '' : targetUrl(forwardTo),
    events: events === undefined ? undefined : eventList(events),
    headers: many(values.header).map(parseHeader),
    skipVerify: values['skip-verify'] === true,
    printSecret,
    format,
  }
}
