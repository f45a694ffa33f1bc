// API key management through the API (contract section 3). A key can never create or widen a key beyond
// itself: not in permissions, and a restricted key passes its restrictions on (address ranges, scope,
// schedule, caps, expiry) rather than creating an unrestricted one. A test key only touches test keys.
import type { Deps } from '../../context'
import {
  type ApiKeyRow,
  type Caller,
  DAYS,
  DEFAULT_RATE_LIMIT,
  generateKey,
  type Grant,
  type IdentityRepo,
  isValidTimeZone,
  type KeyMode,
  type LastUsedTracker,
  listedMode,
  type ModeFilter,
  type NewApiKey,
  toApiKey,
} from '../identity'
import { AppError, type ValidationIssue } from '../../platform/errors'
import {
  apiKeyNotFound,
  cannotGrant,
  cannotManageWider,
  fasterRate,
  higherCap,
  invalidKeySettings,
  keyIsRevoked,
  otherSchedule,
  outlivesCaller,
  testKeyCreatesLiveKey,
  widerAddresses,
  widerScope,
} from './errors'
import { newId } from '../../platform/random'
import { parseRange } from '../../platform/ip'
import type { Schedule } from '../identity/model'
import { HOUR_MS } from '../../platform/time'
import { isFolderId } from '../folders/model'

export interface ApiKeysCtx extends Deps {
  identity: IdentityRepo
  /** Last-use stamps not yet written (at most a minute old), so views are current. */
  lastUsed?: Pick<LastUsedTracker, 'peek'>
}

export interface KeySettings {
  name?: string
  permissions?: Grant[]
  allowedIps?: string[]
  scopeFilters?: { domains?: string[]; tags?: string[]; folders?: string[] } | null
  /** Days as sent: checked here, against DAYS. */
  schedule?: (Omit<Schedule, 'days'> & { days: unknown }) | null
  monthlyCallCap?: number | null
  rateLimitOverride?: number | null
  expiresAt?: string | null
}

/** Checks the shape of restriction fields; answers them normalised. */
function validate(ctx: ApiKeysCtx, input: KeySettings): Partial<NewApiKey> {
  const issues: ValidationIssue[] = []
  const out: Partial<NewApiKey> = {}
  if (input.name !== undefined) {
    const name = input.name.trim()
    if (!name) issues.push({ path: 'name', message: 'must not be blank' })
    out.name = name
  }
  if (input.permissions !== undefined) out.permissions = [...new Set(input.permissions)]
  if (input.allowedIps !== undefined) {
    input.allowedIps.forEach((entry, i) => {
      if (!parseRange(entry)) issues.push({ path: `allowedIps.${i}`, message: `"${entry}" is not an IPv4/IPv6 address or CIDR` })
    })
    out.allowedIps = [...new Set(input.allowedIps.map((e) => e.trim()))]
  }
  if (input.scopeFilters !== undefined) {
    const f = input.scopeFilters
    if (f && !f.domains?.length && !f.tags?.length && !f.folders?.length)
      issues.push({ path: 'scopeFilters', message: 'name at least one domain, tag or folder, or send null for no scope' })
    f?.folders?.forEach((id, i) => {
      if (!isFolderId(id)) issues.push({ path: `scopeFilters.folders.${i}`, message: `"${id}" is not a folder id (fld_…; GET /folders lists them)` })
    })
    out.scopeFilters = f
      ? {
          ...(f.domains?.length ? { domains: [...new Set(f.domains.map((d) => d.toLowerCase()))] } : {}),
          ...(f.tags?.length ? { tags: [...new Set(f.tags)] } : {}),
          ...(f.folders?.length ? { folders: [...new Set(f.folders)] } : {}),
        }
      : null
  }
  if (input.schedule !== undefined) {
    const s = input.schedule
    if (s) {
      if (!isValidTimeZone(s.timezone)) issues.push({ path: 'schedule.timezone', message: `"${s.timezone}" is not an IANA time zone (e.g. Europe/Berlin)` })
      // Days reach here unchecked (the route's validator would report a bad one only as a bad schedule), so
      // each is named with the values the document lists.
      const days: unknown[] = Array.isArray(s.days) ? s.days : []
      if (!days.length) issues.push({ path: 'schedule.days', message: 'name at least one day (0 = Sunday … 6 = Saturday)' })
      days.forEach((d, i) => {
        if (!(DAYS as readonly unknown[]).includes(d)) issues.push({ path: `schedule.days.${i}`, message: `must be one of: ${DAYS.join(', ')}` })
      })
      if (s.startMinute === s.endMinute)
        issues.push({ path: 'schedule', message: 'startMinute and endMinute must differ (a window wrapping midnight has start > end)' })
      out.schedule = { timezone: s.timezone, days: [...new Set(days as number[])].sort(), startMinute: s.startMinute, endMinute: s.endMinute }
    } else out.schedule = null
  }
  if (input.monthlyCallCap !== undefined) out.monthlyCallCap = input.monthlyCallCap
  if (input.rateLimitOverride !== undefined) out.rateLimitOverride = input.rateLimitOverride
  if (input.expiresAt !== undefined) {
    if (input.expiresAt === null) out.expiresAt = null
    else {
      const ms = Date.parse(input.expiresAt)
      if (!Number.isFinite(ms) || ms <= ctx.clock.now()) issues.push({ path: 'expiresAt', message: 'must be a timestamp in the future' })
      out.expiresAt = ms
    }
  }
  if (issues.length) throw invalidKeySettings(issues)
  return out
}

