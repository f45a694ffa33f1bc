// The webhooks area's port: what the service, the deliver job and the fan-out ask of storage, in plain types
// (repo.ts answers it on either engine; repo-attempts.ts records attempts, repo-fanout.ts holds the fan-out's
// statements).
import type { Insertable } from '../../db/rows'

// The columns' own types, as the webhooks tables declare them (the row type checks keep the two equal).

/** An endpoint's filters as stored (filters.ts's WebhookFilters, validated). */
export interface StoredFilters {
  match: 'all' | 'any'
  events: string[] | null
  rules: { field: string; op: string; value?: unknown }[]
}

/** endpoint (/webhooks) or rest_hook (an automation subscription, /zapier/subscriptions). */
export type EndpointKind = 'endpoint' | 'rest_hook'

export type DeliveryStatus = 'pending' | 'success' | 'failed' | 'dead'

/** Every field of spec 2.5, the signing secrets, custom header values and the failure run. */
export interface EndpointRow {
  id: string
  workspaceId: string
  name: string | null
  url: string
  events: string[]
  format: 'standard' | 'slack' | 'discord'
  mode: 'live' | 'test'
  isActive: boolean
  /** Consecutive failed attempts; reset by a success or by re-enabling. */
  failureCount: number
  /** When the current run of failures began (null while the last attempt succeeded). */
  failingSince: number | null
  disabledReason: string | null
  customHeaders: { name: string; value: string }[]
  filters: StoredFilters | null
  transform: { kind: 'template'; template: Record<string, unknown> } | null
  batchEnabled: boolean
  batchWindowSeconds: number
  maxConcurrent: number
  mtlsEnabled: boolean
  secret: string
  /** The secret before the last rotation, still signing until previousSecretExpiresAt. */
  previousSecret: string | null
  previousSecretExpiresAt: number | null
  lastSuccessAt: number | null
  createdAt: number
  updatedAt: number
  /** endpoint (/webhooks) or rest_hook (an automation subscription, /zapier/subscriptions). */
  kind: EndpointKind
  /** When a REST-hook subscription was removed; its row stays as an inactive tombstone. */
  deletedAt: number | null
}

/** Spec 2.6: one event (or batch) on its way to one endpoint. */
export interface DeliveryRow {
  id: string
  endpointId: string
  workspaceId: string
  /** The event type, or `batch` for a batch delivery. */
  event: string
  /** evt_… of the event carried; null for batches. */
  eventId: string | null
  /** The event envelope, or the batch object once the batch is closed (null while it collects). */
  payload: Record<string, unknown> | null
  status: DeliveryStatus
  /** Attempts made so far. */
  attempt: number
  maxAttempts: number
  batchSize: number
  /** A batch still collecting events. */
  batchOpen: boolean
  batchClosesAt: number | null
  responseStatus: number | null
  durationMs: number | null
  nextAttemptAt: number | null
  deliveredAt: number | null
  errorMessage: string | null
  replayOfId: string | null
  replayable: boolean
  /** A test ping: one attempt, never retried, never counted against the endpoint. */
  isPing: boolean
  /** `webhook-id` of every attempt: kept across retries, new on replay. */
  idempotencyKey: string
  createdAt: number
  updatedAt: number
}

/** One HTTP attempt of a delivery: the exact request (credentials redacted) and what came back. */
export interface AttemptRow {
  id: string
  deliveryId: string
  attempt: number
  startedAt: number
  durationMs: number | null
  request: { method: string; url: string; headers: Record<string, string>; body: string }
  responseStatus: number | null
  responseHeaders: Record<string, string> | null
  responseBody: string | null
  responseBodyTruncated: boolean
  error: string | null
  /** The address actually dialled. */
  address: string | null
}

/** kind may be left out: the column defaults to endpoint. */
export type NewEndpoint = Insertable<Omit<EndpointRow, 'kind'>> & { kind?: EndpointKind }
export type NewDelivery = Insertable<DeliveryRow>
export type NewAttempt = Insertable<AttemptRow>

export const DELIVER_JOB = 'webhook.deliver'

/**
 * Deliver jobs never use the queue's own retries (a handler only throws when the database fails): the
 * delivery's schedule lives in the delivery row, and each attempt enqueues the next.
 */
export const DELIVER_JOB_MAX_ATTEMPTS = 1_000

/** What a deliver job carries: the delivery and the attempt it is to make (a stale job finds it made). */
export interface DeliverPayload {
  deliveryId: string
  attempt: number
}

export interface DeliveryFilter {
  endpointId: string
  statuses?: string[]
  event?: string
  from?: number
  to?: number
  since?: number
  q?: string
  limit: number
}

/** What an attempt writes on its delivery. */
export interface DeliveryResult {
  attempt: number
  status: DeliveryStatus
  responseStatus: number | null
  durationMs: number
  nextAttemptAt: number | null
  /** Set on success; absent, it stays as it was. */
  deliveredAt?: number | null
  errorMessage: string | null
  updatedAt: number
}

export interface AttemptOutcome {
  attempt: NewAttempt
  delivery: DeliveryResult
  /** What the attempt means for the endpoint's counters; null for test pings, which never count. */
  endpoint: { kind: 'success' } | { kind: 'failure' } | { kind: 'gone'; reason: string } | null
  /** The next attempt's job, when one is scheduled. */
  next: { payload: DeliverPayload; runAt: number } | null
}

