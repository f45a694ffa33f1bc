// Outbound webhooks: endpoints and their signed deliveries. The fan-out consumes the outbox inside the
// dispatch transaction; deliveries run as jobs in a lane of their own. On PostgreSQL several nodes share the
// endpoints: a change is announced on the bus (`subscribers.changed`) so every node's cached lists drop, and
// each endpoint's maxConcurrent is counted across nodes by slots the database holds (repo-slots-pg.ts).
import { engineOf, onEngine } from '../../db/store'
import type { EventConsumer } from '../../events/outbox'
import type { PeriodicTask } from '../../jobs/periodic'
import { DAY_MS } from '../../platform/time'
import { defineModule, type Platform } from '../module'
import type { HttpKit } from '../identity'
import { deliverJob } from './delivery'
import { fanOut } from './fanout'
import { webhookInterest, webhookInterestPg } from './interest'
import { WorkspaceLists } from './lists'
import { DELIVER_JOB, type EndpointRow, type WebhooksRepo } from './port'
import { createWebhooksRepo } from './repo'
import { createFanoutStatements } from './repo-fanout'
import { sharedSlots } from './repo-slots-pg'
import { webhookRoutes } from './routes'
import { WebhooksState, type WebhooksCtx } from './state'
import { WEBHOOK_EVENTS } from './model'

// What other modules, the app and the CLI use of webhooks.
export { eventMatches, validateEventPatterns } from './filters'
export { WorkspaceLists } from './lists'
export type { EndpointRow } from './port'
export { deliveriesOf, deliveryOf, type DeliveriesQuery } from './deliveries'
export { newEndpoint } from './service'
export { generateSecret, signatureHeaders } from './signing'
export { egressPolicy, type WebhooksCtx } from './state'
export { splitNull, type Schema } from './type-gen'

export const PRUNE_DELIVERIES = 'webhook_deliveries.prune'
export const WEBHOOKS_PERIODIC: PeriodicTask[] = [{ name: 'prune-deliveries', pattern: '41 * * * *', jobType: PRUNE_DELIVERIES }]

export function createWebhooksModule(platform: Platform, http: HttpKit) {
  const { config, store, clock, log, worker, bus, interest } = platform
  const state = new WebhooksState(() => bus.emit('subscribers.changed', { area: 'webhooks' }))
  // Another node changed endpoints, or its notices may have been lost: every cached list is stale.
  bus.on('subscribers.changed', ({ area }) => {
    if (area === 'webhooks') state.stale()
  })
  bus.on('caches.reset', () => state.stale())
  const slots = onEngine(
    store,
    () => null,
    (s) => sharedSlots(s.sql, config.shutdownTimeoutSeconds * 1000),
  )
  const wiring = onEngine<Wiring>(
    store,
    () => {
      // Routes (and test pings, which are requests) use the requests' connection; the jobs (deliveries, the
      // prune) and the fan-out (inside the dispatch transaction) the worker's own, which never waits for the
      // write lock (the click writer's).
      // Clicks write link.clicked only where an endpoint listens for it.
      interest.add(webhookInterest(engineOf(store), new WorkspaceLists<EndpointRow>(() => state.generation), clock))
      // The deliver job's reads and recordings, and the fan-out's statements, are prepared on the worker's connection.
      const worker = engineOf(store, 'worker')
      return {
        webhooks: createWebhooksRepo(engineOf(store)),
        onWorker: createWebhooksRepo(worker),
        consumer: fanOut(createFanoutStatements(worker), new WorkspaceLists<EndpointRow>(() => state.generation)),
      }
    },
    () => {
      // One pool for requests and the worker, so one list cache for the fan-out and the interest source.
      const engine = engineOf(store)
      const lists = new WorkspaceLists<EndpointRow>(() => state.generation)
      interest.add(webhookInterestPg(engine, lists, clock))
      const repo = createWebhooksRepo(engine)
      return { webhooks: repo, onWorker: repo, consumer: fanOut(createFanoutStatements(engine), lists) }
    },
  )
  const ctx: WebhooksCtx = { config, clock, log, webhooks: wiring.webhooks, state, notifyWorker: () => worker.notify(), slots }
  const deliver = deliverJob(ctx, wiring.onWorker)
  return defineModule({
    name: 'webhooks',
    events: WEBHOOK_EVENTS,
    ctx,
    /** Writes the deliver job's attempts (its busyAnswers say how often the write lock was found taken). */
    recorder: deliver.recorder,
    routes: webhookRoutes(ctx, http),
    consumers: [wiring.consumer],
    periodic: WEBHOOKS_PERIODIC,
    async init() {
      await slots?.open()
    },
    async close() {
      await slots?.close()
    },
    jobs: [
      // Deliveries have slots of their own, as many as may be in flight: a slow receiver (up to the 15 s
      // timeout) then never holds up other jobs, and other jobs never hold up deliveries.
      { type: DELIVER_JOB, run: deliver.run, lane: config.webhookMaxInFlight },
      {
        type: PRUNE_DELIVERIES,
        run: async () => {
          const removed = await wiring.onWorker.pruneDeliveries(clock.now() - config.webhookRetentionDays * DAY_MS)
          if (removed) log.info('finished webhook deliveries past retention pruned', { removed, retentionDays: config.webhookRetentionDays })
        },
      },
    ],
  })
}

/** The repos and consumers of the engine served from. */
interface Wiring {
  webhooks: WebhooksRepo
  /** The deliver job's and the prune's (SQLite: the worker's connection). */
  onWorker: WebhooksRepo
  consumer: EventConsumer
}

export type WebhooksModule = ReturnType<typeof createWebhooksModule>
