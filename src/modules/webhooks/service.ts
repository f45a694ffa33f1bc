// Webhook endpoints and their deliveries, shared by HTTP and jobs: validation on save (URL safety, event
// names, filters, template, headers, mTLS), the views of spec 2.5 and 2.6, replay, rotation, test pings and
// the delivery facts of GET /webhooks/info.
import { iso, isoOrNull } from '../../platform/clock'
import { type Caller, listedMode, type ModeFilter } from '../identity'
import { Issues, pointerToPath } from '../../platform/errors'
import {
  alreadyReplayed,
  batchStillOpen,
  deliveryNotFound,
  endpointGoneDuringPing,
  endpointNotFound,
  endpointPaused,
  pingNotReplayable,
  testKeyCreatesLiveEndpoint,
} from './errors'
import { checkUrl } from '../../net/egress'
import { newId, sortableId } from '../../platform/random'
import { sendPing, SIGNATURE_HEADERS, EVENT_HEADER, USER_AGENT } from './delivery'
import { validateEventPatterns, validateFilters } from './filters'
import { EVENT_CATALOGUE, URL_MAX_LENGTH, type CreateWebhookInput, type UpdateWebhookInput } from './model'
import type { AttemptRow, DeliveryFilter, DeliveryRow, EndpointKind, EndpointRow, NewDelivery, NewEndpoint } from './port'
import { deliveryId } from './ids'
import {
  AUTO_DISABLE_AFTER_MS,
  AUTO_DISABLE_FAILURES,
  BATCH_MAX_EVENTS,
  JITTER,
  maxAttemptsFor,
  RETRY_AFTER_CAP_MS,
  RETRY_DELAYS_MS,
  TIMEOUT_MS,
} from './schedule'
import { generateSecret, valueHint } from './signing'
import { egressPolicy, type WebhooksCtx } from './state'
import { validateTemplate } from './template'
import { eventTypes } from './type-gen'
import { HOUR_MS } from '../../platform/time'

export const KNOWN_EVENTS: readonly string[] = EVENT_CATALOGUE.map((e) => e.type)
export const ROTATION_GRACE_MS = 24 * HOUR_MS
export const REPLAY_ALL_MAX = 200

/** Header names the sender sets itself or that belong to the connection, refused as custom headers. */
const RESERVED_HEADERS = new Set([
  ...SIGNATURE_HEADERS,
  EVENT_HEADER,
  'content-type',
  'content-length',
  'user-agent',
  'host',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  'expect',
])
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

