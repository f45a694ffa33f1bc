// One attempt of a delivery: build the body (envelope, template output, or a Slack/Discord message), sign it
// with every live secret, send it through the SSRF-checked outbound client, and record the attempt and its
// consequences (success, the next retry, dead, disabling the endpoint) in one transaction, which also
// completes the job. The deliver job reads and writes on the job worker's connection, never the one that
// answers requests (recorder.ts); test pings are requests and use theirs.
import { iso } from '../../platform/clock'
import { retryWhileBusy } from '../../jobs/busy'
import { COMPLETED, type JobContext } from '../../jobs/worker'
import { sendOutbound } from '../../net/outbound'
import { sortableId } from '../../platform/random'
import { discordBody, slackBody } from './formats'
import type { AttemptOutcome, DeliverPayload, DeliveryRow, DeliverySlots, EndpointRow, NewDelivery, WebhooksRepo } from './port'
import { AttemptRecorder } from './recorder'
import { deliveryId } from './ids'
import { AUTO_DISABLE_AFTER_MS, AUTO_DISABLE_FAILURES, DEFER_MS, SLOT_WAIT_MS, nextAttemptAt, parseRetryAfter, TIMEOUT_MS } from './schedule'
import { redactHeaders, signatureHeaders } from './signing'
import { egressPolicy, type WebhooksCtx } from './state'
import { renderTemplate } from './template'

export const USER_AGENT = 'lnk-webhooks/1.0'
export const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-service-signature'] as const
/** Header values that are credentials: never stored or shown beyond a hint. */
const SECRET_HEADERS = ['webhook-signature', 'x-service-signature']
export const EVENT_HEADER = 'x-service-event'

const AUTO_DISABLE = {
  failures: AUTO_DISABLE_FAILURES,
  afterMs: AUTO_DISABLE_AFTER_MS,
  reason: `Disabled automatically: ${AUTO_DISABLE_FAILURES} or more consecutive failed attempts and no success for 5 days`,
}

/** Secrets that sign now, newest first: the current one, and the previous one during its grace. */
export function liveSecrets(endpoint: EndpointRow, now: number): string[] {
  const secrets = [endpoint.secret]
  if (endpoint.previousSecret && endpoint.previousSecretExpiresAt != null && endpoint.previousSecretExpiresAt > now) secrets.push(endpoint.previousSecret)
  return secrets
}

/** The body sent for a payload. A test ping skips the template (the contract), never the Slack/Discord shape. */
export function bodyFor(endpoint: EndpointRow, payload: Record<string, unknown>, ping: boolean): unknown {
  if (endpoint.format === 'slack') return slackBody(payload as unknown as Parameters<typeof slackBody>[0])
  if (endpoint.format === 'discord') return discordBody(payload as unknown as Parameters<typeof discordBody>[0])
  if (!ping && endpoint.transform) return renderTemplate(endpoint.transform.template, payload)
  return payload
}

interface Sent {
  attempt: AttemptOutcome['attempt']
  ok: boolean
  status: number | null
  durationMs: number
  error: string | null
  retryAfter: string | undefined
  finishedAt: number
}

