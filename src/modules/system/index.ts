// The system area (the service's own, no feature's): health, readiness and metrics, the OpenAPI document and
// its page, stored Idempotency-Key answers, server secrets, and the pruning of what it keeps (idempotency
// records, dispatched outbox events). Named apart from src/platform/ (the pure pieces every layer uses) and
// the Platform every module receives.
import { engineOf } from '../../db/store'
import { pruneDispatched } from '../../events/outbox'
import type { PeriodicTask } from '../../jobs/periodic'
import { DAY_MS } from '../../platform/time'
import { Elysia } from 'elysia'
import { defineModule, type Platform } from '../module'
import { createIdempotencyRepo } from './repo-idempotency'
import { openapiDocs } from './openapi'
import { opsRoutes } from './ops-routes'

// What other modules, the app and the CLI use of platform.
export { SERVER_SECRETS } from './port-settings'
export { preloadSettings } from './repo-settings'
export { createSettingsRepoSqlite } from './repo-settings-sqlite'

export const PRUNE_IDEMPOTENCY = 'idempotency.prune'
export const PRUNE_OUTBOX = 'outbox.prune'
/** Dispatched events stay this long for inspection, then go. */
export const OUTBOX_RETENTION_MS = 3 * DAY_MS

export const SYSTEM_PERIODIC: PeriodicTask[] = [
  { name: 'prune-idempotency', pattern: '17 * * * *', jobType: PRUNE_IDEMPOTENCY },
  { name: 'prune-outbox', pattern: '47 * * * *', jobType: PRUNE_OUTBOX },
]

export function createSystemModule(platform: Platform) {
  const { store, clock, log, config } = platform
  const idempotency = createIdempotencyRepo(engineOf(store))
  return defineModule({
    name: 'system',
    idempotency,
    root: true,
    routes: new Elysia({ name: 'lnk.platform', seed: platform.instanceId }).use(openapiDocs(config.baseUrl)).use(opsRoutes(platform)),
    periodic: SYSTEM_PERIODIC,
    jobs: [
      {
        type: PRUNE_IDEMPOTENCY,
        run: async () => {
          const removed = await idempotency.pruneExpired(clock.now())
          if (removed) log.info('expired idempotency records pruned', { removed })
        },
      },
      {
        type: PRUNE_OUTBOX,
        run: async () => {
          const before = clock.now() - OUTBOX_RETENTION_MS
          const removed = await pruneDispatched(engineOf(store), before)
          if (removed) log.info('dispatched outbox events pruned', { removed })
        },
      },
    ],
  })
}
