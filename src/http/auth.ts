// Key authentication and the permission macro every authenticated route declares, in the contract's order:
// unknown/revoked/expired -> 401; paused -> 403 key_paused; client address outside allowedIps -> 403
// ip_not_allowed; outside the schedule -> 403 outside_schedule; workspace membership -> 403; monthly cap ->
// 429 monthly_cap_exceeded; rate limit -> 429 rate_limited; permission -> 403 forbidden. The rules
// themselves are api-keys/policy.ts; this file gathers the facts they need.
import { Elysia } from 'elysia'
import { malformedKey, missingCredential, notAMember, notBearer, permissionMissing, unknownKey } from '../modules/api-keys/errors'
import { accessRefusal, monthlyCapRefusal, rateLimitOf, rateRefusal } from '../modules/api-keys/policy'
import type { RateLimit } from '../modules/api-keys/rate-limit'
import type { Caller } from '../modules/identity/caller'
import { hashKey, isWellFormedKey } from '../modules/identity/keys'
import type { LastUsedTracker } from '../modules/identity/last-used'
import { hasPermission, type Permission } from '../modules/identity/permissions'
import type { IdentityRepo } from '../modules/identity/port'
import type { Clock } from '../platform/clock'
import { utcMonth } from '../platform/clock'
import type { Config } from '../platform/config'
import { clientIp } from './request-context'

/** What authentication reads: the key store, the trackers of calls and rates, and the clock. */
export interface AuthDeps {
  instanceId: string
  config: Config
  clock: Clock
  identity: Pick<IdentityRepo, 'findKeyByHash' | 'findUser' | 'findMemberWorkspace' | 'countCall'>
  /** In memory on SQLite; on PostgreSQL a database round trip, shared by every node. */
  rateLimiter: RateLimit
  lastUsed: LastUsedTracker
}

// RFC 7235 credentials: the scheme (case-insensitive), then the token. Only HTTP's own whitespace (SP and HTAB,
// RFC 7230 OWS) may separate them or surround the value. JavaScript's \s would also take U+00A0, vertical tab,
// form feed and the Unicode spaces, letting a credential with a stray character pass as if it were exact.
const BEARER = /^[ \t]*Bearer[ \t]+([^ \t]+)[ \t]*$/i

/** The token of an `Authorization: Bearer <token>` value, or null when the value is not exactly that. */
export function bearerCredential(header: string): string | null {
  return BEARER.exec(header)?.[1] ?? null
}

export async function authenticate(deps: AuthDeps, request: Request, headers: Record<string, unknown> = {}): Promise<Caller> {
  const header = request.headers.get('authorization')
  if (!header) throw missingCredential()
  const secret = bearerCredential(header)
  if (secret === null) throw notBearer()
  if (!isWellFormedKey(secret)) throw malformedKey()
  const now = deps.clock.now()
  const key = await deps.identity.findKeyByHash(hashKey(secret), now)
  if (!key) throw unknownKey()
  const ip = clientIp(request, deps.config)
  const refused = accessRefusal(key, now, ip)
  if (refused) throw refused

  const user = await deps.identity.findUser(key.userId)
  if (!user) throw unknownKey()
  const ref = request.headers.get('x-workspace-id')?.trim() || key.workspaceId
  const membership = await deps.identity.findMemberWorkspace(user.id, ref)
  if (!membership) {
    throw notAMember(ref, ref === key.workspaceId)
  }

  if ((await deps.identity.countCall(key.id, utcMonth(now), key.monthlyCallCap)) === undefined) throw monthlyCapRefusal(key, now)

  const rate = await deps.rateLimiter.take(key.id, rateLimitOf(key), now)
  headers['ratelimit-limit'] = String(rate.limit)
  headers['ratelimit-remaining'] = String(rate.remaining)
  headers['ratelimit-reset'] = String(rate.reset)
  const overRate = rateRefusal(rate)
  if (overRate) throw overRate

  await deps.lastUsed.touch(key.id, now, ip)
  return { key, user, workspace: membership.workspace, role: membership.role, mode: key.mode, ip }
}

const callers = new WeakMap<Request, Caller>()

/**
 * `permission: 'links:read'` (or 'authenticated' where any valid key will do) on a route authenticates the
 * caller, enforces every key restriction and the permission, and hands the route `caller`. It also marks
 * the operation as bearer-secured in OpenAPI. The checks run in the transform stage, before the body and
 * query are validated, so a request without a valid key learns nothing but 401.
 */
export function authPlugin(deps: AuthDeps) {
  return new Elysia({ name: 'lnk.auth', seed: deps.instanceId }).macro({
    permission: (needed: Permission | 'authenticated') => ({
      detail: { security: [{ bearer: [] }], 'x-permission': needed } as Record<string, unknown>,
      async transform({ request, set }) {
        const caller = await authenticate(deps, request, set.headers)
        if (needed !== 'authenticated' && !hasPermission(caller.key.permissions, needed)) {
          throw permissionMissing(needed)
        }
        callers.set(request, caller)
      },
      resolve({ request }) {
        const caller = callers.get(request)
        if (!caller) throw missingCredential()
        return { caller }
      },
    }),
  })
}