/** One attempt to record, and the job that made it when that job completes with the recording. */
export interface AttemptRecord {
  deliveryId: string
  endpointId: string
  outcome: AttemptOutcome
  now: number
  job: { id: string; workerId: string } | null
}

/** When a run of failures disables an endpoint: this many in a row, the first at least `afterMs` ago. */
export interface AutoDisable {
  failures: number
  afterMs: number
  reason: string
}

export interface WebhooksRepo {
  insertEndpoint(row: NewEndpoint): Promise<EndpointRow>
  findEndpoint(workspaceId: string, id: string): Promise<EndpointRow | undefined>
  endpointById(id: string): Promise<EndpointRow | undefined>
  /** Oldest first; REST-hook tombstones are left out. */
  listEndpoints(workspaceId: string, kind: EndpointKind, mode?: 'live' | 'test'): Promise<EndpointRow[]>
  /** Live (not removed) endpoints of this kind in the workspace. */
  countEndpoints(workspaceId: string, kind: EndpointKind): Promise<number>
  updateEndpoint(id: string, patch: Partial<NewEndpoint>): Promise<EndpointRow | undefined>
  /**
   * Replaces the signing secret in one statement; the secret it replaces (the row's, not one read earlier, so
   * rotations at once chain) keeps signing until `previousUntil`, or stops at once when that is null.
   * Undefined when the endpoint is gone.
   */
  rotateSecret(id: string, secret: string, previousUntil: number | null, now: number): Promise<EndpointRow | undefined>
  /** Deletes the endpoint with its deliveries; false when it was gone already. */
  deleteEndpoint(id: string): Promise<boolean>
  /**
   * Removes a REST-hook subscription and keeps its row as a tombstone (inactive, secret blanked); its
   * deliveries still waiting become dead in the same transaction. False when it was removed already.
   */
  removeRestHook(id: string, reason: string, now: number): Promise<boolean>

  findDelivery(endpointId: string, id: string): Promise<DeliveryRow | undefined>
  deliveryById(id: string): Promise<DeliveryRow | undefined>
  /** Newest first; `q` matches event, ids, webhook-id and payload, case-insensitively. */
  listDeliveries(f: DeliveryFilter): Promise<DeliveryRow[]>
  /** The delivery's attempts, in order. */
  attempts(deliveryId: string): Promise<AttemptRow[]>
  countDeadReplayable(endpointId: string): Promise<number>
  /** A new delivery and the job of its first attempt (test pings pass no job). */
  insertDelivery(row: NewDelivery, job: { runAt: number } | null, now: number): Promise<DeliveryRow>
  /**
   * Replays: each original stops (a delivery still retrying gives up: the copy supersedes it) and is no
   * longer replayable; each copy is queued for its first attempt. All or nothing.
   */
  replay(copies: { originalId: string; row: NewDelivery }[], now: number): Promise<DeliveryRow[]>
  /** Up to `limit` dead, replayable deliveries of the endpoint, oldest first. */
  deadReplayable(endpointId: string, limit: number): Promise<DeliveryRow[]>
  /**
   * Closes an open batch: its collected events become the payload. Answers the delivery (closed now or
   * before), so the fan-out cannot add an event between the close and the read.
   */
  closeBatch(deliveryId: string, now: number): Promise<DeliveryRow | undefined>
  /**
   * Records one attempt and everything it decides, in one transaction; the endpoint's counters move in
   * the database (attempts of one endpoint run concurrently). Answers whether the endpoint was disabled by
   * it, or null when the delivery is gone: its endpoint was deleted while the request was out, taking its
   * deliveries along, so the outcome has nothing to belong to and nothing is written.
   */
  recordAttempt(deliveryId: string, endpointId: string, outcome: AttemptOutcome, now: number, autoDisable: AutoDisable): Promise<boolean | null>
  /**
   * recordAttempt for many attempts in one transaction, each completing the job that made it (`job`: the
   * job and the worker holding its lease) in that same transaction. Answers what recordAttempt would, per
   * attempt, in order.
   */
  recordAttempts(records: AttemptRecord[], autoDisable: AutoDisable): Promise<(boolean | null)[]>
  /** A delivery that will not be attempted (its endpoint is paused or gone): dead, replayable later. */
  abandon(deliveryId: string, reason: string, now: number): Promise<void>
  /** Puts an attempt off (concurrency caps): the same attempt, a little later. */
  defer(payload: DeliverPayload, runAt: number, now: number): Promise<void>
  /**
   * Deletes deliveries that reached a final state (success, dead) before `before`, with their attempts, in
   * short transactions so writers never wait long. Deliveries still pending or retrying stay whatever
   * their age. Answers how many.
   */
  pruneDeliveries(before: number): Promise<number>
}

/** A delivery the fan-out creates: the envelope comes serialized, once per event for all its endpoints. */
export type FanoutDelivery = {
  id: string
  endpointId: string
  workspaceId: string
  event: string
  eventId: string | null
  payloadJson: string | null
  maxAttempts: number
  batchSize: number
  batchOpen: boolean
  batchClosesAt: number | null
  nextAttemptAt: number
  idempotencyKey: string
  now: number
}

/** An endpoint's maxConcurrent counted across every node (PostgreSQL: repo-slots-pg.ts). */
export interface DeliverySlots {
  /** Takes a free one of the endpoint's `max` slots: its number, or null when all are taken (on any node). */
  take(endpointId: string, max: number): Promise<number | null>
  release(endpointId: string, slot: number): Promise<void>
  /** Frees every slot this node holds and gives the connection back. */
  close(): Promise<void>
}
