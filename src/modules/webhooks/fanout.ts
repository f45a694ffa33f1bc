// The outbox consumer: each event becomes a delivery (and the job of its first attempt) for every active
// endpoint of the event's workspace and mode whose events and filters match, or joins the endpoint's open
// batch. It runs inside the dispatch transaction for every event including link.clicked at thousands a
// second: endpoint lists are cached per workspace and mode (lists.ts), and the statements repeated per
// delivery are prepared once (repo-fanout.ts).
//
// One transaction body (fanOut) serves both engines: SQLite runs it synchronously (its dispatch transaction
// is synchronous), PostgreSQL awaits each statement on the dispatch transaction.
import type { EventConsumer, EventEnvelope } from '../../events/outbox'
import { sortableId } from '../../platform/random'
import { eventMatches, matchesFilters, type WebhookFilters } from './filters'
import { deliveryId } from './ids'
import type { WorkspaceLists } from './lists'
import type { EndpointRow } from './port'
import type { FanoutStatements } from './repo-fanout'
import { BATCH_MAX_EVENTS, maxAttemptsFor } from './schedule'

/** The endpoints an event goes to: of its mode, with an events pattern and the filters (if any) matching it. */
export function targetsOf(endpoints: readonly EndpointRow[], envelope: EventEnvelope): EndpointRow[] {
  return endpoints.filter(
    (ep) =>
      ep.mode === envelope.mode &&
      eventMatches(ep.events, envelope.type) &&
      (!ep.filters || matchesFilters(ep.filters as WebhookFilters, envelope as unknown as { type: string; [k: string]: unknown })),
  )
}

/** The fan-out of one event as a step of the dispatch transaction's body, through the engine's statements `st`. */
export function fanOut(st: FanoutStatements, lists: WorkspaceLists<EndpointRow>): EventConsumer {
  return function* (tx, event, now) {
    const { envelope } = event
    const endpoints = yield* lists.reading(event.workspaceId, envelope.mode, now, () => st.activeEndpoints(tx, event.workspaceId, envelope.mode))
    const targets = targetsOf(endpoints, envelope)
    if (!targets.length) return
    const json = JSON.stringify(envelope)
    for (const ep of targets) {
      const common = { endpointId: ep.id, workspaceId: ep.workspaceId, maxAttempts: maxAttemptsFor(ep.mode), idempotencyKey: sortableId('msg', now), now }
      if (!ep.batchEnabled) {
        const id = deliveryId()
        yield* st.insertDelivery(tx, {
          ...common,
          id,
          event: envelope.type,
          eventId: envelope.id,
          payloadJson: json,
          batchSize: 1,
          batchOpen: false,
          batchClosesAt: null,
          nextAttemptAt: now,
        })
        yield* st.enqueueDeliver(tx, { deliveryId: id, attempt: 1 }, now, now)
        continue
      }
      const open = yield* st.openBatch(tx, ep.id)
      if (open) {
        yield* st.addBatchEvent(tx, open.id, open.batchSize, json, now)
        if (open.batchSize + 1 >= BATCH_MAX_EVENTS) {
          // Full: close it now and send it now; the job waiting for the window end finds it sent.
          yield* st.closeBatch(tx, open.id, now)
          yield* st.enqueueDeliver(tx, { deliveryId: open.id, attempt: 1 }, now, now)
        }
        continue
      }
      const id = deliveryId()
      const closesAt = now + ep.batchWindowSeconds * 1000
      yield* st.insertDelivery(tx, {
        ...common,
        id,
        event: 'batch',
        eventId: null,
        payloadJson: null,
        batchSize: 0,
        batchOpen: true,
        batchClosesAt: closesAt,
        nextAttemptAt: closesAt,
      })
      yield* st.addBatchEvent(tx, id, 0, json, now)
      yield* st.enqueueDeliver(tx, { deliveryId: id, attempt: 1 }, closesAt, now)
    }
  }
}
