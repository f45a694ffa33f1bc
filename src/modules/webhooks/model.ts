// TypeBox schemas of the webhooks area: the endpoint of spec 2.5, the delivery of spec 2.6 and the request
// bodies. Shape and ranges are checked here; rules that need more than a schema (URL safety, event names,
// filter rules, templates, header names) are checked by the service so every problem is named at once.
import { t, type Static } from 'elysia'
import type { EventDefinition } from '../../events/catalogue'
import { checkedByService } from '../../http/published-schema'
import { CONVERSION_EVENTS } from '../conversions/model'
import { DOMAIN_EVENTS } from '../domains/model'
import { FOLDER_EVENTS } from '../folders/model'
import { LINK_EVENTS } from '../links/model'
import { PAGE_EVENTS } from '../pages/model'
import { TAG_EVENTS } from '../tags/model'

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T, options: Record<string, unknown> = {}) => t.Union([schema, t.Null()], options)

export const WEBHOOK_EVENTS: EventDefinition[] = [
  {
    type: 'webhook.test',
    description: 'A test ping sent on request to check an endpoint.',
    data: t.Object({ endpointId: t.String(), message: t.String() }),
  },
]

/**
 * The event catalogue (contract section 5): every type an endpoint can subscribe to, with the JSON Schema of
 * its `data`, as the modules that publish them declare them (each module also registers its own with the
 * outbox, Module.events). /webhooks/types and /zapier/samples are generated from these schemas.
 */
export const EVENT_CATALOGUE: readonly EventDefinition[] = [
  ...LINK_EVENTS,
  ...TAG_EVENTS,
  ...FOLDER_EVENTS,
  ...CONVERSION_EVENTS,
  ...DOMAIN_EVENTS,
  ...PAGE_EVENTS,
  ...WEBHOOK_EVENTS,
]

const CATALOGUE_TYPES = EVENT_CATALOGUE.map((e) => e.type)
/** `area.*` for every dot prefix of a catalogue type: the patterns the service accepts besides `*`. */
const EVENT_AREA_PATTERNS = [...new Set(CATALOGUE_TYPES.flatMap((type) => [...type.matchAll(/\./g)].map((m) => `${type.slice(0, m.index + 1)}*`)))]

/** One entry of an `events` list: a catalogue type, `*`, or `area.*` (exactly what the service accepts). */
export const EventPattern = checkedByService({
  type: 'string',
  anyOf: [
    { enum: CATALOGUE_TYPES, description: 'An event type of the catalogue' },
    { enum: ['*', ...EVENT_AREA_PATTERNS], description: '* for every event, or area.* for every event of an area' },
  ],
})

