// Queries of the webhooks area. A delivery's state and the job that carries its next attempt are always
// written in one transaction, so a delivery is never waiting without a job nor a job left without a reason.
// The fan-out statements are the synchronous exception: they run inside the outbox dispatch transaction.
// The ports come first (plain types; Promises, so another database can sit behind the same signatures);
// the SQLite implementation follows them.
import { and, asc, count, desc, eq, getTableColumns, gt, gte, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { hotStatement } from '../../db/hot'
import { escapeLike } from '../../db/like'
import type { Insertable } from '../../db/rows'
import { webhookAttempts, webhookBatchEvents, webhookDeliveries, webhookEndpoints, type DeliveryStatus, type EndpointKind, type StoredFilters } from '../../db/schema'
import type { Tx } from '../../db/tx'
import { retryWhileBusy } from '../../jobs/busy'
import { enqueue, preparedComplete, preparedEnqueue } from '../../jobs/queue'

export type { DeliveryStatus, EndpointKind, StoredFilters }

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

/**
 * The fan-out's statements. Synchronous on purpose: they run inside the outbox dispatch transaction, whose
 * callback is synchronous, on the connection that dispatches (link.clicked arrives by the thousand a second).
 */
export interface FanoutStatements {
  activeEndpoints(workspaceId: string, mode: string): EndpointRow[]
  insertDelivery(d: FanoutDelivery): void
  /** The endpoint's open batch (at most one), with the events it holds so far. */
  openBatch(endpointId: string): { id: string; batchSize: number } | null
  addBatchEvent(deliveryId: string, position: number, envelopeJson: string, now: number): void
  closeBatch(deliveryId: string, now: number): void
  enqueueDeliver(payload: DeliverPayload, runAt: number, now: number): void
}

// --- SQLite ------------------------------------------------------------------------------------------

/**
 * Deliver jobs never use the queue's own retries (a handler only throws when the database fails): the
 * delivery's schedule lives in the delivery row, and each attempt enqueues the next.
 */
export const DELIVER_JOB_MAX_ATTEMPTS = 1_000

/** Deliveries pruned per transaction. */
const PRUNE_CHUNK = 5_000

function enqueueDeliver(tx: Tx, payload: DeliverPayload, runAt: number, now: number) {
  enqueue(tx, { type: DELIVER_JOB, payload, runAt, maxAttempts: DELIVER_JOB_MAX_ATTEMPTS }, now)
}

export function createWebhooksRepo(db: Db): WebhooksRepo {
  // The deliver job reads these two for every attempt.
  const deliveryByIdStmt = rowById<DeliveryRow>(db, webhookDeliveries)
  const endpointByIdStmt = rowById<EndpointRow>(db, webhookEndpoints)
  const record = attemptRecording(db)
  return {
    async insertEndpoint(row) {
      return db.insert(webhookEndpoints).values(row).returning().get()
    },
    async findEndpoint(workspaceId, id) {
      return db.select().from(webhookEndpoints).where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.workspaceId, workspaceId))).get()
    },
    async endpointById(id) {
      return endpointByIdStmt(id)
    },
    async listEndpoints(workspaceId, kind, mode) {
      const e = webhookEndpoints
      const where = and(eq(e.workspaceId, workspaceId), eq(e.kind, kind), isNull(e.deletedAt), mode ? eq(e.mode, mode) : undefined)
      return db.select().from(e).where(where).orderBy(asc(e.createdAt), asc(e.id)).all()
    },
    async countEndpoints(workspaceId, kind) {
      const e = webhookEndpoints
      return db.select({ n: count() }).from(e).where(and(eq(e.workspaceId, workspaceId), eq(e.kind, kind), isNull(e.deletedAt))).get()?.n ?? 0
    },
    async updateEndpoint(id, patch) {
      return db.update(webhookEndpoints).set(patch).where(eq(webhookEndpoints.id, id)).returning().get()
    },
    async rotateSecret(id, secret, previousUntil, now) {
      const e = webhookEndpoints
      return db
        .update(e)
        .set({ secret, previousSecret: previousUntil === null ? null : sql`${e.secret}`, previousSecretExpiresAt: previousUntil, updatedAt: now })
        .where(eq(e.id, id))
        .returning()
        .get()
    },
    async deleteEndpoint(id) {
      return db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).returning({ id: webhookEndpoints.id }).all().length > 0
    },
    async removeRestHook(id, reason, now) {
      return db.transaction((tx) => removeRestHookIn(tx, id, reason, now), { behavior: 'immediate' })
    },

    async findDelivery(endpointId, id) {
      return db.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.endpointId, endpointId))).get()
    },
    async deliveryById(id) {
      return deliveryByIdStmt(id)
    },
    async listDeliveries(f) {
      const parts: (SQL | undefined)[] = [eq(webhookDeliveries.endpointId, f.endpointId)]
      if (f.statuses) parts.push(inArray(webhookDeliveries.status, f.statuses as DeliveryStatus[]))
      if (f.event) parts.push(eq(webhookDeliveries.event, f.event))
      if (f.from !== undefined) parts.push(gte(webhookDeliveries.createdAt, f.from))
      if (f.to !== undefined) parts.push(lt(webhookDeliveries.createdAt, f.to))
      if (f.since !== undefined) parts.push(gt(webhookDeliveries.createdAt, f.since))
      if (f.q) {
        const like = `%${escapeLike(f.q.toLowerCase())}%`
        parts.push(
          or(
            sql`lower(${webhookDeliveries.event}) like ${like} escape '\\'`,
            sql`lower(${webhookDeliveries.id}) like ${like} escape '\\'`,
            sql`lower(coalesce(${webhookDeliveries.eventId}, '')) like ${like} escape '\\'`,
            sql`lower(${webhookDeliveries.idempotencyKey}) like ${like} escape '\\'`,
            sql`lower(coalesce(${webhookDeliveries.payload}, '')) like ${like} escape '\\'`,
          ),
        )
      }
      return db
        .select()
        .from(webhookDeliveries)
        .where(and(...parts))
        .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
        .limit(f.limit)
        .all()
    },
    async attempts(deliveryId) {
      return db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, deliveryId)).orderBy(asc(webhookAttempts.attempt), asc(webhookAttempts.startedAt)).all()
    },
    async countDeadReplayable(endpointId) {
      const row = db
        .select({ n: count() })
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, 'dead'), eq(webhookDeliveries.replayable, true)))
        .get()
      return row?.n ?? 0
    },

    async insertDelivery(row, job, now) {
      return db.transaction((tx) => {
        const inserted = tx.insert(webhookDeliveries).values(row).returning().get()
        if (job) enqueueDeliver(tx, { deliveryId: row.id, attempt: 1 }, job.runAt, now)
        return inserted
      })
    },
    async replay(copies, now) {
      return db.transaction((tx) => {
        const out: DeliveryRow[] = []
        for (const { originalId, row } of copies) {
          const original = tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, originalId)).get()
          if (!original || !original.replayable) continue
          const superseded = original.status === 'failed' || original.status === 'pending'
          tx.update(webhookDeliveries)
            .set({
              replayable: false,
              updatedAt: now,
              ...(superseded ? { status: 'dead' as const, nextAttemptAt: null, errorMessage: `superseded by replay ${row.id}` } : {}),
            })
            .where(eq(webhookDeliveries.id, originalId))
            .run()
          out.push(tx.insert(webhookDeliveries).values(row).returning().get())
          enqueueDeliver(tx, { deliveryId: row.id, attempt: 1 }, now, now)
        }
        return out
      }, { behavior: 'immediate' })
    },
    async deadReplayable(endpointId, limit) {
      return db
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, 'dead'), eq(webhookDeliveries.replayable, true)))
        .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
        .limit(limit)
        .all()
    },
    async closeBatch(deliveryId, now) {
      // IMMEDIATE: the fan-out cannot add an event between the close and the read.
      return db.transaction((tx) => closeBatchIn(tx, deliveryId, now), { behavior: 'immediate' })
    },
    async recordAttempt(deliveryId, endpointId, outcome, now, autoDisable) {
      return db.transaction(() => record([{ deliveryId, endpointId, outcome, now, job: null }], autoDisable)[0]!, { behavior: 'immediate' })
    },
    async recordAttempts(records, autoDisable) {
      return db.transaction(() => record(records, autoDisable), { behavior: 'immediate' })
    },
    async abandon(deliveryId, reason, now) {
      db.update(webhookDeliveries)
        .set({ status: 'dead', nextAttemptAt: null, errorMessage: reason, updatedAt: now })
        .where(and(eq(webhookDeliveries.id, deliveryId), inArray(webhookDeliveries.status, ['pending', 'failed'])))
        .run()
    },
    async defer(payload, runAt, now) {
      db.transaction((tx) => enqueueDeliver(tx, payload, runAt, now))
    },
    async pruneDeliveries(before) {
      return pruneDeliveries(db, before)
    },
  }
}

