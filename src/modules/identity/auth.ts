// Key authentication, in the contract's order: unknown/revoked/expired -> 401; paused -> 403 key_paused;
// client address outside allowedIps -> 403 ip_not_allowed; outside the schedule -> 403 outside_schedule;
// workspace membership -> 403; monthly cap -> 429 monthly_cap_exceeded; rate limit -> 429 rate_limited;
// permission -> 403 forbidden. The rules themselves are policy.ts; this file gathers the facts they need and
// hands the HTTP kernel's permission macro (http/auth.ts) the function that applies them.
import { authPlugin, bearerCredential } from '../../http/auth'
import type { IdempotencyDeps } from '../../http/idempotency'
import { clientIp } from '../../http/request-context'
import { type Clock, utcMonth } from '../../platform/clock'
import type { Config } from '../../platform/config'
import type { Caller } from './caller'
import { malformedKey, missingCredential, notAMember, notBearer, permissionMissing, unknownKey } from './errors'
import { hashKey, isWellFormedKey } from './keys'
import type { LastUsedTracker } from './last-used'
import { hasPermission, type Permission } from './permissions'
import { accessRefusal, monthlyCapRefusal, rateLimitOf, rateRefusal } from './policy'
import type { IdentityRepo } from './port'
import type { RateLimit } from './rate-limit'

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

/** The permission macro, authenticating API keys: the `auth` every module's routes use. */
export function keyAuth(deps: AuthDeps) {
  return authPlugin<Caller, Permission>({
    instanceId: deps.instanceId,
    async authenticate(request, needed, headers) {
      const caller = await authenticate(deps, request, headers)
      if (needed !== 'authenticated' && !hasPermission(caller.key.permissions, needed)) throw permissionMissing(needed)
      return caller
    },
    unauthenticated: missingCredential,
  })
}

/** What routes need from the HTTP layer: the authentication macro and Idempotency-Key storage. */
export interface HttpKit {
  instanceId: string
  auth: ReturnType<typeof keyAuth>
  idempotency: IdempotencyDeps
}
