// Analytics: overview, timeline and top links from the rollups the click flush keeps; raw-click retention,
// the monthly sums of link rollups, and the one-time rollup of clicks recorded before rollups existed (in the
// factory on SQLite, whose runtime is built synchronously; in init() on PostgreSQL).
import { engineOf } from '../../db/store'
import type { PeriodicTask } from '../../jobs/periodic'
import { DAY_MS } from '../../platform/time'
import { defineModule, type Platform } from '../module'
import type { HttpKit } from '../identity'
import { backfillRollups, markMinuteRollups, pruneRawClicks, pruneSecondRollups, rollSpans } from './maintenance'
import type { BreakdownCtx } from './breakdown'
import { createAnalyticsRepo } from './repo'
import { createBreakdownRepo } from './repo-breakdown'
import { createMaintenanceRepo } from './repo-maintenance'
import { createUniquesReads } from './repo-uniques-sqlite'
import { analyticsRoutes } from './routes'
import { uniquesThread } from './uniques-helper'

// What other modules, the app and the CLI use of analytics.
export { createEnricher, type Enricher, type Enrichment } from './enrich'
export { Figures } from './figures'
export type { RollupAdder, RollupClick } from './port'
export { createRollupWriter } from './rollup-writer-sqlite'
export { rollupWriter } from './rollup-writer'

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
  const engine = engineOf(store)
  const maintenance = createMaintenanceRepo(engine)
  // Both started at once, not one after the other's await: SQLite runs a statement as it is called, so both
  // writes are done before the factory returns, before another connection may hold the write lock (a wait
  // for it on the requests' connection would block the thread).
  const startUp = async () => {
    const now = clock.now()
    const [backfilled] = await Promise.all([backfillRollups(engine, now), markMinuteRollups(maintenance, now)])
    reportBackfill(backfilled)
  }
  if (store.engine === 'sqlite') {
    void startUp().catch((err: Error) => log.error('rolling up clicks recorded before rollups existed failed', { error: err.message }))
  }
  const analytics = createAnalyticsRepo(engine)
  const ctx: BreakdownCtx = {
    config,
    clock,
    log,
    // The unique-visitor reads are a question's bulk on SQLite, whose request thread reads them alongside
    // the uniques thread: both through the same statements prepared once.
    analytics: store.engine === 'sqlite' ? { ...analytics, ...createUniquesReads(store.db.sqlite) } : analytics,
    uniques: store.engine === 'sqlite' ? uniquesThread(store.db.path, log, UNIQUES_CACHE_MB) : undefined,
    breakdowns: createBreakdownRepo(engine),
  }
  return defineModule({
    name: 'analytics',
    ctx,
    routes: analyticsRoutes(ctx, http),
    periodic: ANALYTICS_PERIODIC,
    close: async () => ctx.uniques?.close(),
    async init() {
      if (store.engine === 'pg') await startUp()
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
