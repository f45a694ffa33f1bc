// Analytics: overview, timeline and top links from the rollups the click flush keeps; raw-click retention,
// the monthly sums of link rollups, and the one-time rollup of clicks recorded before rollups existed (in the
// factory on SQLite, in init() on PostgreSQL).
import { onEngine } from '../../db/store'
import type { PeriodicTask } from '../../jobs/periodic'
import { DAY_MS } from '../../platform/time'
import { defineModule, type HttpKit, type Platform } from '../module'
import { backfillRollups, backfillRollupsPg, markMinuteRollups, pruneRawClicks, pruneSecondRollups, rollSpans, type MaintenanceRows } from './maintenance'
import { createAnalyticsRepo } from './repo'
import { createMaintenanceRepo } from './repo-maintenance'
import { createMaintenanceRepoPg } from './repo-maintenance-pg'
import { createAnalyticsRepoPg } from './repo-pg'
import { analyticsRoutes } from './routes'
import type { AnalyticsCtx } from './service'
import { uniquesThread } from './uniques-helper'

/** The uniques thread's page cache, as the request connection's. */
const UNIQUES_CACHE_MB = 16

export const PRUNE_CLICKS = 'clicks.prune'
export const ROLL_MONTHS = 'analytics.roll-months'
export const ANALYTICS_PERIODIC: PeriodicTask[] = [
  { name: 'prune-clicks', pattern: '29 * * * *', jobType: PRUNE_CLICKS },
  { name: 'roll-months', pattern: '41 * * * *', jobType: ROLL_MONTHS },
]

export function createAnalyticsModule(platform: Platform, http: HttpKit) {
  const { config, store, clock, log } = platform
  const reportBackfill = (clicks: number) => {
    if (clicks) log.info('clicks recorded before rollups existed were rolled up', { clicks })
  }
  const maintenance = onEngine<MaintenanceRows>(store, (s) => createMaintenanceRepo(s.db.db), (s) => createMaintenanceRepoPg(s.db))
  if (store.engine === 'sqlite') {
    reportBackfill(backfillRollups(store.db.db, clock.now()))
    void markMinuteRollups(maintenance, clock.now())
  }
  const ctx: AnalyticsCtx = {
    config,
    clock,
    log,
    analytics: onEngine(store, (s) => createAnalyticsRepo(s.db.sqlite), (s) => createAnalyticsRepoPg(s.db)),
    uniques: store.engine === 'sqlite' ? uniquesThread(store.db.path, log, UNIQUES_CACHE_MB) : undefined,
  }
  return defineModule({
    name: 'analytics',
    ctx,
    routes: analyticsRoutes(ctx, http),
    periodic: ANALYTICS_PERIODIC,
    close: async () => ctx.uniques?.close(),
    async init() {
      if (store.engine !== 'pg') return
      reportBackfill(await backfillRollupsPg(store.db, clock.now()))
      await markMinuteRollups(maintenance, clock.now())
    },
    jobs: [
      {
        type: PRUNE_CLICKS,
        run: async () => {
          // Rollups keep every figure; only raw rows (partial hours, the stats of a single click) go.
          await pruneSecondRollups(maintenance, clock.now())
          const removed = await pruneRawClicks(maintenance, clock.now() - config.clickRetentionDays * DAY_MS)
          if (removed) log.info('raw clicks past retention pruned', { removed, retentionDays: config.clickRetentionDays })
        },
      },
      {
        type: ROLL_MONTHS,
        run: async () => {
          const written = await rollSpans(maintenance, clock.now())
          if (written) log.info('link rollups of past months summed', { rows: written })
        },
      },
    ],
  })
}