function rangeWithin(inner: string, outers: readonly string[]) {
  const r = parseRange(inner)
  return (
    r !== null &&
    outers.some((o) => {
      const p = parseRange(o)
      return p !== null && p.v6 === r.v6 && (r.mask & p.mask) === p.mask && (r.base & p.mask) === p.base
    })
  )
}

/**
 * Refuses settings wider than the calling key's own; fills what a restricted caller left out with its own
 * restriction, so a narrow key can only make narrow keys.
 */
function withinCaller(caller: Caller | null, s: Partial<NewApiKey>, creating: boolean): Partial<NewApiKey> {
  // The operator (admin CLI) is bound by nothing.
  if (!caller) return s
  const me = caller.key
  const out = { ...s }
  if (out.permissions && !me.permissions.includes('*')) {
    const wider = out.permissions.filter((p) => p === '*' || !me.permissions.includes(p))
    if (wider.length) throw cannotGrant(wider)
  }
  if (me.allowedIps.length) {
    if (out.allowedIps === undefined && creating) out.allowedIps = me.allowedIps
    else if (out.allowedIps !== undefined && (!out.allowedIps.length || out.allowedIps.some((e) => !rangeWithin(e, me.allowedIps)))) {
      throw widerAddresses(me.allowedIps)
    }
  }
  const scope = me.scopeFilters
  if (scope) {
    if (out.scopeFilters === undefined && creating) out.scopeFilters = scope
    else if (out.scopeFilters !== undefined) {
      const f = out.scopeFilters
      const ok =
        f !== null &&
        (!scope.domains || (f.domains?.length && f.domains.every((d) => scope.domains!.includes(d)))) &&
        (!scope.tags || (f.tags?.length && f.tags.every((t) => scope.tags!.includes(t)))) &&
        (!scope.folders || (f.folders?.length && f.folders.every((id) => scope.folders!.includes(id))))
      if (!ok) throw widerScope(scope)
    }
  }
  if (me.schedule) {
    if (out.schedule === undefined && creating) out.schedule = me.schedule
    else if (out.schedule !== undefined && JSON.stringify(out.schedule) !== JSON.stringify(me.schedule)) {
      throw otherSchedule(me.schedule)
    }
  }
  if (me.monthlyCallCap !== null) {
    if (out.monthlyCallCap === undefined && creating) out.monthlyCallCap = me.monthlyCallCap
    else if (out.monthlyCallCap !== undefined && (out.monthlyCallCap === null || out.monthlyCallCap > me.monthlyCallCap)) {
      throw higherCap(me.monthlyCallCap)
    }
  }
  // null means the default rate, which is faster than a caller limited below it; such a caller passes its
  // limit on when it is left out.
  const myRate = me.rateLimitOverride ?? DEFAULT_RATE_LIMIT
  if (out.rateLimitOverride === undefined && creating && myRate < DEFAULT_RATE_LIMIT) out.rateLimitOverride = myRate
  else if (out.rateLimitOverride !== undefined && (out.rateLimitOverride ?? DEFAULT_RATE_LIMIT) > myRate) {
    throw fasterRate(myRate)
  }
  if (me.expiresAt !== null) {
    if (out.expiresAt === undefined && creating) out.expiresAt = me.expiresAt
    else if (out.expiresAt !== undefined && (out.expiresAt === null || out.expiresAt > me.expiresAt)) {
      throw outlivesCaller(me.expiresAt)
    }
  }
  return out
}

function view(ctx: ApiKeysCtx, row: ApiKeyRow) {
  const pending = ctx.lastUsed?.peek(row.id)
  return toApiKey(pending ? { ...row, lastUsedAt: pending.at, lastUsedIp: pending.ip } : row, ctx.clock.now())
}

/**
 * A key of the caller's workspace (404 for others). A test key works in the sandbox: a live key does not
 * exist for it, as live records of every area do not. `null` is the operator (admin CLI), who sees every key.
 */
async function visible(ctx: ApiKeysCtx, caller: Caller | null, id: string): Promise<ApiKeyRow> {
  const key = await ctx.identity.findKey(id)
  if (!key || (caller && (key.workspaceId !== caller.workspace.id || (caller.mode === 'test' && key.mode !== 'test')))) throw apiKeyNotFound(id)
  return key
}

/** A key the caller may manage: one it can see, and no wider than itself. */
async function manageable(ctx: ApiKeysCtx, caller: Caller | null, id: string): Promise<ApiKeyRow> {
  const key = await visible(ctx, caller, id)
  // Nor may a key take over a key wider than itself (rotating would hand it that key's new secret): the
  // target must be one the caller could have created.
  if (caller) {
    try {
      withinCaller(caller, settingsOf(key), false)
    } catch (err) {
      if (err instanceof AppError && err.code === 'forbidden') {
        throw cannotManageWider(id, err)
      }
      throw err
    }
  }
  return key
}