/** Signs and sends one request for the delivery; never throws for what the network or receiver does. */
async function sendOnce(ctx: WebhooksCtx, endpoint: EndpointRow, delivery: DeliveryRow, attemptNo: number, ping: boolean): Promise<Sent> {
  const startedAt = ctx.clock.now()
  let body: string
  try {
    body = JSON.stringify(bodyFor(endpoint, delivery.payload ?? {}, ping)) ?? 'null'
  } catch (err) {
    body = ''
    const error = `the body could not be built: ${(err as Error).message}`
    return {
      attempt: {
        id: sortableId('wha', startedAt),
        deliveryId: delivery.id,
        attempt: attemptNo,
        startedAt,
        durationMs: 0,
        request: { method: 'POST', url: endpoint.url, headers: {}, body },
        responseStatus: null,
        responseHeaders: null,
        responseBody: null,
        responseBodyTruncated: false,
        error,
        address: null,
      },
      ok: false,
      status: null,
      durationMs: 0,
      error,
      retryAfter: undefined,
      finishedAt: startedAt,
    }
  }
  const headers: Record<string, string> = {}
  for (const h of endpoint.customHeaders) headers[h.name] = h.value
  Object.assign(
    headers,
    { 'content-type': 'application/json', 'user-agent': USER_AGENT, [EVENT_HEADER]: delivery.event },
    signatureHeaders({ id: delivery.idempotencyKey, timestamp: Math.floor(startedAt / 1000), body, secrets: liveSecrets(endpoint, startedAt) }),
  )
  const mtls =
    endpoint.mtlsEnabled && ctx.config.webhookClientCert && ctx.config.webhookClientKey
      ? { cert: ctx.config.webhookClientCert, key: ctx.config.webhookClientKey }
      : null
  const res = await sendOutbound({
    url: endpoint.url,
    method: 'POST',
    headers,
    body,
    timeoutMs: TIMEOUT_MS,
    policy: egressPolicy(ctx),
    clientCert: mtls,
    ca: ctx.config.webhookCa,
    ...(ctx.state.resolver ? { resolver: ctx.state.resolver } : {}),
  })
  let error = res.error
  if (!res.ok && !error && res.status !== null) {
    error = res.status >= 300 && res.status < 400 ? `HTTP ${res.status}: redirects are not followed` : `HTTP ${res.status}`
  }
  const stored = redactHeaders(headers, [...SECRET_HEADERS, ...endpoint.customHeaders.map((h) => h.name)])
  return {
    attempt: {
      // Time-ordered: attempts land at the end of their primary key's index, not on a random page of it.
      id: sortableId('wha', startedAt),
      deliveryId: delivery.id,
      attempt: attemptNo,
      startedAt,
      durationMs: Math.round(res.durationMs),
      request: { method: 'POST', url: endpoint.url, headers: stored, body },
      responseStatus: res.status,
      responseHeaders: res.status === null ? null : res.headers,
      responseBody: res.status === null ? null : res.body,
      responseBodyTruncated: res.bodyTruncated,
      error,
      address: res.address,
    },
    ok: res.ok,
    status: res.status,
    durationMs: Math.round(res.durationMs),
    error,
    retryAfter: res.headers['retry-after'],
    finishedAt: ctx.clock.now(),
  }
}

/** What an attempt means for its delivery, its endpoint and the next attempt. */
function outcomeOf(endpoint: EndpointRow, delivery: DeliveryRow, attemptNo: number, sent: Sent): AttemptOutcome {
  const now = sent.finishedAt
  const common = { attempt: attemptNo, responseStatus: sent.status, durationMs: sent.durationMs, updatedAt: now }
  if (sent.ok) {
    return {
      attempt: sent.attempt,
      delivery: { ...common, status: 'success', deliveredAt: now, nextAttemptAt: null, errorMessage: null },
      endpoint: { kind: 'success' },
      next: null,
    }
  }
  if (sent.status === 410) {
    // A REST-hook target's 410 removes the subscription (the hook's owner unsubscribed on their side).
    const hook = endpoint.kind === 'rest_hook'
    const errorMessage =
      `${sent.error}: the ` + `${hook ? 'target answered 410 Gone and the subscription was removed' : 'endpoint answered 410 Gone and was disabled'}`
    const reason = hook ? 'The target answered 410 Gone' : 'The endpoint answered 410 Gone'
    return { attempt: sent.attempt, delivery: { ...common, status: 'dead', nextAttemptAt: null, errorMessage }, endpoint: { kind: 'gone', reason }, next: null }
  }
  const at = attemptNo < delivery.maxAttempts ? nextAttemptAt(endpoint.mode, attemptNo, now, parseRetryAfter(sent.retryAfter, now)) : null
  return {
    attempt: sent.attempt,
    delivery: { ...common, status: at === null ? 'dead' : 'failed', nextAttemptAt: at, errorMessage: sent.error },
    endpoint: { kind: 'failure' },
    next: at === null ? null : { payload: { deliveryId: delivery.id, attempt: attemptNo + 1 }, runAt: at },
  }
}

