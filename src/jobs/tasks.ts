// The job types of the platform itself and their periodic triggers. Feature areas register theirs beside.
import type { Runtime } from '../runtime'
import type { PeriodicTask } from './periodic'

export const PRUNE_IDEMPOTENCY = 'idempotency.prune'

export const PERIODIC_TASKS: PeriodicTask[] = [{ name: 'prune-idempotency', pattern: '17 * * * *', jobType: PRUNE_IDEMPOTENCY }]

export function registerPlatformJobs(rt: Runtime) {
  rt.worker.handle(PRUNE_IDEMPOTENCY, async () => {
    const removed = await rt.idempotency.pruneExpired(rt.clock.now())
    if (removed) rt.log.info('expired idempotency records pruned', { removed })
  })
}
