// Deliveries of an endpoint or REST-hook subscription: the views of spec 2.6, listing with its filters, replay of
// one or all dead deliveries, and test pings.
import { iso, isoOrNull } from '../../platform/clock'
import type { Caller } from '../identity'
import { Issues } from '../../platform/errors'
import { alreadyReplayed, batchStillOpen, deliveryNotFound, endpointGoneDuringPing, endpointPaused, pingNotReplayable } from './errors'
import { sortableId } from '../../platform/random'
import { sendPing } from './delivery'
import type { AttemptRow, DeliveryFilter, DeliveryRow, EndpointRow, NewDelivery } from './port'
import { deliveryId } from './ids'
import { maxAttemptsFor } from './schedule'
import { findOwn } from './service'
import type { WebhooksCtx } from './state'

export const REPLAY_ALL_MAX = 200

export function toDelivery(row: DeliveryRow) {
  return {
    id: row.id,
    endpointId: row.endpointId,
    event: row.event,
    eventId: row.eventId,
    status: row.status,
    responseStatus: row.responseStatus,
    duration: row.durationMs,
    attempt: row.attempt,
    maxAttempts: row.maxAttempts,
    batchSize: row.batchSize,
    nextAttemptAt: isoOrNull(row.nextAttemptAt),
    // Spec 2.6 types deliveredAt as a timestamp, never null: it appears once the delivery has succeeded.
    ...(row.deliveredAt !== null ? { deliveredAt: iso(row.deliveredAt) } : {}),
    errorMessage: row.errorMessage,
    replayOfId: row.replayOfId,
    replayable: row.replayable && !row.batchOpen,
    idempotencyKey: row.idempotencyKey,
    createdAt: iso(row.createdAt),
  }
}

export function toDeliveryDetail(row: DeliveryRow, attempts: AttemptRow[]) {
  const last = attempts.at(-1)
  return {
    ...toDelivery(row),
    payload: row.payload,
    request: last ? last.request : null,
    response:
      last && last.responseStatus !== null
        ? { status: last.responseStatus, headers: last.responseHeaders ?? {}, body: last.responseBody ?? '', bodyTruncated: last.responseBodyTruncated }
        : null,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: iso(a.startedAt),
      duration: a.durationMs,
      responseStatus: a.responseStatus,
      errorMessage: a.error,
      address: a.address,
    })),
  }
}

const parseTime = (value: string | undefined, path: string, issues: Issues) => {
  if (value === undefined) return undefined
  const ms = Date.parse(value)
  if (!Number.isFinite(ms)) return (issues.add(path, 'must be an ISO 8601 timestamp'), undefined)
  return ms
}

export interface DeliveriesQuery {
  status?: 'all' | 'pending' | 'success' | 'failed' | 'dead'
  event?: string
  from?: string
  to?: string
  q?: string
  since?: string
  limit: number
}

export async function listDeliveries(ctx: WebhooksCtx, caller: Caller, endpointId: string, query: DeliveriesQuery) {
  return deliveriesOf(ctx, await findOwn(ctx, caller, endpointId), query)
}

/** The deliveries of an endpoint or subscription already found to be the caller's. */
export async function deliveriesOf(ctx: WebhooksCtx, endpoint: EndpointRow, query: DeliveriesQuery) {
  const issues = new Issues('query')
  const filter: DeliveryFilter = {
    endpointId: endpoint.id,
    // Spec section 3 fact 1: failed covers a delivery still retrying and one that gave up.
    statuses: !query.status || query.status === 'all' ? undefined : query.status === 'failed' ? ['failed', 'dead'] : [query.status],
    event: query.event || undefined,
    from: parseTime(query.from, 'from', issues),
    to: parseTime(query.to, 'to', issues),
    since: parseTime(query.since, 'since', issues),
    q: query.q?.trim() || undefined,
    limit: query.limit,
  }
  issues.throwIfAny()
  return (await ctx.webhooks.listDeliveries(filter)).map(toDelivery)
}

async function findDelivery(ctx: WebhooksCtx, endpoint: EndpointRow, deliveryId: string) {
  const row = await ctx.webhooks.findDelivery(endpoint.id, deliveryId)
  if (!row) throw deliveryNotFound(deliveryId)
  return row
}

export async function getDelivery(ctx: WebhooksCtx, caller: Caller, endpointId: string, deliveryId: string) {
  return deliveryOf(ctx, await findOwn(ctx, caller, endpointId), deliveryId)
}

/** One delivery, with its attempts, of an endpoint or subscription already found to be the caller's. */
export async function deliveryOf(ctx: WebhooksCtx, endpoint: EndpointRow, deliveryId: string) {
  const row = await findDelivery(ctx, endpoint, deliveryId)
  return toDeliveryDetail(row, await ctx.webhooks.attempts(row.id))
}

/** A fresh delivery of the same payload: new id and idempotency key, the full schedule ahead. */
function copyOf(original: DeliveryRow, endpoint: EndpointRow, now: number): NewDelivery {
  return {
    id: deliveryId(),
    endpointId: original.endpointId,
    workspaceId: original.workspaceId,
    event: original.event,
    eventId: original.eventId,
    payload: original.payload,
    status: 'pending',
    attempt: 0,
    maxAttempts: maxAttemptsFor(endpoint.mode),
    batchSize: original.batchSize,
    batchOpen: false,
    nextAttemptAt: now,
    replayOfId: original.id,
    replayable: true,
    isPing: false,
    idempotencyKey: sortableId('msg', now),
    createdAt: now,
    updatedAt: now,
  }
}

export async function replayDelivery(ctx: WebhooksCtx, caller: Caller, endpointId: string, deliveryId: string) {
  const endpoint = await findOwn(ctx, caller, endpointId)
  const original = await findDelivery(ctx, endpoint, deliveryId)
  if (!endpoint.isActive) throw endpointPaused(endpoint)
  if (original.isPing) throw pingNotReplayable()
  if (original.batchOpen) throw batchStillOpen()
  if (!original.replayable) throw alreadyReplayed(original.id)
  const now = ctx.clock.now()
  const [copy] = await ctx.webhooks.replay([{ originalId: original.id, row: copyOf(original, endpoint, now) }], now)
  if (!copy) throw alreadyReplayed(original.id)
  return toDelivery(copy)
}

export async function replayAll(ctx: WebhooksCtx, caller: Caller, endpointId: string) {
  const endpoint = await findOwn(ctx, caller, endpointId)
  if (!endpoint.isActive) throw endpointPaused(endpoint)
  const now = ctx.clock.now()
  const dead = await ctx.webhooks.deadReplayable(endpoint.id, REPLAY_ALL_MAX)
  const copies = await ctx.webhooks.replay(
    dead.map((d) => ({ originalId: d.id, row: copyOf(d, endpoint, now) })),
    now,
  )
  return { queued: copies.length, remainingDead: await ctx.webhooks.countDeadReplayable(endpoint.id), deliveryIds: copies.map((c) => c.id) }
}

export async function testEndpoint(ctx: WebhooksCtx, caller: Caller, id: string) {
  const endpoint = await findOwn(ctx, caller, id)
  const delivery = await sendPing(ctx, endpoint)
  if (!delivery) throw endpointGoneDuringPing(id)
  return toDeliveryDetail(delivery, await ctx.webhooks.attempts(delivery.id))
}
