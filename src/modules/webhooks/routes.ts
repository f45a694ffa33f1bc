import { Elysia, t } from 'elysia'
import { ModeQuery, type HttpKit } from '../identity'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import type { WebhooksCtx } from './state'
import {
  CreateWebhookBody,
  DeliveriesQuery,
  RotateSecretBody,
  UpdateWebhookBody,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from './model'
import { getDelivery, listDeliveries, REPLAY_ALL_MAX, replayAll, replayDelivery, testEndpoint } from './deliveries'
import { webhookInfo, webhookTypes } from './info'
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret, updateEndpoint } from './service'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope }
const Params = t.Object({ id: t.String() })
const DeliveryParams = t.Object({ id: t.String(), deliveryId: t.String() })

const Info = t.Object({
  egressIps: t.Array(t.String(), { description: 'Static outbound addresses (LNK_WEBHOOK_EGRESS_IPS)' }),
  egressIpsConfigured: t.Boolean({ description: 'false until static outbound addresses are pinned; an empty list then carries no meaning' }),
  retrySchedule: t.Object({ live: t.Array(t.Number()), test: t.Array(t.Number()) }, { description: 'Seconds before each retry, ±jitter' }),
  maxAttempts: t.Object({ live: t.Integer(), test: t.Integer() }),
  jitter: t.Number(),
  retryAfterCapSeconds: t.Integer(),
  timeoutSeconds: t.Integer(),
  signatureHeaders: t.Array(t.String()),
  eventHeader: t.String(),
  userAgent: t.String(),
  mtlsConfigured: t.Boolean(),
  maxBatchSize: t.Integer(),
  autoDisable: t.Object({ consecutiveFailures: t.Integer(), withoutSuccessSeconds: t.Integer() }),
  events: t.Array(t.String()),
})