/** The deliver job on the job worker's connection (`repo`), with the recorder that writes its attempts. */
export function deliverJob(ctx: WebhooksCtx, repo: WebhooksRepo) {
  const recorder = new AttemptRecorder(repo, AUTO_DISABLE)
  const onWorker: WebhooksCtx = { ...ctx, webhooks: repo }
  return { recorder, run: (payload: unknown, job: JobContext) => runDeliverJob(onWorker, recorder, payload as DeliverPayload, job) }
}

/**
 * The deliver job: makes attempt `payload.attempt` of the delivery if that attempt is still due. A job
 * that finds the attempt made (a duplicate, or one re-claimed after its worker died) does nothing. An
 * attempt made is recorded with the completion of its job (COMPLETED); a job that ends otherwise is
 * completed by the worker.
 */
async function runDeliverJob(ctx: WebhooksCtx, recorder: AttemptRecorder, payload: DeliverPayload, job: JobContext): Promise<void | typeof COMPLETED> {
  const { webhooks, state, clock } = ctx
  let delivery = await webhooks.deliveryById(payload.deliveryId)
  if (!delivery || delivery.status === 'success' || delivery.status === 'dead') return
  if (delivery.attempt !== payload.attempt - 1 || state.sending.has(delivery.id)) return
  const endpoint = await webhooks.endpointById(delivery.endpointId)
  if (!endpoint) return
  if (!endpoint.isActive) {
    // Kept, not lost: after re-enabling, replay-all sends what piled up meanwhile.
    const reason =
      endpoint.deletedAt !== null
        ? 'Not sent: the subscription was removed'
        : endpoint.disabledReason
          ? `Not sent: the endpoint is disabled (${endpoint.disabledReason})`
          : 'Not sent: the endpoint is paused'
    await retryWhileBusy(() => webhooks.abandon(delivery!.id, reason, clock.now()))
    return
  }
  state.sending.add(delivery.id)
  if (!(await state.take(endpoint.id, endpoint.maxConcurrent, ctx.config.webhookMaxInFlight, SLOT_WAIT_MS))) {
    state.sending.delete(delivery.id)
    await retryWhileBusy(() => webhooks.defer(payload, clock.now() + DEFER_MS, clock.now()))
    return
  }
  // Other nodes send to this endpoint too (PostgreSQL): one of its maxConcurrent slots across them all.
  const slot = ctx.slots ? await takeSharedSlot(ctx.slots, endpoint) : null
  if (ctx.slots && slot === null) {
    state.release(endpoint.id)
    state.sending.delete(delivery.id)
    await retryWhileBusy(() => webhooks.defer(payload, clock.now() + DEFER_MS, clock.now()))
    return
  }
  try {
    let sent: Sent
    try {
      if (delivery.batchOpen) {
        const id = delivery.id
        delivery = await retryWhileBusy(() => webhooks.closeBatch(id, clock.now()))
        if (!delivery) return
      }
      sent = await sendOnce(ctx, endpoint, delivery, payload.attempt, false)
    } finally {
      // The request is over: its slot goes to the next attempt while this one is recorded (recordings then
      // share transactions even at maxConcurrent 1). The attempt stays in `sending` until it is recorded,
      // so another job for it cannot send it again meanwhile.
      state.release(endpoint.id)
      if (slot !== null) await ctx.slots!.release(endpoint.id, slot)
    }
    const outcome = outcomeOf(endpoint, delivery, payload.attempt, sent)
    const disabled = await recorder.record({
      deliveryId: delivery.id,
      endpointId: endpoint.id,
      outcome,
      now: sent.finishedAt,
      job: { id: job.job.id, workerId: job.workerId },
    })
    if (disabled === null) {
      // The endpoint was deleted mid-request: nothing to record and nobody left to retry for.
      ctx.log.debug('webhook attempt dropped: its endpoint was deleted while it was sent', { endpoint: endpoint.id, delivery: delivery.id })
      return COMPLETED
    }
    if (disabled || outcome.endpoint?.kind === 'gone') {
      state.endpointChanged()
      ctx.log.warn(endpoint.kind === 'rest_hook' && sent.status === 410 ? 'automation subscription removed' : 'webhook endpoint disabled', {
        endpoint: endpoint.id,
        reason: sent.status === 410 ? '410' : 'consecutive failures',
      })
    }
    if (outcome.next) ctx.notifyWorker()
    return COMPLETED
  } finally {
    state.sending.delete(payload.deliveryId)
  }
}