/**
 * A whole row by its id, as drizzle's select() answers it (each column decoded by its own mapping), through
 * one statement on the driver (db/hot.ts): a drizzle prepared query maps rows generically on every call,
 * which cost the deliver job 15 µs of its two reads here, three times the reads themselves.
 */
function rowById<Row>(db: Db, table: typeof webhookDeliveries | typeof webhookEndpoints): (id: string) => Row | undefined {
  const columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({ key, name: column.name, column }))
  const stmt = hotStatement(db, db.select().from(table).where(eq(table.id, sql.placeholder('id'))))
  return (id) => {
    const raw = stmt.get({ id })
    if (!raw) return undefined
    const row: Record<string, unknown> = {}
    for (const { key, name, column } of columns) {
      const value = raw[name]
      row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value)
    }
    return row as Row
  }
}

/**
 * The statements of recording an attempt, prepared once on the driver (db/hot.ts): every delivery runs them,
 * and drizzle building and preparing them again per call cost more than SQLite's work. `record` joins the
 * transaction open on `db`, which the caller holds IMMEDIATE, so a delete cannot slip in between the check
 * and the writes.
 */
function attemptRecording(db: Db) {
  const d = webhookDeliveries
  const e = webhookEndpoints
  const a = webhookAttempts
  const asIs = (name: string) => sql`${sql.placeholder(name)}`
  // The delivery first: no row changed means it is gone (its endpoint was deleted mid-request, taking its
  // deliveries along), and the attempt then has nothing to belong to.
  const updateDelivery = hotStatement(
    db,
    db
      .update(d)
      .set({
        attempt: asIs('attempt'),
        status: asIs('status'),
        responseStatus: asIs('responseStatus'),
        durationMs: asIs('durationMs'),
        nextAttemptAt: asIs('nextAttemptAt'),
        deliveredAt: sql`coalesce(${sql.placeholder('deliveredAt')}, ${d.deliveredAt})`,
        errorMessage: asIs('errorMessage'),
        updatedAt: asIs('updatedAt'),
      })
      .where(eq(d.id, sql.placeholder('id'))),
  )
  const insertAttempt = hotStatement(
    db,
    db.insert(a).values({
      id: sql.placeholder('id'),
      deliveryId: sql.placeholder('deliveryId'),
      attempt: sql.placeholder('attempt'),
      startedAt: sql.placeholder('startedAt'),
      durationMs: sql.placeholder('durationMs'),
      request: sql.placeholder('request'),
      responseStatus: sql.placeholder('responseStatus'),
      responseHeaders: sql.placeholder('responseHeaders'),
      responseBody: sql.placeholder('responseBody'),
      responseBodyTruncated: sql.placeholder('responseBodyTruncated'),
      error: sql.placeholder('error'),
      address: sql.placeholder('address'),
    }),
  )
  const succeeded = hotStatement(
    db,
    db
      .update(e)
      .set({ failureCount: 0, failingSince: null, lastSuccessAt: asIs('now') })
      .where(eq(e.id, sql.placeholder('endpointId'))),
  )
  const enqueueJob = preparedEnqueue(db, DELIVER_JOB, DELIVER_JOB_MAX_ATTEMPTS)
  const completeJob = preparedComplete(db)

  /** A failed attempt counts against the endpoint; answers whether that disabled it. */
  function failed(endpointId: string, effect: { kind: 'failure' } | { kind: 'gone'; reason: string }, now: number, autoDisable: AutoDisable): boolean {
    const before = db.select({ isActive: e.isActive, kind: e.kind }).from(e).where(eq(e.id, endpointId)).get()
    const since = sql`coalesce(${e.failingSince}, ${now})`
    const exhausted = sql`(${e.failureCount} + 1 >= ${autoDisable.failures} and ${since} <= ${now - autoDisable.afterMs})`
    const after = db
      .update(e)
      .set(
        effect.kind === 'gone'
          ? { failureCount: sql`${e.failureCount} + 1`, failingSince: since, isActive: false, disabledReason: effect.reason, updatedAt: now }
          : {
              failureCount: sql`${e.failureCount} + 1`,
              failingSince: since,
              isActive: sql`case when ${e.isActive} = ${true} and ${exhausted} then ${false} else ${e.isActive} end`,
              disabledReason: sql`case when ${e.isActive} = ${true} and ${exhausted} then ${autoDisable.reason} else ${e.disabledReason} end`,
            },
      )
      .where(eq(e.id, endpointId))
      .returning({ isActive: e.isActive })
      .get()
    if (effect.kind === 'gone' && before?.kind === 'rest_hook') removeRestHookIn(db, endpointId, effect.reason, now)
    return !!before?.isActive && !!after && !after.isActive
  }

  /**
   * Records each in order. An endpoint's successes in a row are written once, as the last of them: each
   * would reset the same counters, and only the last time stays. A failure first writes the successes
   * before it, so the counters move exactly as they would one attempt at a time.
   */
  return (records: AttemptRecord[], autoDisable: AutoDisable): (boolean | null)[] => {
    const lastSuccess = new Map<string, number>()
    const writeSuccess = (endpointId: string) => {
      const at = lastSuccess.get(endpointId)
      if (at === undefined) return
      succeeded.run({ endpointId, now: at })
      lastSuccess.delete(endpointId)
    }
    const results = records.map(({ deliveryId, endpointId, outcome, now, job }): boolean | null => {
      // The job goes whatever happens below: its attempt is made, and recorded or (delivery gone) moot.
      if (job) completeJob(job.id, job.workerId)
      if (!updateDelivery.run({ ...outcome.delivery, deliveredAt: outcome.delivery.deliveredAt ?? null, id: deliveryId })) return null
      insertAttempt.run(outcome.attempt)
      if (outcome.next) enqueueJob(outcome.next.payload, outcome.next.runAt, now)
      const effect = outcome.endpoint
      if (!effect) return false
      if (effect.kind === 'success') {
        lastSuccess.set(endpointId, now)
        return false
      }
      writeSuccess(endpointId)
      return failed(endpointId, effect, now, autoDisable)
    })
    for (const endpointId of [...lastSuccess.keys()]) writeSuccess(endpointId)
    return results
  }
}

