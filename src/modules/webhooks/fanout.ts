// The outbox consumer: each event becomes a delivery (and the job of its first attempt) for every active
// endpoint of the event's workspace and mode whose events and filters match, or joins the endpoint's open
// batch. It runs inside the dispatch transaction, synchronously, for every event including link.clicked at
// thousands a second: endpoint lists are cached per workspace and mode, statements are prepared once.
import type { Db } from '../../db/client'
import type { OutboxConsumer } from '../../events/outbox'
import { sortableId } from '../../platform/random'
import { eventMatches, matchesFilters, type WebhookFilters } from './filters'
import { createFanoutStatements, type EndpointRow } from './repo'
import { deliveryId } from './ids'
import { BATCH_MAX_EVENTS, maxAttemptsFor } from './schedule'
import type { WebhooksState } from './state'

/** A cached list is trusted this long even without a change signal (changes by another process). */
const CACHE_TTL_MS = 5000
const CACHE_MAX_KEYS = 10_000

interface CacheEntry {
  generation: number
  at: number
  endpoints: EndpointRow[]
}

export function createFanout(db: Db, state: WebhooksState): OutboxConsumer {
  const st = createFanoutStatements(db)
  const cache = new Map<string, CacheEntry>()

  function endpointsFor(workspaceId: string, mode: string, now: number): EndpointRow[] {
    const key = `${workspaceId}\u0000${mode}`
    const hit = cache.get(key)
    if (hit && hit.generation === state.generation && now >= hit.at && now - hit.at < CACHE_TTL_MS) return hit.endpoints
    if (cache.size >= CACHE_MAX_KEYS) cache.clear()
    const endpoints = st.activeEndpoints(workspaceId, mode)
    cache.set(key, { generation: state.generation, at: now, endpoints })
    return endpoints
  }

  return (tx, event, now) => {
    const { envelope } = event
    const endpoints = endpointsFor(event.workspaceId, envelope.mode, now)
    if (!endpoints.length) return
    let json: string | undefined
    for (const ep of endpoints) {
      if (ep.mode !== envelope.mode || !eventMatches(ep.events, envelope.type)) continue
      if (ep.filters && !matchesFilters(ep.filters as WebhookFilters, envelope as unknown as { type: string; [k: string]: unknown })) continue
      json ??= JSON.stringify(envelope)
      if (ep.batchEnabled) {
        const open = st.openBatch(ep.id)
        if (open) {
          st.addBatchEvent(open.id, open.batchSize, json, now)
          if (open.batchSize + 1 >= BATCH_MAX_EVENTS) {
            // Full: close it now and send it now; the job waiting for the window end finds it sent.
            st.closeBatch(open.id, now)
            st.enqueueDeliver({ deliveryId: open.id, attempt: 1 }, now, now)
          }
          continue
        }
        const id = deliveryId()
        const closesAt = now + ep.batchWindowSeconds * 1000
        st.insertDelivery({ id, endpointId: ep.id, workspaceId: ep.workspaceId, event: 'batch', eventId: null, payloadJson: null, maxAttempts: maxAttemptsFor(ep.mode), batchSize: 0, batchOpen: true, batchClosesAt: closesAt, nextAttemptAt: closesAt, idempotencyKey: sortableId('msg', now), now })
        st.addBatchEvent(id, 0, json, now)
        st.enqueueDeliver({ deliveryId: id, attempt: 1 }, closesAt, now)
        continue
      }
      const id = deliveryId()
      st.insertDelivery({ id, endpointId: ep.id, workspaceId: ep.workspaceId, event: envelope.type, eventId: envelope.id, payloadJson: json, maxAttempts: maxAttemptsFor(ep.mode), batchSize: 1, batchOpen: false, batchClosesAt: null, nextAttemptAt: now, idempotencyKey: sortableId('msg', now), now })
      st.enqueueDeliver({ deliveryId: id, attempt: 1 }, now, now)
    }
  }
}
