// Plugs webhooks into the runtime: the outbox consumer on the worker's connection and the deliver job.
import type { Runtime } from '../../runtime'
import { runDeliverJob } from './delivery'
import { createFanout } from './fanout'
import { DELIVER_JOB, type DeliverPayload } from './repo'
import { webhooksCtx } from './state'

export function registerWebhooks(rt: Runtime) {
  const ctx = webhooksCtx(rt)
  // The consumer runs inside the dispatch transaction, which is on the worker's own connection.
  rt.worker.consumeOutbox(createFanout(rt.workerDb.db, ctx.state))
  // Deliveries have slots of their own, as many as may be in flight: a slow receiver (up to the 15 s
  // timeout) then never holds up other jobs, and other jobs never hold up deliveries.
  rt.worker.handle(DELIVER_JOB, (payload) => runDeliverJob(ctx, payload as DeliverPayload, () => rt.worker.notify()), { lane: rt.config.webhookMaxInFlight })
}
