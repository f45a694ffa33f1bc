// Outbound webhooks: endpoints and their signed deliveries. The fan-out consumes the outbox inside the
// dispatch transaction (on the worker's connection); deliveries run as jobs in a lane of their own.
import type { PeriodicTask } from '../../jobs/periodic'
import { DAY_MS } from '../../platform/time'
import { defineModule, type HttpKit, type Platform } from '../module'
import { deliverJob } from './delivery'
import { createFanout } from './fanout'
import { createWebhooksRepo, DELIVER_JOB } from './repo'
import { webhookInterest } from './interest'
import { webhookRoutes } from './routes'
import { WebhooksState, type WebhooksCtx } from './state'

export const PRUNE_DELIVERIES = 'webhook_deliveries.prune'
export const WEBHOOKS_PERIODIC: PeriodicTask[] = [{ name: 'prune-deliveries', pattern: '41 * * * *', jobType: PRUNE_DELIVERIES }]

export function createWebhooksModule(platform: Platform, http: HttpKit) {
  const { config, db, workerDb, clock, log, worker } = platform
  // Routes (and test pings, which are requests) use the requests' connection; the jobs (deliveries, the
  // prune) use the job worker's own, which never waits for the write lock (the click writer's).
  const ctx: WebhooksCtx = { config, clock, log, webhooks: createWebhooksRepo(db.db), state: new WebhooksState(), notifyWorker: () => worker.notify() }
  const onWorker = createWebhooksRepo(workerDb.db)
  const deliver = deliverJob(ctx, onWorker)
  // Clicks write link.clicked only where an endpoint listens for it.
  platform.interest.add(webhookInterest(db.db, ctx.state, clock))
  return defineModule({
    name: 'webhooks',
    ctx,
    /** Writes the deliver job's attempts (its busyAnswers say how often the write lock was found taken). */
    recorder: deliver.recorder,
    routes: webhookRoutes(ctx, http),
    // The consumer runs inside the dispatch transaction, which is on the worker's own connection.
    consumers: [createFanout(workerDb.db, ctx.state)],
    periodic: WEBHOOKS_PERIODIC,
    jobs: [
      // Deliveries have slots of their own, as many as may be in flight: a slow receiver (up to the 15 s
      // timeout) then never holds up other jobs, and other jobs never hold up deliveries.
      { type: DELIVER_JOB, run: deliver.run, lane: config.webhookMaxInFlight },
      {
        type: PRUNE_DELIVERIES,
        run: async () => {
          const removed = await onWorker.pruneDeliveries(clock.now() - config.webhookRetentionDays * DAY_MS)
          if (removed) log.info('finished webhook deliveries past retention pruned', { removed, retentionDays: config.webhookRetentionDays })
        },
      },
    ],
  })
}

export type WebhooksModule = ReturnType<typeof createWebhooksModule>