/**
 * One of the endpoint's slots shared by every node, or null when none frees within SLOT_WAIT_MS. Slots are
 * locks tried without waiting, so a freed one is found by trying again, at growing intervals up to 50 ms.
 */
async function takeSharedSlot(slots: DeliverySlots, endpoint: EndpointRow): Promise<number | null> {
  const deadline = performance.now() + SLOT_WAIT_MS
  for (let pause = 5; ; pause = Math.min(pause * 2, 50)) {
    const slot = await slots.take(endpoint.id, endpoint.maxConcurrent)
    if (slot !== null || performance.now() + pause >= deadline) return slot
    await Bun.sleep(pause)
  }
}

export const PING_MESSAGE = 'This is a test ping from lnk. If you can read this, the endpoint works.'

/**
 * A test ping: a webhook.test event through the same sender, one attempt, no retry, answered at once. It is
 * stored like any delivery (so it can be inspected) but never counts against the endpoint. Null when the
 * endpoint was deleted while the ping was out (the stored ping went with it).
 */
export async function sendPing(ctx: WebhooksCtx, endpoint: EndpointRow): Promise<DeliveryRow | null> {
  const now = ctx.clock.now()
  const envelope = {
    id: sortableId('evt', now),
    type: 'webhook.test',
    timestamp: iso(now),
    mode: endpoint.mode,
    data: { endpointId: endpoint.id, message: PING_MESSAGE },
  }
  const row: NewDelivery = {
    id: deliveryId(),
    endpointId: endpoint.id,
    workspaceId: endpoint.workspaceId,
    event: envelope.type,
    eventId: envelope.id,
    payload: envelope,
    status: 'pending',
    attempt: 0,
    maxAttempts: 1,
    batchSize: 1,
    batchOpen: false,
    replayable: false,
    isPing: true,
    idempotencyKey: sortableId('msg', now),
    nextAttemptAt: now,
    createdAt: now,
    updatedAt: now,
  }
  const delivery = await ctx.webhooks.insertDelivery(row, null, now)
  ctx.state.acquire(endpoint.id)
  try {
    const sent = await sendOnce(ctx, endpoint, delivery, 1, true)
    const done = sent.finishedAt
    const recorded = await ctx.webhooks.recordAttempt(
      delivery.id,
      endpoint.id,
      {
        attempt: sent.attempt,
        delivery: {
          attempt: 1,
          responseStatus: sent.status,
          durationMs: sent.durationMs,
          status: sent.ok ? 'success' : 'dead',
          deliveredAt: sent.ok ? done : null,
          nextAttemptAt: null,
          errorMessage: sent.ok ? null : sent.error,
          updatedAt: done,
        },
        endpoint: null,
        next: null,
      },
      done,
      AUTO_DISABLE,
    )
    if (recorded === null) return null
  } finally {
    ctx.state.release(endpoint.id)
  }
  return (await ctx.webhooks.deliveryById(delivery.id)) ?? null
}
