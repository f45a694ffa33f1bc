// Tables the platform itself runs on: the events outbox, durable jobs and idempotency records.
import { index, int, json, table, text, time, uniqueIndex } from '../columns'

/** Every state change others must hear about, written in the transaction that made it, in order (seq). */
export const outbox = table(
  'outbox',
  {
    seq: int('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull(),
    type: text('type').notNull(),
    mode: text('mode', { enum: ['live', 'test'] }).notNull(),
    workspaceId: text('workspace_id').notNull(),
    data: json<Record<string, unknown>>('data').notNull(),
    createdAt: time('created_at').notNull(),
  },
  (t) => [uniqueIndex('outbox_id_unique').on(t.id)],
)

/**
 * How far the outbox has been handed to consumers: one row, the last dispatched seq. A cursor rather than
 * a mark per event, so dispatch is one small write however many events there are.
 */
export const outboxCursor = table('outbox_cursor', {
  name: text('name').primaryKey(),
  seq: int('seq').notNull(),
  updatedAt: time('updated_at').notNull(),
})

export const JOB_STATUSES = ['pending', 'running', 'done', 'dead'] as const
export type JobStatus = (typeof JOB_STATUSES)[number]

/** Durable work: claimed atomically, retried with backoff, resumed after a crash when its lease lapses. */
export const jobs = table(
  'jobs',
  {
    id: text('id').primaryKey(),
    type: text('type').notNull(),
    payload: json<unknown>('payload').notNull(),
    status: text('status', { enum: JOB_STATUSES }).notNull(),
    runAt: time('run_at').notNull(),
    attempts: int('attempts').notNull(),
    maxAttempts: int('max_attempts').notNull(),
    /** Dedupe key: at most one job with this key exists (periodic triggers, batch windows). */
    uniqueKey: text('unique_key'),
    lockedBy: text('locked_by'),
    lockedUntil: time('locked_until'),
    lastError: text('last_error'),
    createdAt: time('created_at').notNull(),
    updatedAt: time('updated_at').notNull(),
  },
  (t) => [index('jobs_due_idx').on(t.status, t.runAt), uniqueIndex('jobs_unique_key_unique').on(t.uniqueKey)],
)

/** A POST's stored answer under its Idempotency-Key, per API key, for 24 hours. */
export const idempotencyRecords = table(
  'idempotency_records',
  {
    id: text('id').primaryKey(),
    apiKeyId: text('api_key_id').notNull(),
    key: text('key').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    requestHash: text('request_hash').notNull(),
    /** Null while the first request is still being processed. */
    responseStatus: int('response_status'),
    responseBody: text('response_body'),
    createdAt: time('created_at').notNull(),
    expiresAt: time('expires_at').notNull(),
  },
  (t) => [uniqueIndex('idempotency_key_unique').on(t.apiKeyId, t.key), index('idempotency_expires_idx').on(t.expiresAt)],
)
