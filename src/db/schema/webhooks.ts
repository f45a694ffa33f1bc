// Outbound webhooks: endpoints (spec 2.5), their deliveries (spec 2.6), every attempt made for a delivery,
// and the events collected by a batch that is still open.
import { bool, index, int, json, sql, table, text, time } from '../columns'
import { workspaces } from './identity'

export interface StoredFilters {
  match: 'all' | 'any'
  events: string[] | null
  rules: { field: string; op: string; value?: unknown }[]
}

export const ENDPOINT_KINDS = ['endpoint', 'rest_hook'] as const
export type EndpointKind = (typeof ENDPOINT_KINDS)[number]

export const webhookEndpoints = table(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    name: text('name'),
    url: text('url').notNull(),
    events: json<string[]>('events').notNull(),
    format: text('format', { enum: ['standard', 'slack', 'discord'] }).notNull(),
    mode: text('mode', { enum: ['live', 'test'] }).notNull(),
    isActive: bool('is_active').notNull(),
    /** Consecutive failed attempts; reset by a success or by re-enabling. */
    failureCount: int('failure_count').notNull(),
    /** When the current run of failures began (null while the last attempt succeeded): the auto-disable clock. */
    failingSince: time('failing_since'),
    disabledReason: text('disabled_reason'),
    /** Sent with every delivery; the values are never answered by the API. */
    customHeaders: json<{ name: string; value: string }[]>('custom_headers').notNull(),
    filters: json<StoredFilters | null>('filters'),
    transform: json<{ kind: 'template'; template: Record<string, unknown> } | null>('transform'),
    batchEnabled: bool('batch_enabled').notNull(),
    batchWindowSeconds: int('batch_window_seconds').notNull(),
    maxConcurrent: int('max_concurrent').notNull(),
    mtlsEnabled: bool('mtls_enabled').notNull(),
    secret: text('secret').notNull(),
    /** The secret before the last rotation, still signing until previousSecretExpiresAt. */
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: time('previous_secret_expires_at'),
    lastSuccessAt: time('last_success_at'),
    createdAt: time('created_at').notNull(),
    updatedAt: time('updated_at').notNull(),
    /** endpoint: a webhook endpoint (/webhooks); rest_hook: an automation subscription (/zapier/subscriptions). */
    kind: text('kind', { enum: ENDPOINT_KINDS }).notNull().default('endpoint'),
    /**
     * When a REST-hook subscription was removed (unsubscribed, or its target answered 410). The row stays as a
     * tombstone, inactive and without its secret, so a second unsubscribe still answers 204.
     */
    deletedAt: time('deleted_at'),
  },
  (t) => [index('webhook_endpoints_fanout_idx').on(t.workspaceId, t.mode, t.isActive)],
)

export const DELIVERY_STATUSES = ['pending', 'success', 'failed', 'dead'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

export const webhookDeliveries = table(
  'webhook_deliveries',
  {
    /** Time-ordered (sortableId), so "newest first" is the primary key order. */
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    workspaceId: text('workspace_id').notNull(),
    /** The event type, or `batch` for a batch delivery. */
    event: text('event').notNull(),
    /** evt_… of the event carried; null for batches (their events carry their own ids). */
    eventId: text('event_id'),
    /** The event envelope, or the batch object once the batch is closed (null while it collects). */
    payload: json<Record<string, unknown> | null>('payload'),
    status: text('status', { enum: DELIVERY_STATUSES }).notNull(),
    /** Attempts made so far. */
    attempt: int('attempt').notNull(),
    maxAttempts: int('max_attempts').notNull(),
    batchSize: int('batch_size').notNull(),
    /** A batch still collecting events; it closes at batchClosesAt or at the size cap. */
    batchOpen: bool('batch_open').notNull(),
    batchClosesAt: time('batch_closes_at'),
    responseStatus: int('response_status'),
    durationMs: int('duration_ms'),
    nextAttemptAt: time('next_attempt_at'),
    deliveredAt: time('delivered_at'),
    errorMessage: text('error_message'),
    replayOfId: text('replay_of_id'),
    replayable: bool('replayable').notNull(),
    /** A test ping: one attempt, never retried, never counted against the endpoint. */
    isPing: bool('is_ping').notNull(),
    /** `webhook-id` of every attempt: kept across retries, new on replay (receivers dedupe by it). */
    idempotencyKey: text('idempotency_key').notNull(),
    createdAt: time('created_at').notNull(),
    updatedAt: time('updated_at').notNull(),
  },
  (t) => [
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
    index('webhook_deliveries_status_idx').on(t.endpointId, t.status, t.createdAt),
    // Only open batches (at most one per endpoint) are looked up by this: a partial index costs the fan-out's
    // inserts nothing.
    index('webhook_deliveries_open_batch_idx').on(t.endpointId).where(sql`${t.batchOpen} = 1`),
  ],
)

/** One HTTP attempt of a delivery: the exact request (credentials redacted) and what came back. */
export const webhookAttempts = table(
  'webhook_attempts',
  {
    id: text('id').primaryKey(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: int('attempt').notNull(),
    startedAt: time('started_at').notNull(),
    durationMs: int('duration_ms'),
    request: json<{ method: string; url: string; headers: Record<string, string>; body: string }>('request').notNull(),
    responseStatus: int('response_status'),
    responseHeaders: json<Record<string, string> | null>('response_headers'),
    responseBody: text('response_body'),
    responseBodyTruncated: bool('response_body_truncated').notNull(),
    error: text('error'),
    /** The address actually dialled. */
    address: text('address'),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.attempt)],
)

/** Events waiting in an open batch delivery, in arrival order; moved into its payload when it closes. */
export const webhookBatchEvents = table(
  'webhook_batch_events',
  {
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    position: int('position').notNull(),
    envelope: json<Record<string, unknown>>('envelope').notNull(),
  },
  (t) => [index('webhook_batch_events_delivery_idx').on(t.deliveryId, t.position)],
)
