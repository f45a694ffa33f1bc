// Analytics: overview, timeline and top links from the rollups the click flush keeps; raw-click retention
// and the one-time rollup of clicks recorded before rollups existed.
import type { PeriodicTask } from '../../jobs/periodic'
import { DAY_MS } from '../../platform/time'
import { defineModule, type HttpKit, type Platform } from '../module'
import { backfillRollups, pruneRawClicks } from './maintenance'
import { createAnalyticsRepo } from './repo'
import { analyticsRoutes } from './routes'
import type { AnalyticsCtx } from './service'

export const PRUNE_CLICKS = 'clicks.prune'
export const ANALYTICS_PERIODIC: PeriodicTask[] = [{ name: 'prune-clicks', pattern: '29 * * * *', jobType: PRUNE_CLICKS }]

export function createAnalyticsModule(platform: Platform, http: HttpKit) {
  const { config, db, clock, log } = platform
  const rolledUp = backfillRollups(db.db, clock.now())
  if (rolledUp) log.info('clicks recorded before rollups existed were rolled up', { clicks: rolledUp })
  const ctx: AnalyticsCtx = { config, clock, log, analytics: createAnalyticsRepo(db.db) }
  return defineModule({
    name: 'analytics',
    ctx,
    routes: analyticsRoutes(ctx, http),
    periodic: ANALYTICS_PERIODIC,
    jobs: [
      {
        type: PRUNE_CLICKS,
        run: async () => {
          // Rollups keep every figure; only raw rows (partial hours, the stats of a single click) go.
          const removed = pruneRawClicks(db.db, clock.now() - config.clickRetentionDays * DAY_MS)
          if (removed) log.info('raw clicks past retention pruned', { removed, retentionDays: config.clickRetentionDays })
        },
      },
    ],
  })
}
