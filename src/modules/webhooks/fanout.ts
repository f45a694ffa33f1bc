// The outbox consumer: each event becomes a delivery (and the job of its first attempt) for every active
// endpoint of the event's workspace and mode whose events and filters match, or joins the endpoint's open
// batch. It runs inside the dispatch transaction for every event including link.clicked at thousands a
// second: endpoint lists are cached per workspace and mode (lists.ts), statements are prepared once.
//
// One sequence of statements (fanOut) serves both engines: SQLite runs it synchronously (its dispatch
// transaction is synchronous), PostgreSQL awaits each statement on the dispatch transaction.
import type { Db } from '../../db/client'
import type { PgTx } from '../../db/pg/client'
import type { EventEnvelope, OutboxConsumer, OutboxEvent } from '../../events/outbox'
import type { OutboxConsumerPg } from '../../events/outbox-pg'
import { sortableId } from '../../platform/random'
import { eventMatches, matchesFilters, type WebhookFilters } from './filters'
import { createFanoutStatements, type EndpointRow, type FanoutStatements } from './repo'
import type { FanoutStatementsPg } from './repo-fanout-pg'
import { deliveryId } from './ids'
import { WorkspaceLists } from './lists'
import { BATCH_MAX_EVENTS, maxAttemptsFor } from './schedule'
import type { WebhooksState } from './state'

/** The endpoints an event goes to: of its mode, with an events pattern and the filters (if any) matching it. */
export function targetsOf(endpoints: readonly EndpointRow[], envelope: EventEnvelope): EndpointRow[] {
  return endpoints.filter(
    (ep) =>
      ep.mode === envelope.mode &&
      eventMatches(ep.events, envelope.type) &&
      (!ep.filters || matchesFilters(ep.filters as WebhookFilters, envelope as unknown as { type: string; [k: string]: unknown })),
  )
}

/** One statement of the fan-out, by name, with its arguments. */
type Call = { [K in keyof FanoutStatements]: [K, Parameters<FanoutStatements[K]>] }[keyof FanoutStatements]
type OpenBatch = ReturnType<FanoutStatements['openBatch']>

/** The statements for one event, in order; the answer of each is handed back (only openBatch's is read). */
function* fanOut(targets: EndpointRow[], envelope: EventEnvelope, now: number): Generator<Call, void, unknown> {
  if (!targets.length) return
  const json = JSON.stringify(envelope)
  for (const ep of targets) {
    const common = { endpointId: ep.id, workspaceId: ep.workspaceId, maxAttempts: maxAttemptsFor(ep.mode), idempotencyKey: sortableId('msg', now), now }
    if (!ep.batchEnabled) {
      const id = deliveryId()
      yield ['insertDelivery', [{ ...common, id, event: envelope.type, eventId: envelope.id, payloadJson: json, batchSize: 1, batchOpen: false, batchClosesAt: null, nextAttemptAt: now }]]
      yield ['enqueueDeliver', [{ deliveryId: id, attempt: 1 }, now, now]]
      continue
    }
    const open = (yield ['openBatch', [ep.id]]) as OpenBatch
    if (open) {
      yield ['addBatchEvent', [open.id, open.batchSize, json, now]]
      if (open.batchSize + 1 >= BATCH_MAX_EVENTS) {
        // Full: close it now and send it now; the job waiting for the window end finds it sent.
        yield ['closeBatch', [open.id, now]]
        yield ['enqueueDeliver', [{ deliveryId: open.id, attempt: 1 }, now, now]]
      }
      continue
    }
    const id = deliveryId()
    const closesAt = now + ep.batchWindowSeconds * 1000
    yield ['insertDelivery', [{ ...common, id, event: 'batch', eventId: null, payloadJson: null, batchSize: 0, batchOpen: true, batchClosesAt: closesAt, nextAttemptAt: closesAt }]]
    yield ['addBatchEvent', [id, 0, json, now]]
    yield ['enqueueDeliver', [{ deliveryId: id, attempt: 1 }, closesAt, now]]
  }
}

type AnyStatement = (...args: unknown[]) => unknown

/** SQLite: inside the synchronous dispatch transaction, on the connection that dispatches (`db`). */
export function createFanout(db: Db, state: WebhooksState): OutboxConsumer {
  const st = createFanoutStatements(db)
  const lists = new WorkspaceLists<EndpointRow>(() => state.generation)
  return (_tx, event, now) => {
    const { envelope } = event
    const endpoints = lists.read(event.workspaceId, envelope.mode, now, () => st.activeEndpoints(event.workspaceId, envelope.mode))
    const steps = fanOut(targetsOf(endpoints, envelope), envelope, now)
    for (let step = steps.next(); !step.done; ) {
      const [name, args] = step.value
      step = steps.next((st[name] as AnyStatement)(...args))
    }
  }
}

/** PostgreSQL: each statement awaited on the dispatch transaction, so the deliveries commit with the cursor. */
export function createFanoutPg(st: FanoutStatementsPg, lists: WorkspaceLists<EndpointRow>): OutboxConsumerPg {
  return async (tx: PgTx, event: OutboxEvent, now: number) => {
    const { envelope } = event
    const endpoints = await lists.readAsync(event.workspaceId, envelope.mode, now, () => st.activeEndpoints(tx, event.workspaceId, envelope.mode))
    const steps = fanOut(targetsOf(endpoints, envelope), envelope, now)
    for (let step = steps.next(); !step.done; ) {
      const [name, args] = step.value
      step = steps.next(await (st[name] as AnyStatement)(tx, ...args))
    }
  }
}