/**
 * Contract section 6: a removed subscription is gone at once, and whatever it still had to send will never
 * be sent (dead, not retried); the row stays, inactive and without its secret, as the tombstone.
 */
function removeRestHookIn(tx: Tx, id: string, reason: string, now: number): boolean {
  const e = webhookEndpoints
  const d = webhookDeliveries
  const removed = tx
    .update(e)
    .set({ isActive: false, deletedAt: now, disabledReason: reason, secret: '', previousSecret: null, previousSecretExpiresAt: null, updatedAt: now })
    .where(and(eq(e.id, id), eq(e.kind, 'rest_hook'), isNull(e.deletedAt)))
    .returning({ id: e.id })
    .get()
  if (!removed) return false
  tx.update(d)
    .set({ status: 'dead', nextAttemptAt: null, errorMessage: `Not sent: the subscription was removed (${reason})`, updatedAt: now })
    .where(and(eq(d.endpointId, id), inArray(d.status, ['pending', 'failed'])))
    .run()
  return true
}

function closeBatchIn(tx: Tx, deliveryId: string, now: number): DeliveryRow | undefined {
  const row = tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).get()
  if (!row || !row.batchOpen) return row
  const events = tx.select({ envelope: webhookBatchEvents.envelope }).from(webhookBatchEvents).where(eq(webhookBatchEvents.deliveryId, deliveryId)).orderBy(asc(webhookBatchEvents.position)).all()
  const payload = { type: 'batch', count: events.length, events: events.map((e) => e.envelope) }
  tx.delete(webhookBatchEvents).where(eq(webhookBatchEvents.deliveryId, deliveryId)).run()
  return tx
    .update(webhookDeliveries)
    .set({ batchOpen: false, payload, batchSize: events.length, nextAttemptAt: now, updatedAt: now })
    .where(eq(webhookDeliveries.id, deliveryId))
    .returning()
    .get()
}