export function webhookRoutes(ctx: WebhooksCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.webhooks', seed: http.instanceId, prefix: '/webhooks', tags: ['Webhooks'] })
    .use(http.auth)
    .get('/', async ({ caller, query }) => ok(await listEndpoints(ctx, caller, query.mode)), {
      permission: 'webhooks:read',
      query: t.Object({ mode: ModeQuery('webhook endpoints') }),
      response: { 200: Envelope(t.Array(WebhookEndpoint)), ...errors },
      detail: {
        summary: 'List webhook endpoints',
        description:
          "Oldest first, of one mode: the calling key's unless mode says otherwise (a live key may ask for test or all; a test key sees test endpoints " +
          'only). Secrets and custom header values are never returned.',
      },
    })
    .post(
      '/',
      async ({ caller, body, set }) => {
        set.status = 201
        return ok(await createEndpoint(ctx, caller, body))
      },
      {
        permission: 'webhooks:write',
        idempotent: true,
        body: CreateWebhookBody,
        response: { 201: Envelope(WebhookEndpointWithSecret), ...errors },
        detail: {
          summary: 'Create a webhook endpoint',
          description:
            "Answers the endpoint with its signing secret (whsec_…), shown only here and on rotation. mode defaults to the calling key's; a test key " +
            'creates test endpoints only. Supports Idempotency-Key.',
        },
      },
    )
    .get('/info', () => ok(webhookInfo(ctx)), {
      permission: 'webhooks:read',
      response: { 200: Envelope(Info), ...errors },
      detail: { summary: 'Delivery facts', description: 'Outbound addresses, retry schedule, attempts, time-out, signature headers, mTLS.' },
    })
    .get('/types', ({ query }) => ok(webhookTypes(query.lang)), {
      permission: 'webhooks:read',
      query: t.Object({ lang: t.Union([t.Literal('ts'), t.Literal('go')], { default: 'ts' }) }),
      response: { 200: Envelope(t.Object({ lang: t.String(), source: t.String({ description: 'The source file' }) })), ...errors },
      detail: {
        summary: 'Event payload types',
        description: 'The event catalogue as a TypeScript discriminated union (lang=ts) or Go structs with json tags (lang=go), in data.source.',
      },
    })
    .get('/:id', async ({ caller, params }) => ok(await getEndpoint(ctx, caller, params.id)), {
      permission: 'webhooks:read',
      params: Params,
      response: { 200: Envelope(WebhookEndpoint), ...errors },
      detail: { summary: 'Get a webhook endpoint' },
    })
    .patch('/:id', async ({ caller, params, body }) => ok(await updateEndpoint(ctx, caller, params.id, body)), {
      permission: 'webhooks:write',
      params: Params,
      body: UpdateWebhookBody,
      response: { 200: Envelope(WebhookEndpoint), ...errors },
      detail: {
        summary: 'Update a webhook endpoint',
        description: 'Partial. isActive false pauses; true re-enables and clears disabledReason and failureCount. customHeaders replaces the whole list.',
      },
    })
    .delete('/:id', async ({ caller, params }) => ok(await deleteEndpoint(ctx, caller, params.id)), {
      permission: 'webhooks:write',
      params: Params,
      response: { 200: Envelope(t.Object({ id: t.String(), deleted: t.Literal(true) })), ...errors },
      detail: { summary: 'Delete a webhook endpoint', description: 'With its deliveries; retries still scheduled are dropped.' },
    })
    .get('/:id/deliveries', async ({ caller, params, query }) => ok(await listDeliveries(ctx, caller, params.id, query)), {
      permission: 'webhooks:read',
      params: Params,
      query: DeliveriesQuery,
      response: { 200: Envelope(t.Array(WebhookDelivery)), ...errors },
      detail: {
        summary: 'List deliveries',
        description:
          'Newest first, at most limit (default 50, max 200). status=failed covers deliveries still retrying and dead ones. For older pages pass the ' +
          'oldest createdAt as to.',
      },
    })
    .get('/:id/deliveries/:deliveryId', async ({ caller, params }) => ok(await getDelivery(ctx, caller, params.id, params.deliveryId)), {
      permission: 'webhooks:read',
      params: DeliveryParams,
      response: { 200: Envelope(WebhookDeliveryDetail), ...errors },
      detail: {
        summary: 'Get a delivery',
        description: 'With the exact last request (credentials and signatures redacted to a hint), the response, and every attempt.',
      },
    })
    .post(
      '/:id/deliveries/:deliveryId/replay',
      async ({ caller, params, set }) => {
        set.status = 201

        const delivery = await replayDelivery(ctx, caller, params.id, params.deliveryId)
        ctx.notifyWorker()
        return ok(delivery)
      },
      {
        permission: 'webhooks:write',
        idempotent: true,
        params: DeliveryParams,
        response: { 201: Envelope(WebhookDelivery), ...errors },
        detail: {
          summary: 'Replay a delivery',
          description:
            'A new delivery (replayOfId, new idempotency key, full retry schedule); the original is no longer replayable, and stops retrying if it ' +
            'still was. 409 endpoint_paused while the endpoint is paused or disabled. Supports Idempotency-Key.',
        },
      },
    )
    .post(
      '/:id/replay-all',
      async ({ caller, params }) => {
        const result = await replayAll(ctx, caller, params.id)
        if (result.queued) ctx.notifyWorker()
        return ok(result)
      },
      {
        permission: 'webhooks:write',
        idempotent: true,
        params: Params,
        response: { 200: Envelope(t.Object({ queued: t.Integer(), remainingDead: t.Integer(), deliveryIds: t.Array(t.String()) })), ...errors },
        detail: {
          summary: 'Replay dead deliveries',
          description:
            `Replays at most ${REPLAY_ALL_MAX} dead, replayable deliveries, oldest first, in one transaction; answers how many were queued ` +
            `and how many dead replayable ones remain. Supports Idempotency-Key.`,
        },
      },
    )
    .post('/:id/rotate-secret', async ({ caller, params, body }) => ok(await rotateSecret(ctx, caller, params.id, body?.grace ?? true)), {
      permission: 'webhooks:write',
      idempotent: true,
      params: Params,
      body: RotateSecretBody,
      response: { 200: Envelope(WebhookEndpointWithSecret), ...errors },
      detail: {
        summary: 'Rotate the signing secret',
        description:
          'The new secret is in secret, shown only here. By default the old one keeps signing for 24 hours (both signatures in each header, ' +
          'previousSecretExpiresAt); grace false stops it at once. Supports Idempotency-Key.',
      },
    })
    .post('/:id/test', async ({ caller, params }) => ok(await testEndpoint(ctx, caller, params.id)), {
      permission: 'webhooks:write',
      params: Params,
      response: { 200: Envelope(WebhookDeliveryDetail), ...errors },
      detail: {
        summary: 'Send a test ping',
        description:
          'A webhook.test event through the real sender (signatures, custom headers, mTLS), ignoring filters, template and batching; one attempt, never ' +
          'retried, answered with the outcome (status success or dead). Does not touch failureCount.',
      },
    })
}
