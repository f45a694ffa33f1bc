// /v1/zapier/…: REST-hook subscriptions, their deliveries, and samples. Thin routes over the service.
import { Elysia, t } from 'elysia'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import { DeliveriesQuery, WebhookDelivery, WebhookDeliveryDetail } from '../webhooks/model'
import type { HttpKit } from '../identity'
import { Sample, SamplesQuery, SubscribeBody, Subscription, SubscriptionWithSecret } from './model'
import { listSamples } from './samples'
import { listSubscriptions, subscribe, subscriptionDeliveries, subscriptionDelivery, unsubscribe, type AutomationsCtx } from './service'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope }
const Params = t.Object({ id: t.String() })

export function automationRoutes(ctx: AutomationsCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.automations', seed: http.instanceId, prefix: '/zapier', tags: ['Automations'] })
    .use(http.auth)
    .get('/subscriptions', async ({ caller }) => ok(await listSubscriptions(ctx, caller)), {
      permission: 'automations:read',
      response: { 200: Envelope(t.Array(Subscription)), ...errors },
      detail: {
        summary: 'List automation subscriptions',
        description: "Oldest first, of the calling key's mode; unsubscribed and removed ones are not listed. Secrets are never returned.",
      },
    })
    .post(
      '/subscriptions',
      async ({ caller, body, set }) => {
        set.status = 201
        return ok(await subscribe(ctx, caller, body))
      },
      {
        permission: 'automations:write',
        idempotent: true,
        body: SubscribeBody,
        response: { 201: Envelope(SubscriptionWithSecret), ...errors },
        detail: {
          summary: 'Subscribe a REST hook',
          description:
            "Zapier's performSubscribe or Make's attach: every event of this type in the calling key's workspace and mode is POSTed to the hook URL as " +
            'the event envelope, signed with secret (shown only here) like a webhook delivery and retried on the webhook schedule. A target ' +
            'answering 410 removes the subscription. Keep data.id to unsubscribe. Supports Idempotency-Key.',
        },
      },
    )
    .delete(
      '/subscriptions/:id',
      async ({ caller, params, set }) => {
        await unsubscribe(ctx, caller, params.id)
        set.status = 204
        return null
      },
      {
        permission: 'automations:write',
        params: Params,
        response: { 204: t.Null({ description: 'Unsubscribed (also when it was already); no body' }), ...errors },
        detail: {
          summary: 'Unsubscribe a REST hook',
          description:
            'Idempotent: 204 also for a subscription already unsubscribed or removed by a 410; 404 only for an id this workspace never had. Calls still ' +
            'waiting to be made are dropped (their deliveries become dead).',
        },
      },
    )
    .get('/subscriptions/:id/deliveries', async ({ caller, params, query }) => ok(await subscriptionDeliveries(ctx, caller, params.id, query)), {
      permission: 'automations:read',
      params: Params,
      query: DeliveriesQuery,
      response: { 200: Envelope(t.Array(WebhookDelivery)), ...errors },
      detail: {
        summary: "List a subscription's deliveries",
        description:
          'As GET /webhooks/{id}/deliveries: newest first, at most limit (default 50, max 200); status=failed covers deliveries still retrying and dead ' +
          'ones. Also answers for a removed subscription.',
      },
    })
    .get('/subscriptions/:id/deliveries/:deliveryId', async ({ caller, params }) => ok(await subscriptionDelivery(ctx, caller, params.id, params.deliveryId)), {
      permission: 'automations:read',
      params: t.Object({ id: t.String(), deliveryId: t.String() }),
      response: { 200: Envelope(WebhookDeliveryDetail), ...errors },
      detail: {
        summary: "Get a subscription's delivery",
        description: 'With the exact last request (signatures redacted to a hint), the response, and every attempt.',
      },
    })
    .get('/samples', async ({ caller, query }) => ok(await listSamples(ctx.samples, caller, query as { event?: string; flat?: string })), {
      permission: 'automations:read',
      query: SamplesQuery,
      response: { 200: Envelope(t.Array(Sample)), ...errors },
      detail: {
        summary: 'Sample events',
        description:
          "Zapier's performList. With event: at most 3 envelopes of that type, newest first, each with its id: the most recent real events of the " +
          "calling key's workspace and mode, else one synthetic envelope marked sample: true. Without event: [{event, description, sample}] for " +
          'the whole catalogue. flat=1 flattens nested keys with __.',
      },
    })
}