/**
 * WebhooksRepo.pruneDeliveries on a given connection: endpoint by endpoint through the (endpoint, status,
 * created) index, at most PRUNE_CHUNK deliveries per transaction. A transaction that finds the write lock
 * taken (on the job worker's connection, which does not wait for it) is tried again after a pause.
 */
async function pruneDeliveries(db: Db, before: number): Promise<number> {
  const d = webhookDeliveries
  const endpoints = db.select({ id: webhookEndpoints.id }).from(webhookEndpoints).all()
  const chunk = db
    .delete(d)
    .where(
      inArray(
        d.id,
        db
          .select({ id: d.id })
          .from(d)
          .where(and(eq(d.endpointId, sql.placeholder('endpointId')), inArray(d.status, ['success', 'dead']), lt(d.createdAt, sql.placeholder('before'))))
          .limit(PRUNE_CHUNK),
      ),
    )
    .returning({ id: d.id })
    .prepare()
  let removed = 0
  for (const { id } of endpoints) {
    for (;;) {
      const n = await retryWhileBusy(() => db.transaction(() => chunk.all({ endpointId: id, before }).length, { behavior: 'immediate' }))
      removed += n
      if (n < PRUNE_CHUNK) break
    }
  }
  return removed
}

/**
 * Prepared once on the dispatching connection; they join the dispatch transaction open on it. All but the
 * (cached) endpoint list run per delivery, so they run on the driver (db/hot.ts).
 */
