// The job types of the platform itself and their periodic triggers. Feature areas register theirs beside.
import { pruneDispatched } from '../events/outbox'
import { pruneRawClicks } from '../modules/analytics/maintenance'
import { pruneDeliveries } from '../modules/webhooks/repo'
import type { Runtime } from '../runtime'
import type { PeriodicTask } from './periodic'

export const PRUNE_IDEMPOTENCY = 'idempotency.prune'
export const PRUNE_OUTBOX = 'outbox.prune'
export const PRUNE_CLICKS = 'clicks.prune'
export const PRUNE_DELIVERIES = 'webhook_deliveries.prune'
/** Dispatched events stay this long for inspection, then go. */
export const OUTBOX_RETENTION_MS = 3 * 24 * 3_600_000

export const PERIODIC_TASKS: PeriodicTask[] = [
  { name: 'prune-idempotency', pattern: '17 * * * *', jobType: PRUNE_IDEMPOTENCY },
  { name: 'prune-outbox', pattern: '47 * * * *', jobType: PRUNE_OUTBOX },
  { name: 'prune-clicks', pattern: '29 * * * *', jobType: PRUNE_CLICKS },
  { name: 'prune-deliveries', pattern: '41 * * * *', jobType: PRUNE_DELIVERIES },
]

export function registerPlatformJobs(rt: Runtime) {
  rt.worker.handle(PRUNE_IDEMPOTENCY, async () => {
    const removed = await rt.idempotency.pruneExpired(rt.clock.now())
    if (removed) rt.log.info('expired idempotency records pruned', { removed })
  })
  rt.worker.handle(PRUNE_OUTBOX, async () => {
    const removed = pruneDispatched(rt.db.db, rt.clock.now() - OUTBOX_RETENTION_MS)
    if (removed) rt.log.info('dispatched outbox events pruned', { removed })
  })
  rt.worker.handle(PRUNE_CLICKS, async () => {
    // Rollups keep every figure; only raw rows (partial hours, the stats of a single click) go.
    const removed = pruneRawClicks(rt.db.db, rt.clock.now() - rt.config.clickRetentionDays * 86_400_000)
    if (removed) rt.log.info('raw clicks past retention pruned', { removed, retentionDays: rt.config.clickRetentionDays })
  })
  rt.worker.handle(PRUNE_DELIVERIES, async () => {
    const removed = pruneDeliveries(rt.db.db, rt.clock.now() - rt.config.webhookRetentionDays * 86_400_000)
    if (removed) rt.log.info('finished webhook deliveries past retention pruned', { removed, retentionDays: rt.config.webhookRetentionDays })
  })
}
