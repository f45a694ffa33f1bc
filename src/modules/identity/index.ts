// Identity: users, workspaces, memberships and keys, and the authentication every authenticated route
// uses (auth.ts: the HTTP kernel's macro, given this module's key check, fed by its key store, call counter,
// rate limiter and last-use tracker). GET /me.
import type { IdempotencyDeps } from '../../http/idempotency'
import { MINUTE_MS } from '../../platform/time'
import { keyAuth, type HttpKit } from './auth'
import { rateLimitFor } from './rate-limit'
import { LIMITS_PERIODIC, limitsPruneJobs } from './limits-prune'
import { defineModule, type Platform } from '../module'
import { LastUsedTracker } from './last-used'
import { engineOf, onEngine } from '../../db/store'
import type { IdentityRepo } from './port'
import { createIdentityRepo } from './repo'
import { identityRoutes } from './routes'
import type { IdentityCtx } from './service'

// What other modules, the app and the CLI use of identity.
export { authenticate, type AuthDeps, type HttpKit } from './auth'
export type { Caller } from './caller'
export { testKeySandboxed, workspaceNotFound } from './errors'
export { generateKey, hashKey, isWellFormedKey, type KeyMode } from './keys'
export type { LastUsedTracker } from './last-used'
export { PRUNE_LIMITS } from './limits-prune'
export { hasPermission, parseGrants, PERMISSIONS, type Grant, type Permission } from './permissions'
export { DEFAULT_RATE_LIMIT } from './policy'
export type { ApiKeyRow, IdentityRepo, NewApiKey, UserRow, WorkspaceRow } from './port'
export type { LimitsRepo } from './port-limits'
export { rateLimitFor, type RateDecision, type RateLimit } from './rate-limit'
export { createLimitsRepo } from './repo-limits'
export { listedMode, ModeQuery, sandboxHides, type ModeFilter } from './sandbox'
export { DAYS, isValidTimeZone } from './schedule'
export { addMember, bootstrap, createKey, createWorkspace, listKeys, toApiKey } from './service'

/** Last-use stamps are written at most this long after the call (and at shutdown). */
const LAST_USED_FLUSH_MS = MINUTE_MS

/** `idempotency` completes the HTTP kit this module hands every other module's routes. */
export function createIdentityModule(platform: Platform, idempotency: IdempotencyDeps['idempotency']) {
  const { instanceId, config, store, clock, log } = platform
  const repo: IdentityRepo = createIdentityRepo(engineOf(store))
  const ctx: IdentityCtx = { config, clock, log, identity: repo }
  const lastUsed = new LastUsedTracker(repo)
  /** Per-key request rates: in memory on SQLite (a restart opens a fresh window), shared on PostgreSQL. */
  const rateLimiter = rateLimitFor(store, 'api')
  const auth = keyAuth({ instanceId, config, clock, identity: repo, rateLimiter, lastUsed }, { clock, idempotency })
  const http: HttpKit = { instanceId, auth }
  let timer: ReturnType<typeof setInterval> | undefined
  const flush = () => lastUsed.flush().catch((err) => log.error('last-used flush failed', { error: (err as Error).message }))
  return defineModule({
    name: 'identity',
    ctx,
    repo,
    lastUsed,
    rateLimiter,
    http,
    routes: identityRoutes(ctx, http),
    periodic: onEngine(
      store,
      () => [],
      () => LIMITS_PERIODIC,
    ),
    jobs: limitsPruneJobs(store, clock, log),
    start() {
      timer = setInterval(flush, LAST_USED_FLUSH_MS)
    },
    async close() {
      clearInterval(timer)
      await lastUsed.flush()
    },
  })
}

export type IdentityModule = ReturnType<typeof createIdentityModule>