export const FILTER_OPS = ['eq', 'neq', 'in', 'nin', 'contains', 'not_contains', 'starts_with', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'] as const

export const Format = t.Union([t.Literal('standard'), t.Literal('slack'), t.Literal('discord')], {
  description: 'standard: the event envelope (or the template output); slack / discord: a message for an incoming webhook of that service',
})
export const Mode = t.Union([t.Literal('live'), t.Literal('test')])

export const FilterRule = t.Object(
  {
    field: t.String({ minLength: 1, maxLength: 200, description: 'Dot path into the event envelope, e.g. data.link.domain' }),
    op: t.Union(FILTER_OPS.map((op) => t.Literal(op))),
    value: t.Optional(t.Unknown()),
  },
  { additionalProperties: false },
)

/** Stored filters as answered; sent ones may leave fields out (FiltersInput). One schema for both. */
export const Filters = t.Object(
  {
    match: t.Union([t.Literal('all'), t.Literal('any')], { description: 'all: every rule must hold; any: one is enough. Default all' }),
    events: Nullable(t.Array(EventPattern, { minItems: 1, maxItems: 100 }), {
      description: 'Further narrows the endpoint events (same patterns), or null (the default)',
    }),
    rules: t.Array(FilterRule, { maxItems: 50, description: 'Default none' }),
  },
  { additionalProperties: false },
)

/** Filters in a request body: match, events and rules may be left out (all, null, none). */
const FiltersInput = t.Partial(Filters)

export const Transform = t.Object(
  {
    kind: t.Literal('template'),
    template: t.Record(t.String(), t.Unknown(), { description: 'A JSON object; strings may hold {{path}} placeholders into the event envelope' }),
  },
  { additionalProperties: false },
)

export const CustomHeader = t.Object(
  { name: t.String({ minLength: 1, maxLength: 100 }), value: t.String({ maxLength: 2000 }) },
  { additionalProperties: false },
)

export const WebhookEndpoint = t.Object(
  {
    id: t.String({ description: 'whe_…' }),
    name: Nullable(t.String()),
    url: t.String(),
    events: t.Array(EventPattern, { description: 'Event types or patterns (*, link.*)' }),
    format: Format,
    mode: Mode,
    isActive: t.Boolean({ description: 'false: paused by a caller, or disabled by the service (disabledReason says why)' }),
    failureCount: t.Integer({ description: 'Consecutive failed attempts; reset by a success' }),
    disabledReason: Nullable(t.String()),
    customHeaderNames: t.Array(t.Object({ name: t.String(), hint: t.String() }), { description: 'Header values are never returned' }),
    filters: Nullable(Filters),
    transform: Nullable(Transform),
    batchEnabled: t.Boolean(),
    batchWindowSeconds: t.Integer(),
    maxConcurrent: t.Integer(),
    mtlsEnabled: t.Boolean(),
    previousSecretExpiresAt: Nullable(t.String({ format: 'date-time' }), { description: 'Until then the secret before the last rotation still signs' }),
    createdAt: t.String({ format: 'date-time' }),
    updatedAt: t.String({ format: 'date-time' }),
  },
  { title: 'WebhookEndpoint' },
)

export const WebhookEndpointWithSecret = t.Composite(
  [WebhookEndpoint, t.Object({ secret: t.String({ description: 'whsec_…: shown only in this response' }) })],
  {
    title: 'WebhookEndpointWithSecret',
  },
)

export const URL_MAX_LENGTH = 2048

const settings = {
  name: t.Optional(Nullable(t.String({ maxLength: 100 }))),
  url: checkedByService(
    t.String({
      format: 'uri',
      minLength: 1,
      maxLength: URL_MAX_LENGTH,
      description:
        'An absolute https URL (http only with LNK_WEBHOOK_ALLOW_HTTP), without credentials; public addresses only unless LNK_WEBHOOK_ALLOWED_CIDRS ' +
        'allows the range',
    }),
  ),
  events: t.Array(EventPattern, { minItems: 1, maxItems: 50, description: 'Event types of the catalogue, * or area.* patterns' }),
  format: t.Optional(Format),
  isActive: t.Optional(t.Boolean()),
  customHeaders: t.Optional(t.Array(CustomHeader, { maxItems: 20, description: 'Write-only; replaces the whole list' })),
  filters: t.Optional(
    checkedByService(Nullable(FiltersInput, { description: 'Narrows which events of the events list are sent (match, events, rules), or null for no filter' })),
  ),
  transform: t.Optional(Nullable(Transform)),
  batchEnabled: t.Optional(t.Boolean()),
  batchWindowSeconds: t.Optional(t.Integer({ minimum: 1, maximum: 300 })),
  maxConcurrent: t.Optional(t.Integer({ minimum: 1, maximum: 10 })),
  mtlsEnabled: t.Optional(t.Boolean({ description: 'Present the operator-configured client certificate (LNK_WEBHOOK_CLIENT_CERT)' })),
}

export const CreateWebhookBody = t.Object({ ...settings, mode: t.Optional(Mode) }, { additionalProperties: false })

export const UpdateWebhookBody = t.Object(
  { ...settings, url: t.Optional(settings.url), events: t.Optional(settings.events) },
  { additionalProperties: false, minProperties: 1 },
)

export type CreateWebhookInput = Static<typeof CreateWebhookBody>
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>

export const RotateSecretBody = t.Optional(
  t.Object(
    { grace: t.Optional(t.Boolean({ description: 'true (default): the old secret keeps signing for 24 h; false: it stops at once' })) },
    { additionalProperties: false },
  ),
)

export const DeliveryStatus = t.Union([t.Literal('pending'), t.Literal('success'), t.Literal('failed'), t.Literal('dead')])

export const WebhookDelivery = t.Object(
  {
    id: t.String({ description: 'dlv_…' }),
    endpointId: t.String(),
    event: t.String({ description: 'The event type, or batch' }),
    eventId: Nullable(t.String()),
    status: DeliveryStatus,
    responseStatus: Nullable(t.Integer()),
    duration: Nullable(t.Integer({ description: 'Milliseconds of the last attempt' })),
    attempt: t.Integer({ description: 'Attempts made so far' }),
    maxAttempts: t.Integer(),
    batchSize: t.Integer({ description: 'Events carried (1 unless batched)' }),
    nextAttemptAt: Nullable(t.String({ format: 'date-time' })),
    deliveredAt: t.Optional(t.String({ format: 'date-time', description: 'When the delivery succeeded; absent until it has' })),
    errorMessage: Nullable(t.String()),
    replayOfId: Nullable(t.String()),
    replayable: t.Boolean(),
    idempotencyKey: t.String({ description: 'Sent as webhook-id: the same on every retry, new on replay; receivers dedupe by it' }),
    createdAt: t.String({ format: 'date-time' }),
  },
  { title: 'WebhookDelivery' },
)

const SentRequest = t.Object({ method: t.String(), url: t.String(), headers: t.Record(t.String(), t.String()), body: t.String() })
const ReceivedResponse = t.Object({ status: Nullable(t.Integer()), headers: t.Record(t.String(), t.String()), body: t.String(), bodyTruncated: t.Boolean() })

export const WebhookAttempt = t.Object({
  attempt: t.Integer(),
  startedAt: t.String({ format: 'date-time' }),
  duration: Nullable(t.Integer()),
  responseStatus: Nullable(t.Integer()),
  errorMessage: Nullable(t.String()),
  address: Nullable(t.String()),
})

export const WebhookDeliveryDetail = t.Composite(
  [
    WebhookDelivery,
    t.Object({
      payload: Nullable(t.Record(t.String(), t.Unknown()), { description: 'The event envelope or batch object (before template or format)' }),
      request: Nullable(SentRequest, { description: 'The last request exactly as sent; credential and signature headers redacted to a hint' }),
      response: Nullable(ReceivedResponse, { description: 'The last response (body up to 16 KiB)' }),
      attempts: t.Array(WebhookAttempt),
    }),
  ],
  { title: 'WebhookDeliveryDetail' },
)

export const DeliveriesQuery = t.Object({
  status: t.Optional(t.Union([t.Literal('all'), DeliveryStatus], { description: 'failed covers deliveries still retrying and dead ones' })),
  event: t.Optional(t.String({ maxLength: 100 })),
  from: t.Optional(t.String({ format: 'date-time', description: 'Created at or after' })),
  to: t.Optional(t.String({ format: 'date-time', description: 'Created before (also the cursor for older pages)' })),
  q: t.Optional(t.String({ maxLength: 200, description: 'Event type, ids or body text' })),
  since: t.Optional(t.String({ format: 'date-time', description: 'Only deliveries created after this, for polling' })),
  limit: t.Integer({ minimum: 1, maximum: 200, default: 50 }),
})
