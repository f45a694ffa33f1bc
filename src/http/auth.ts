// Key authentication and the permission macro every authenticated route declares. All checks live here,
// in the contract's order: unknown/revoked/expired -> 401; paused -> 403 key_paused; client address
// outside allowedIps -> 403 ip_not_allowed; outside the schedule -> 403 outside_schedule; workspace
// membership -> 403; monthly cap -> 429 monthly_cap_exceeded; rate limit -> 429 rate_limited;
// permission -> 403 forbidden.
import { Elysia } from 'elysia'
import { startOfNextUtcMonth, utcMonth } from '../platform/clock'
import { ipAllowed } from '../modules/api-keys/ip-allow'
import { DEFAULT_RATE_LIMIT } from '../modules/api-keys/service'
import { withinSchedule } from '../modules/api-keys/schedule'
import { hashKey, isWellFormedKey, type KeyMode } from '../modules/identity/keys'
import { hasPermission, type Permission } from '../modules/identity/permissions'
import type { ApiKeyRow, UserRow, WorkspaceRow } from '../modules/identity/repo'
import type { Runtime } from '../runtime'
import { AppError } from '../platform/errors'
import { clientIp } from './request-context'

export interface Caller {
  key: ApiKeyRow
  user: UserRow
  workspace: WorkspaceRow
  role: 'owner' | 'member'
  mode: KeyMode
  ip: string | null
}

// RFC 7235 credentials: the scheme (case-insensitive), then the token. Only HTTP's own whitespace (SP and HTAB,
// RFC 7230 OWS) may separate them or surround the value. JavaScript's \s would also take U+00A0, vertical tab,
// form feed and the Unicode spaces, letting a credential with a stray character pass as if it were exact.
const BEARER = /^[ \t]*Bearer[ \t]+([^ \t]+)[ \t]*$/i

/** The token of an `Authorization: Bearer <token>` value, or null when the value is not exactly that. */
export function bearerCredential(header: string): string | null {
  return BEARER.exec(header)?.[1] ?? null
}

const unauthorized = (message: string) => new AppError('unauthorized', message, undefined, { 'WWW-Authenticate': 'Bearer realm="lnk"' })

export async function authenticate(rt: Runtime, request: Request, headers: Record<string, unknown> = {}): Promise<Caller> {
  const header = request.headers.get('authorization')
  if (!header) throw unauthorized('Missing credential: send Authorization: Bearer <API key>')
  const secret = bearerCredential(header)
  if (secret === null) throw unauthorized('Authorization must use the Bearer scheme: Authorization: Bearer <API key>')
  if (!isWellFormedKey(secret)) throw unauthorized('Invalid API key: keys look like lnk_live_… or lnk_test_… followed by 32 letters and digits')
  const now = rt.clock.now()
  const key = await rt.identity.findKeyByHash(hashKey(secret), now)
  if (!key) throw unauthorized('Invalid API key')
  if (key.revokedAt != null) throw unauthorized('This API key was revoked; create a new one')
  if (key.expiresAt != null && key.expiresAt <= now) throw unauthorized('This API key has expired; create a new one')
  if (key.pausedAt != null) throw new AppError('key_paused', `This API key is paused${key.pausedReason ? ` (${key.pausedReason})` : ''}; resume it to use it again`)
  const ip = clientIp(request, rt.config)
  if (!ipAllowed(ip, key.allowedIps)) {
    throw new AppError('ip_not_allowed', `This API key may not be used from ${ip ?? 'an unknown address'}; call from an address in its allowedIps or change the list`, { ip })
  }
  if (key.schedule && !withinSchedule(key.schedule, now)) {
    const s = key.schedule
    const hhmm = (m: number) => `${String(Math.floor(m / 60) % 24).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`
    throw new AppError('outside_schedule', `This API key works only ${hhmm(s.startMinute)}-${hhmm(s.endMinute)} (${s.timezone}) on days ${s.days.join(',')} (0 = Sunday)`, { schedule: s })
  }

  const user = await rt.identity.findUser(key.userId)
  if (!user) throw unauthorized('Invalid API key')
  const ref = request.headers.get('x-workspace-id')?.trim() || key.workspaceId
  const membership = await rt.identity.findMemberWorkspace(user.id, ref)
  if (!membership) {
    throw new AppError('forbidden', ref === key.workspaceId ? "This key's user is no longer a member of its workspace" : `You are not a member of workspace "${ref.slice(0, 64)}"`)
  }

  const calls = await rt.identity.countCall(key.id, utcMonth(now), key.monthlyCallCap)
  if (calls === undefined) {
    const retryAfter = Math.max(1, Math.ceil((startOfNextUtcMonth(now) - now) / 1000))
    throw new AppError('monthly_cap_exceeded', `This key has used its ${key.monthlyCallCap} calls for this month; it works again when the month turns (UTC)`, { monthlyCallCap: key.monthlyCallCap }, { 'Retry-After': String(retryAfter) })
  }

  const rate = rt.rateLimiter.take(key.id, key.rateLimitOverride ?? DEFAULT_RATE_LIMIT, now)
  headers['ratelimit-limit'] = String(rate.limit)
  headers['ratelimit-remaining'] = String(rate.remaining)
  headers['ratelimit-reset'] = String(rate.reset)
  if (!rate.allowed) {
    throw new AppError('rate_limited', `Too many requests: this key may make ${rate.limit} a minute; retry in ${rate.retryAfter} s`, { limit: rate.limit }, { 'Retry-After': String(rate.retryAfter) })
  }

  await rt.lastUsed.touch(key.id, now, ip)
  return { key, user, workspace: membership.workspace, role: membership.role, mode: key.mode, ip }
}

const callers = new WeakMap<Request, Caller>()

/**
 * `permission: 'links:read'` (or 'authenticated' where any valid key will do) on a route authenticates the
 * caller, enforces every key restriction and the permission, and hands the route `caller`. It also marks
 * the operation as bearer-secured in OpenAPI. The checks run in the transform stage, before the body and
 * query are validated, so a request without a valid key learns nothing but 401.
 */
export function authPlugin(rt: Runtime) {
  return new Elysia({ name: 'lnk.auth', seed: rt.instanceId }).macro({
    permission: (needed: Permission | 'authenticated') => ({
      detail: { security: [{ bearer: [] }], 'x-permission': needed } as Record<string, unknown>,
      async transform({ request, set }) {
        const caller = await authenticate(rt, request, set.headers)
        if (needed !== 'authenticated' && !hasPermission(caller.key.permissions, needed)) {
          throw new AppError('forbidden', `This key lacks the ${needed} permission`, { required: needed })
        }
        callers.set(request, caller)
      },
      resolve({ request }) {
        const caller = callers.get(request)
        if (!caller) throw new AppError('unauthorized', 'Missing credential')
        return { caller }
      },
    }),
  })
}
