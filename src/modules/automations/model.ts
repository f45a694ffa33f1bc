// TypeBox schemas of the automations area: REST-hook subscriptions (spec 4.5, contract section 6) and the
// samples query. The event and hook address are checked by the service, so that the answer names the field
// that was sent (hookUrl, targetUrl, target_url or url) and lists the events that can be subscribed to.
import { t } from 'elysia'
import { checkedByService } from '../../http/published-schema'
import { EVENT_CATALOGUE, URL_MAX_LENGTH } from '../webhooks/model'

/** webhook.test is a ping sent on request to one endpoint, never an event a subscription could receive. */
export const SUBSCRIBABLE_EVENTS: readonly string[] = EVENT_CATALOGUE.map((e) => e.type).filter((type) => type !== 'webhook.test')

/** The names a hook address arrives under: Zapier's guides use hookUrl / targetUrl / target_url, Make url. */
export const HOOK_URL_FIELDS = ['hookUrl', 'targetUrl', 'target_url', 'url'] as const

/** Active subscriptions per workspace (both modes); a Zap or scenario holds one per trigger. */
export const MAX_SUBSCRIPTIONS = 500

const hookUrl = (description: string) =>
  t.Optional(
    checkedByService({
      type: 'string',
      format: 'uri',
      minLength: 1,
      maxLength: URL_MAX_LENGTH,
      description:
        `${description} An absolute https URL (http only with LNK_WEBHOOK_ALLOW_HTTP), public addresses only unless ` +
        `LNK_WEBHOOK_ALLOWED_CIDRS allows the range.`,
    }),
  )

export const SubscribeBody = t.Object(
  {
    event: checkedByService({ type: 'string', enum: [...SUBSCRIBABLE_EVENTS], description: 'The event type to receive' }),
    hookUrl: hookUrl('Where each event is POSTed. Exactly one of hookUrl, targetUrl, target_url and url is required (or several with the same value).'),
    targetUrl: hookUrl('Another name for hookUrl.'),
    target_url: hookUrl('Another name for hookUrl.'),
    url: hookUrl('Another name for hookUrl.'),
  },
  { additionalProperties: false },
)

export const Subscription = t.Object(
  {
    id: t.String({ description: 'hook_…; also the endpointId of its deliveries' }),
    event: t.String(),
    hookUrl: t.String(),
    mode: t.Union([t.Literal('live'), t.Literal('test')], {
      description: 'The mode of the key that subscribed: a test subscription receives test events only',
    }),
    isActive: t.Boolean({ description: 'false once failures disabled it (disabledReason says why); subscribe again to resume' }),
    failureCount: t.Integer({ description: 'Consecutive failed calls; reset by a success' }),
    disabledReason: t.Union([t.String(), t.Null()]),
    createdAt: t.String({ format: 'date-time' }),
  },
  { title: 'AutomationSubscription' },
)

export const SubscriptionWithSecret = t.Composite(
  [Subscription, t.Object({ secret: t.String({ description: 'whsec_…: signs every call to this hook; shown only in this response' }) })],
  {
    title: 'AutomationSubscriptionWithSecret',
  },
)

export const SamplesQuery = t.Object({
  event: t.Optional(
    checkedByService({
      type: 'string',
      enum: EVENT_CATALOGUE.map((e) => e.type),
      description: 'An event type; without it, the catalogue with one sample per event',
    }),
  ),
  flat: t.Optional(
    checkedByService({ type: 'string', enum: ['0', '1'], description: '1: nested keys flattened with __ (data__link__id), as Zapier names fields' }),
  ),
})

/** A sample is an event envelope (or, for the catalogue, {event, description, sample}); flat=1 changes its keys. */
export const Sample = t.Record(t.String(), t.Unknown(), { title: 'AutomationSample' })