export function toEndpoint(row: EndpointRow, now: number) {
  const graceLeft = row.previousSecret && row.previousSecretExpiresAt != null && row.previousSecretExpiresAt > now
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    events: row.events,
    format: row.format,
    mode: row.mode,
    isActive: row.isActive,
    failureCount: row.failureCount,
    disabledReason: row.disabledReason,
    customHeaderNames: row.customHeaders.map((h) => ({ name: h.name, hint: valueHint(h.value) })),
    filters: row.filters as never,
    transform: row.transform,
    batchEnabled: row.batchEnabled,
    batchWindowSeconds: row.batchWindowSeconds,
    maxConcurrent: row.maxConcurrent,
    mtlsEnabled: row.mtlsEnabled,
    previousSecretExpiresAt: graceLeft ? iso(row.previousSecretExpiresAt!) : null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

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

type Settings = Partial<CreateWebhookInput>

/** Checks what was sent and answers the columns it sets. Every problem is named, with its path. */
async function validated(ctx: WebhooksCtx, input: Settings, current: EndpointRow | null): Promise<Partial<NewEndpoint>> {
  const issues = new Issues()
  const out: Partial<NewEndpoint> = {}
  if (input.url !== undefined) {
    if (typeof input.url !== 'string' || !input.url || input.url.length > URL_MAX_LENGTH)
      issues.add('url', `must be an absolute URL of at most ${URL_MAX_LENGTH} characters`)
    else {
      const checked = await checkUrl(input.url, egressPolicy(ctx), ctx.state.resolver ?? undefined)
      if (!checked.ok) issues.add('url', checked.reason)
      else out.url = input.url
    }
  }
  if (input.events !== undefined) {
    for (const i of validateEventPatterns(input.events, KNOWN_EVENTS, '/events')) issues.add(pointerToPath(i.path), i.message)
    out.events = [...new Set(input.events as string[])]
  }
  if (input.filters !== undefined) {
    const result = validateFilters(input.filters)
    if (!result.ok) for (const i of result.issues) issues.add(pointerToPath(i.path), i.message)
    else {
      out.filters = result.value
      if (result.value?.events)
        for (const i of validateEventPatterns(result.value.events, KNOWN_EVENTS, '/filters/events')) issues.add(pointerToPath(i.path), i.message)
    }
  }
  const format = input.format ?? current?.format ?? 'standard'
  if (input.format !== undefined) out.format = input.format
  if (input.transform !== undefined) {
    if (input.transform !== null) for (const i of validateTemplate(input.transform.template)) issues.add(pointerToPath(i.path), i.message)
    out.transform = input.transform
  }
  const transform = input.transform !== undefined ? input.transform : (current?.transform ?? null)
  if (transform && format !== 'standard') issues.add('transform', `a template applies to the standard format only; ${format} endpoints get a ${format} message`)
  if (input.customHeaders !== undefined) {
    const seen = new Set<string>()
    input.customHeaders.forEach((h, i) => {
      const lower = h.name.toLowerCase()
      if (!TOKEN.test(h.name)) issues.add(`customHeaders.${i}.name`, "must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)")
      else if (RESERVED_HEADERS.has(lower))
        issues.add(`customHeaders.${i}.name`, `"${h.name}" is set by the sender or belongs to the connection; it cannot be a custom header`)
      else if (seen.has(lower)) issues.add(`customHeaders.${i}.name`, `"${h.name}" is given twice`)
      if (/[\r\n\0]/.test(h.value)) issues.add(`customHeaders.${i}.value`, 'must not contain line breaks or NUL')
      seen.add(lower)
    })
    out.customHeaders = input.customHeaders
  }
  if (input.mtlsEnabled === true && !ctx.config.webhookClientCert) {
    issues.add('mtlsEnabled', 'no client certificate is configured on this server (LNK_WEBHOOK_CLIENT_CERT and LNK_WEBHOOK_CLIENT_KEY)')
  }
  issues.throwIfAny()
  if (input.name !== undefined) out.name = input.name
  if (input.batchEnabled !== undefined) out.batchEnabled = input.batchEnabled
  if (input.batchWindowSeconds !== undefined) out.batchWindowSeconds = input.batchWindowSeconds
  if (input.maxConcurrent !== undefined) out.maxConcurrent = input.maxConcurrent
  if (input.mtlsEnabled !== undefined) out.mtlsEnabled = input.mtlsEnabled
  return out
}

/**
 * An endpoint of the caller's workspace; a test key sees only test endpoints (others do not exist for it),
 * while a live key may name a test endpoint by id.
 */
async function findOwn(ctx: WebhooksCtx, caller: Caller, id: string): Promise<EndpointRow> {
  const row = await ctx.webhooks.findEndpoint(caller.workspace.id, id)
  if (!row || row.kind !== 'endpoint' || (caller.mode === 'test' && row.mode !== 'test')) throw endpointNotFound(id)
  return row
}

/** The workspace's endpoints of the mode asked for (default: the caller's own; a test key lists test ones only). */
export async function listEndpoints(ctx: WebhooksCtx, caller: Caller, mode?: ModeFilter) {
  const now = ctx.clock.now()
  return (await ctx.webhooks.listEndpoints(caller.workspace.id, 'endpoint', listedMode(caller, mode, 'webhook endpoints'))).map((r) => toEndpoint(r, now))
}

export async function getEndpoint(ctx: WebhooksCtx, caller: Caller, id: string) {
  return toEndpoint(await findOwn(ctx, caller, id), ctx.clock.now())
}

/** A new endpoint or REST-hook subscription with the defaults of every setting it was not given. */
export function newEndpoint(
  f: Pick<NewEndpoint, 'id' | 'workspaceId' | 'url' | 'events' | 'mode' | 'secret'> & { kind: EndpointKind; now: number },
): NewEndpoint {
  const { now, ...given } = f
  return {
    ...given,
    format: 'standard',
    isActive: true,
    failureCount: 0,
    customHeaders: [],
    batchEnabled: false,
    batchWindowSeconds: 10,
    maxConcurrent: 5,
    mtlsEnabled: false,
    createdAt: now,
    updatedAt: now,
  }
}

export async function createEndpoint(ctx: WebhooksCtx, caller: Caller, input: CreateWebhookInput) {
  const mode = input.mode ?? caller.mode
  if (caller.mode === 'test' && mode !== 'test') throw testKeyCreatesLiveEndpoint()
  // url and events are required by the body's schema, so once valid they are set.
  const { url, events, ...columns } = await validated(ctx, input, null)
  const now = ctx.clock.now()
  const secret = generateSecret()
  const isActive = input.isActive ?? true
  const row = await ctx.webhooks.insertEndpoint({
    ...newEndpoint({ id: newId('whe'), kind: 'endpoint', workspaceId: caller.workspace.id, url: url!, events: events!, mode, secret, now }),
    isActive,
    ...columns,
  })
  ctx.state.endpointChanged()
  return { ...toEndpoint(row, now), secret }
}

export async function updateEndpoint(ctx: WebhooksCtx, caller: Caller, id: string, input: UpdateWebhookInput) {
  const current = await findOwn(ctx, caller, id)
  const patch = await validated(ctx, input, current)
  const now = ctx.clock.now()
  patch.updatedAt = now
  if (input.isActive !== undefined) {
    patch.isActive = input.isActive
    // Re-enabling starts afresh: the reason it was disabled and the failure run no longer apply.
    if (input.isActive && !current.isActive) Object.assign(patch, { disabledReason: null, failureCount: 0, failingSince: null })
  }
  const row = await ctx.webhooks.updateEndpoint(current.id, patch)
  if (!row) throw endpointNotFound(id)
  ctx.state.endpointChanged()
  return toEndpoint(row, now)
}

export async function deleteEndpoint(ctx: WebhooksCtx, caller: Caller, id: string) {
  const current = await findOwn(ctx, caller, id)
  if (!(await ctx.webhooks.deleteEndpoint(current.id))) throw endpointNotFound(id)
  ctx.state.endpointChanged()
  return { id: current.id, deleted: true as const }
}

export async function rotateSecret(ctx: WebhooksCtx, caller: Caller, id: string, grace = true) {
  const current = await findOwn(ctx, caller, id)
  const now = ctx.clock.now()
  const secret = generateSecret()
  const row = await ctx.webhooks.rotateSecret(current.id, secret, grace ? now + ROTATION_GRACE_MS : null, now)
  if (!row) throw endpointNotFound(id)
  ctx.state.endpointChanged()
  return { ...toEndpoint(row, now), secret }
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

export function webhookInfo(ctx: WebhooksCtx) {
  const seconds = (list: readonly number[]) => list.map((ms) => ms / 1000)
  return {
    egressIps: ctx.config.webhookEgressIps,
    egressIpsConfigured: ctx.config.webhookEgressIps.length > 0,
    retrySchedule: { live: seconds(RETRY_DELAYS_MS.live), test: seconds(RETRY_DELAYS_MS.test) },
    maxAttempts: { live: maxAttemptsFor('live'), test: maxAttemptsFor('test') },
    jitter: JITTER,
    retryAfterCapSeconds: RETRY_AFTER_CAP_MS / 1000,
    timeoutSeconds: TIMEOUT_MS / 1000,
    signatureHeaders: [...SIGNATURE_HEADERS],
    eventHeader: EVENT_HEADER,
    userAgent: USER_AGENT,
    mtlsConfigured: ctx.config.webhookClientCert !== null,
    maxBatchSize: BATCH_MAX_EVENTS,
    autoDisable: { consecutiveFailures: AUTO_DISABLE_FAILURES, withoutSuccessSeconds: AUTO_DISABLE_AFTER_MS / 1000 },
    events: [...KNOWN_EVENTS],
  }
}

export function webhookTypes(lang: 'ts' | 'go') {
  return { lang, source: eventTypes(lang) }
}
