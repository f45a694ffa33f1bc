// The shared limits' rows (repo-limits.ts) live a few minutes: pruned every ten minutes by the node holding
// the sweep lock, so the tables hold little beyond the windows and spent captchas still in force. Only
// PostgreSQL has rows to prune; SQLite keeps these limits in memory.
import { engineOf, onEngine, type Store } from '../../db/store'
import type { JobSpec } from '../module'
import type { PeriodicTask } from '../../jobs/periodic'
import type { Clock } from '../../platform/clock'
import type { Logger } from '../../platform/log'
import { createLimitsRepo } from './repo-limits'

export const PRUNE_LIMITS = 'limits.prune'

export const LIMITS_PERIODIC: PeriodicTask[] = [{ name: 'prune-limits', pattern: '*/10 * * * *', jobType: PRUNE_LIMITS }]

export function limitsPruneJobs(store: Store, clock: Clock, log: Logger): JobSpec[] {
  return onEngine<JobSpec[]>(
    store,
    () => [],
    (s) => {
      const repo = createLimitsRepo(engineOf(s))
      return [
        {
          type: PRUNE_LIMITS,
          run: async () => {
            const removed = await repo.prune(clock.now())
            if (removed) log.info('expired limit windows and spent captchas pruned', { removed })
          },
        },
      ]
    },
  )
}