export function createFanoutStatements(db: Db): FanoutStatements {
  const d = webhookDeliveries
  const activeEndpoints = db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.workspaceId, sql.placeholder('workspaceId')), eq(webhookEndpoints.mode, sql.placeholder('mode')), eq(webhookEndpoints.isActive, true)))
    .prepare()
  // Bound as it comes: the envelope arrives serialized (once per event, for every endpoint), not to be
  // encoded again; an update's set() takes no bare placeholder.
  const asIs = (name: string) => sql`${sql.placeholder(name)}`
  const insertDelivery = hotStatement(
    db,
    db.insert(d).values({
      id: sql.placeholder('id'),
      endpointId: sql.placeholder('endpointId'),
      workspaceId: sql.placeholder('workspaceId'),
      event: sql.placeholder('event'),
      eventId: sql.placeholder('eventId'),
      payload: asIs('payloadJson'),
      status: 'pending',
      attempt: 0,
      maxAttempts: sql.placeholder('maxAttempts'),
      batchSize: sql.placeholder('batchSize'),
      batchOpen: sql.placeholder('batchOpen'),
      batchClosesAt: sql.placeholder('batchClosesAt'),
      nextAttemptAt: sql.placeholder('nextAttemptAt'),
      replayable: true,
      isPing: false,
      idempotencyKey: sql.placeholder('idempotencyKey'),
      createdAt: sql.placeholder('now'),
      updatedAt: sql.placeholder('now'),
    }),
  )
  const openBatch = hotStatement(
    db,
    db
      .select({ id: d.id, batchSize: d.batchSize })
      .from(d)
      .where(and(eq(d.endpointId, sql.placeholder('endpointId')), eq(d.batchOpen, true)))
      .limit(1),
  )
  const addBatchEvent = hotStatement(
    db,
    db.insert(webhookBatchEvents).values({ deliveryId: sql.placeholder('deliveryId'), position: sql.placeholder('position'), envelope: asIs('envelopeJson') }),
  )
  const growBatch = hotStatement(
    db,
    db
      .update(d)
      .set({ batchSize: sql`${d.batchSize} + 1`, updatedAt: asIs('now') })
      .where(eq(d.id, sql.placeholder('deliveryId'))),
  )
  const enqueueJob = preparedEnqueue(db, DELIVER_JOB, DELIVER_JOB_MAX_ATTEMPTS)
  return {
    activeEndpoints: (workspaceId, mode) => activeEndpoints.all({ workspaceId, mode }),
    insertDelivery(delivery) {
      insertDelivery.run(delivery)
    },
    openBatch(endpointId) {
      const open = openBatch.get({ endpointId })
      return open ? { id: open.id as string, batchSize: open.batch_size as number } : null
    },
    addBatchEvent(deliveryId, position, envelopeJson, now) {
      addBatchEvent.run({ deliveryId, position, envelopeJson })
      growBatch.run({ deliveryId, now })
    },
    closeBatch(deliveryId, now) {
      closeBatchIn(db, deliveryId, now)
    },
    enqueueDeliver(payload, runAt, now) {
      enqueueJob(payload, runAt, now)
    },
  }
}
