// Key authentication, in the contract's order: unknown/revoked/expired -> 401; paused -> 403 key_paused;
// client address outside allowedIps -> 403 ip_not_allowed; outside the schedule -> 403 outside_schedule;
// workspace membership -> 403; monthly cap -> 429 monthly_cap_exceeded; rate limit -> 429 rate_limited;
// permission -> 403 forbidden. The rules themselves are policy.ts; this file gathers the facts they need and
// hands the HTTP kernel's permission macro (http/auth.ts) the function that applies them.
import { authPlugin, bearerCredential, WORKSPACE_HEADER } from '../../http/auth'
import type { IdempotencyDeps } from '../../http/idempotency'
import { clientIp } from '../../http/request-context'
import { type Clock, utcMonth } from '../../platform/clock'
import type { Config } from '../../platform/config'
import type { Caller } from './caller'
import { badWorkspaceHeader, malformedKey, missingCredential, notAMember, notBearer, permissionMissing, unknownKey } from './errors'
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

/**
 * The workspace a request acts in: X-Workspace-Id when sent, the key's own workspace without it. A header
 * sent empty is refused rather than read as absent: the document says it holds at least one character, and a
 * client that meant another workspace but sent nothing must not silently act in the key's own.
 */
export function workspaceRef(request: Request, ownWorkspaceId: string): string {
  // Fetch's Headers strip the value's surrounding whitespace, so a blank header reads as ''.
  const header = request.headers.get(WORKSPACE_HEADER.name)
  if (header === null) return ownWorkspaceId
  if (header.length < WORKSPACE_HEADER.minLength)
    throw badWorkspaceHeader("must not be empty: send a workspace id or slug, or leave the header out to act in the key's own workspace")
  if (header.length > WORKSPACE_HEADER.maxLength) throw badWorkspaceHeader(`must be at most ${WORKSPACE_HEADER.maxLength} characters: a workspace id or slug`)
  return header
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
  const ref = workspaceRef(request, key.workspaceId)
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

/**
 * The permission macro, authenticating API keys, and the idempotent macro over `idempotency`: the `auth`
 * every module's routes use.
 */
export function keyAuth(deps: AuthDeps, idempotency: IdempotencyDeps) {
  return authPlugin<Caller, Permission>(idempotency, {
    instanceId: deps.instanceId,
    async authenticate(request, needed, headers) {
      const caller = await authenticate(deps, request, headers)
      if (needed !== 'authenticated' && !hasPermission(caller.key.permissions, needed)) throw permissionMissing(needed)
      return caller
    },
    unauthenticated: missingCredential,
  })
}

/** What routes need from the HTTP layer: the `permission` and `idempotent` macros. */
export interface HttpKit {
  instanceId: string
  auth: ReturnType<typeof keyAuth>
}
