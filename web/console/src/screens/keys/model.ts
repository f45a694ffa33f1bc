// The API key as /v1/api-keys answers it, and the pure translations between it and the form: text areas of
// one entry a line, times of day as minutes since local midnight, an expiry typed in the viewer's zone.
import { ApiError } from '../../api'
import type { Body, Schema } from '../../api-types'

/** A key as /v1/api-keys answers it (the document's ApiKey schema), and with its secret, shown once. */
export type ApiKey = Schema<'ApiKey'>
export type CreatedKey = Schema<'CreatedApiKey'>
export type Schedule = NonNullable<ApiKey['schedule']>
/** POST /v1/api-keys and PATCH /v1/api-keys/{id} bodies. */
export type CreateBody = Body<'/api-keys', 'post'>
export type PatchBody = Body<'/api-keys/{id}', 'patch'>

// The server's own list (a pure module, bundled in): the console offers exactly the names the API accepts.
export { PERMISSIONS } from '../../../../../src/modules/identity/permissions'

export const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const

export type Status = 'active' | 'paused' | 'revoked' | 'expired' | 'rotating'

/** The one word a list shows; revoked and expired are final, so they win over paused and rotating. */
export function statusOf(key: ApiKey, now = Date.now()): Status {
  if (key.revokedAt) return 'revoked'
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return 'expired'
  if (key.pausedAt) return 'paused'
  if (key.rotating) return 'rotating'
  return 'active'
}

export const STATUS_BADGE: Record<Status, string> = { active: 'ok', rotating: 'test', paused: 'muted', revoked: 'bad', expired: 'bad' }

export const viewerZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'

/** Every IANA zone the browser knows, with the viewer's own and UTC always present. */
export function timeZones(): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []
  return [...new Set([viewerZone(), 'UTC', ...known])].sort()
}

export const hhmm = (minute: number) => `${String(Math.floor(minute / 60) % 24).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`

/** '09:30' → 570; an end of '00:00' is the end of the day (1440), so 00:00-00:00 is the whole day. */
export function minuteOf(time: string, isEnd: boolean): number | null {
  const m = /^(\d{2}):(\d{2})/.exec(time)
  if (!m) return null
  const minute = Number(m[1]) * 60 + Number(m[2])
  return isEnd && minute === 0 ? 1440 : minute
}

export function describeSchedule(s: Schedule): string {
  const days = s.days.length === 7 ? 'every day' : s.days.map((d) => DAY_NAMES[d]?.slice(0, 3)).join(', ')
  return `${days}, ${hhmm(s.startMinute)}–${s.endMinute === 1440 ? '24:00' : hhmm(s.endMinute)} (${s.timezone})`
}

const lines = (text: string) => [
  ...new Set(
    text
      .split(/[\n,]/)
      .map((s) => s.trim())
      .filter(Boolean),
  ),
]