const settingsOf = (k: ApiKeyRow): Partial<NewApiKey> => ({
  permissions: k.permissions,
  allowedIps: k.allowedIps,
  scopeFilters: k.scopeFilters,
  schedule: k.schedule,
  monthlyCallCap: k.monthlyCallCap,
  rateLimitOverride: k.rateLimitOverride,
  expiresAt: k.expiresAt,
})

/** The workspace's keys of the mode asked for (default: the caller's own; a test key lists test keys only). */
export async function listApiKeys(ctx: ApiKeysCtx, caller: Caller, mode?: ModeFilter) {
  return (await ctx.identity.listKeys(caller.workspace.id, listedMode(caller, mode, 'API keys'))).map((k) => view(ctx, k))
}

export async function getApiKey(ctx: ApiKeysCtx, caller: Caller, id: string) {
  return view(ctx, await visible(ctx, caller, id))
}

export async function createApiKey(ctx: ApiKeysCtx, caller: Caller, input: KeySettings & { name: string; mode?: KeyMode }) {
  const mode = input.mode ?? caller.mode
  if (caller.mode === 'test' && mode !== 'test') throw testKeyCreatesLiveKey()
  const settings = withinCaller(caller, { permissions: caller.key.permissions as Grant[], ...validate(ctx, input) }, true)
  const secret = generateKey(mode)
  const now = ctx.clock.now()
  const row = await ctx.identity.insertKey({
    id: newId('key'),
    workspaceId: caller.workspace.id,
    userId: caller.user.id,
    name: settings.name ?? input.name.trim(),
    keyHash: secret.hash,
    keyPrefix: secret.prefix,
    mode,
    permissions: settings.permissions ?? [],
    allowedIps: settings.allowedIps ?? [],
    scopeFilters: settings.scopeFilters ?? null,
    schedule: settings.schedule ?? null,
    monthlyCallCap: settings.monthlyCallCap ?? null,
    rateLimitOverride: settings.rateLimitOverride ?? null,
    expiresAt: settings.expiresAt ?? null,
    createdAt: now,
  })
  return { ...view(ctx, row), key: secret.key }
}

export async function updateApiKey(ctx: ApiKeysCtx, caller: Caller | null, id: string, input: KeySettings) {
  const key = await manageable(ctx, caller, id)
  if (key.revokedAt !== null) throw keyIsRevoked('revoked keys cannot be changed')
  const patch = withinCaller(caller, validate(ctx, input), false)
  if (!Object.keys(patch).length) return view(ctx, key)
  return view(ctx, (await ctx.identity.updateKey(id, patch))!)
}

export async function pauseApiKey(ctx: ApiKeysCtx, caller: Caller | null, id: string, reason?: string) {
  const key = await manageable(ctx, caller, id)
  if (key.revokedAt !== null) throw keyIsRevoked('it cannot be paused')
  if (key.pausedAt !== null) return view(ctx, key)
  return view(ctx, (await ctx.identity.updateKey(id, { pausedAt: ctx.clock.now(), pausedReason: reason?.trim() || null }))!)
}

export async function resumeApiKey(ctx: ApiKeysCtx, caller: Caller | null, id: string) {
  const key = await manageable(ctx, caller, id)
  if (key.revokedAt !== null) throw keyIsRevoked('it cannot be resumed')
  if (key.pausedAt === null) return view(ctx, key)
  return view(ctx, (await ctx.identity.updateKey(id, { pausedAt: null, pausedReason: null }))!)
}

export async function revokeApiKey(ctx: ApiKeysCtx, caller: Caller | null, id: string, reason?: string) {
  const key = await manageable(ctx, caller, id)
  if (key.revokedAt !== null) return view(ctx, key)
  return view(
    ctx,
    (await ctx.identity.updateKey(id, {
      revokedAt: ctx.clock.now(),
      revokedReason: reason?.trim() || null,
      previousKeyHash: null,
      previousKeyExpiresAt: null,
    }))!,
  )
}

/**
 * A new secret for the key. The old one keeps working for `graceHours` (default 24; 0 stops it at once),
 * during which the key is `rotating`. Rotating again during a grace ends the older secret's grace.
 */
export async function rotateApiKey(ctx: ApiKeysCtx, caller: Caller | null, id: string, graceHours = 24) {
  const key = await manageable(ctx, caller, id)
  if (key.revokedAt !== null) throw keyIsRevoked('create a new key instead')
  const now = ctx.clock.now()
  const secret = generateKey(key.mode)
  const row = await ctx.identity.updateKey(id, {
    keyHash: secret.hash,
    keyPrefix: secret.prefix,
    previousKeyHash: graceHours > 0 ? key.keyHash : null,
    previousKeyExpiresAt: graceHours > 0 ? now + graceHours * HOUR_MS : null,
    rotatedAt: now,
  })
  return { ...view(ctx, row!), key: secret.key }
}
