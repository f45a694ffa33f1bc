// Analytics: overview, timeline and top links from the rollups the click flush keeps; raw-click retention,
// the monthly sums of link rollups, and the one-time rollup of clicks recorded before rollups existed.
import type { PeriodicTask } from '../../jobs/periodic'
import { DAY_MS } from '../../platform/time'
import { defineModule, type HttpKit, type Platform } from '../module'
import { backfillRollups, markMinuteRollups, pruneRawClicks, pruneSecondRollups, rollMonths } from './maintenance'
import { createAnalyticsRepo } from './repo'
import { analyticsRoutes } from './routes'
import type { AnalyticsCtx } from './service'

export const PRUNE_CLICKS = 'clicks.prune'
export const ROLL_MONTHS = 'analytics.roll-months'
export const ANALYTICS_PERIODIC: PeriodicTask[] = [
  { name: 'prune-clicks', pattern: '29 * * * *', jobType: PRUNE_CLICKS },
  { name: 'roll-months', pattern: '41 * * * *', jobType: ROLL_MONTHS },
]

export function createAnalyticsModule(platform: Platform, http: HttpKit) {
  const { config, db, clock, log } = platform
  const rolledUp = backfillRollups(db.db, clock.now())
  if (rolledUp) log.info('clicks recorded before rollups existed were rolled up', { clicks: rolledUp })
  markMinuteRollups(db.db, clock.now())
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
          pruneSecondRollups(db.db, clock.now())
          const removed = pruneRawClicks(db.db, clock.now() - config.clickRetentionDays * DAY_MS)
          if (removed) log.info('raw clicks past retention pruned', { removed, retentionDays: config.clickRetentionDays })
        },
      },
      {
        type: ROLL_MONTHS,
        run: async () => {
          const written = await rollMonths(db.db, clock.now())
          if (written) log.info('link rollups of past months summed', { rows: written })
        },
      },
    ],
  })
}