/** A datetime-local value (the viewer's zone) for an instant, and back. */
export function localInput(iso: string | null): string {
  if (!iso) return ''
  const d = new Date(iso)
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

export interface KeyForm {
  name: string
  mode: 'live' | 'test'
  all: boolean
  permissions: string[]
  allowedIps: string
  domains: string
  tags: string
  scheduled: boolean
  timezone: string
  days: number[]
  start: string
  end: string
  monthlyCallCap: string
  rateLimitOverride: string
  expiresAt: string
}

export function emptyForm(mode: 'live' | 'test'): KeyForm {
  return {
    name: '',
    mode,
    all: false,
    permissions: [],
    allowedIps: '',
    domains: '',
    tags: '',
    scheduled: false,
    timezone: viewerZone(),
    days: [1, 2, 3, 4, 5],
    start: '09:00',
    end: '17:00',
    monthlyCallCap: '',
    rateLimitOverride: '',
    expiresAt: '',
  }
}

export function formOf(key: ApiKey): KeyForm {
  const s = key.schedule
  return {
    name: key.name,
    mode: key.mode,
    all: key.permissions.includes('*'),
    permissions: key.permissions.filter((p) => p !== '*'),
    allowedIps: key.allowedIps.join('\n'),
    domains: (key.scopeFilters?.domains ?? []).join('\n'),
    tags: (key.scopeFilters?.tags ?? []).join('\n'),
    scheduled: s !== null,
    timezone: s?.timezone ?? viewerZone(),
    days: s?.days ?? [1, 2, 3, 4, 5],
    start: s ? hhmm(s.startMinute) : '09:00',
    end: s ? hhmm(s.endMinute) : '17:00',
    monthlyCallCap: key.monthlyCallCap === null ? '' : String(key.monthlyCallCap),
    rateLimitOverride: key.rateLimitOverride === null ? '' : String(key.rateLimitOverride),
    expiresAt: localInput(key.expiresAt),
  }
}

export type Fields = Record<string, string>

const whole = (text: string) => (text.trim() === '' ? null : Number(text.trim()))

/**
 * The request body the form says, with every restriction present (null or [] when cleared), plus the
 * problems the browser can see before sending (named by the same field keys the server's issues map to).
 */
export function bodyOf(form: KeyForm): { body: Record<string, unknown>; problems: Fields } {
  const problems: Fields = {}
  const domains = lines(form.domains).map((d) => d.toLowerCase())
  const tags = lines(form.tags)
  const cap = whole(form.monthlyCallCap)
  if (cap !== null && !(Number.isInteger(cap) && cap >= 1)) problems.monthlyCallCap = 'Enter a whole number of calls, 1 or more, or leave it empty for no cap.'
  const rate = whole(form.rateLimitOverride)
  if (rate !== null && !(Number.isInteger(rate) && rate >= 1 && rate <= 100_000))
    problems.rateLimitOverride = 'Enter a whole number from 1 to 100000, or leave it empty for the default 600.'
  let schedule: Schedule | null = null
  if (form.scheduled) {
    const startMinute = minuteOf(form.start, false)
    const endMinute = minuteOf(form.end, true)
    if (startMinute === null) problems.start = 'Enter a start time.'
    if (endMinute === null) problems.end = 'Enter an end time.'
    if (!form.days.length) problems.days = 'Choose at least one day.'
    if (startMinute !== null && endMinute !== null) schedule = { timezone: form.timezone, days: [...form.days].sort(), startMinute, endMinute }
  }
  let expiresAt: string | null = null
  if (form.expiresAt) {
    const ms = new Date(form.expiresAt).getTime()
    if (Number.isNaN(ms)) problems.expiresAt = 'Enter a date and time.'
    else expiresAt = new Date(ms).toISOString()
  }
  const permissions = form.all ? ['*'] : form.permissions
  if (!permissions.length) problems.permissions = 'Choose at least one permission.'
  if (!form.name.trim()) problems.name = 'Give the key a name.'
  return {
    body: {
      name: form.name.trim(),
      permissions,
      allowedIps: lines(form.allowedIps),
      scopeFilters: domains.length || tags.length ? { ...(domains.length ? { domains } : {}), ...(tags.length ? { tags } : {}) } : null,
      schedule,
      monthlyCallCap: cap,
      rateLimitOverride: rate,
      expiresAt,
    },
    problems,
  }
}

/**
 * Creating: restrictions left empty are left out, so a restricted signed-in key passes its own on. The values
 * are the form's (a time zone as chosen, numbers as typed): the server checks them and names the field.
 */
export function createBody(form: KeyForm): { body: CreateBody; problems: Fields } {
  const { body, problems } = bodyOf(form)
  const out: Record<string, unknown> = { mode: form.mode }
  for (const [name, value] of Object.entries(body)) if (value !== null && !(Array.isArray(value) && !value.length)) out[name] = value
  return { body: out as CreateBody, problems }
}

/** Changing: only the fields that differ from the key as loaded, so an untouched field is never re-sent. */
export function patchBody(form: KeyForm, key: ApiKey): { body: PatchBody; problems: Fields } {
  const { body, problems } = bodyOf(form)
  const before = bodyOf(formOf(key)).body
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(body)) if (JSON.stringify(value) !== JSON.stringify(before[name])) out[name] = value
  return { body: out as PatchBody, problems }
}

/** The form field a server issue path names ('allowedIps.2' → allowedIps, 'schedule.days' → days). */
function fieldOf(path: string): string {
  const [head, sub] = path.split('.')
  if (head === 'schedule') return sub === 'timezone' ? 'timezone' : sub === 'days' ? 'days' : 'start'
  if (head === 'scopeFilters') return sub === 'tags' ? 'tags' : 'domains'
  return head ?? ''
}

/** Which entry of a one-a-line list an issue is about ('allowedIps.2' → 'Line 3: '); nothing for a field of its own, whose message sits next to it. */
function where(path: string): string {
  const index = /^(?:allowedIps|scopeFilters\.(?:domains|tags))\.(\d+)$/.exec(path)?.[1]
  return index !== undefined ? `Line ${Number(index) + 1}: ` : ''
}

/** A refused save, as messages next to the fields it names; what names no field stays general. */
export function fieldErrors(error: unknown): { fields: Fields; general: unknown } {
  if (!(error instanceof ApiError) || !error.details || typeof error.details !== 'object') return { fields: {}, general: error }
  const details = error.details as {
    issues?: { path?: string; message: string }[]
    notHeld?: string[]
    allowedIps?: unknown
    scopeFilters?: unknown
    schedule?: unknown
  }
  const fields: Fields = {}
  const add = (field: string, message: string) => void (fields[field] = fields[field] ? `${fields[field]} ${message}` : message)
  if (error.code === 'validation_failed' && details.issues) {
    const rest = details.issues.filter((i) => !i.path)
    for (const issue of details.issues) if (issue.path) add(fieldOf(issue.path), `${where(issue.path)}${issue.message}`)
    return { fields, general: rest.length ? error : null }
  }
  if (error.code === 'forbidden') {
    if (details.notHeld) add('permissions', `The signed-in key does not hold ${details.notHeld.join(', ')}, so it cannot grant them.`)
    else if (details.allowedIps) add('allowedIps', error.message)
    else if (details.scopeFilters) add('domains', error.message)
    else if (details.schedule) add('start', error.message)
    if (Object.keys(fields).length) return { fields, general: null }
  }
  return { fields: {}, general: error }
}
