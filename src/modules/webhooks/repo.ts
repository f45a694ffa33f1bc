// Queries of the webhooks area. A delivery's state and the job that carries its next attempt are always
// written in one transaction, so a delivery is never waiting without a job nor a job left without a reason.
// The fan-out statements are the synchronous exception: they run inside the outbox dispatch transaction.
import { and, asc, count, desc, eq, gt, gte, inArray, lt, or, sql, type SQL } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { webhookAttempts, webhookBatchEvents, webhookDeliveries, webhookEndpoints } from '../../db/schema'
import type { Tx } from '../../db/tx'
import { enqueue, preparedEnqueue } from '../../jobs/queue'

export type EndpointRow = typeof webhookEndpoints.$inferSelect
export type NewEndpoint = typeof webhookEndpoints.$inferInsert
export type DeliveryRow = typeof webhookDeliveries.$inferSelect
export type NewDelivery = typeof webhookDeliveries.$inferInsert
export type AttemptRow = typeof webhookAttempts.$inferSelect
export type NewAttempt = typeof webhookAttempts.$inferInsert

export const DELIVER_JOB = 'webhook.deliver'

/** What a deliver job carries: the delivery and the attempt it is to make (a stale job finds it made). */
export interface DeliverPayload {
  deliveryId: string
  attempt: number
}

/**
 * Deliver jobs never use the queue's own retries (a handler only throws when the database fails): the
 * delivery's schedule lives in the delivery row, and each attempt enqueues the next.
 */
const DELIVER_JOB_MAX_ATTEMPTS = 1_000

export function enqueueDeliver(tx: Tx, payload: DeliverPayload, runAt: number, now: number) {
  enqueue(tx, { type: DELIVER_JOB, payload, runAt, maxAttempts: DELIVER_JOB_MAX_ATTEMPTS }, now)
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

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`)

export interface AttemptOutcome {
  attempt: NewAttempt
  delivery: Partial<NewDelivery>
  /** What the attempt means for the endpoint's counters; null for test pings, which never count. */
  endpoint: { kind: 'success' } | { kind: 'failure' } | { kind: 'gone'; reason: string } | null
  /** The next attempt's job, when one is scheduled. */
  next: { payload: DeliverPayload; runAt: number } | null
}

export function createWebhooksRepo(db: Db) {
  // The deliver job reads these two for every attempt: prepared once.
  const deliveryByIdStmt = db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, sql.placeholder('id'))).prepare()
  const endpointByIdStmt = db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, sql.placeholder('id'))).prepare()
  return {
    async insertEndpoint(row: NewEndpoint): Promise<EndpointRow> {
      return db.insert(webhookEndpoints).values(row).returning().get()
    },
    async findEndpoint(workspaceId: string, id: string): Promise<EndpointRow | undefined> {
      return db.select().from(webhookEndpoints).where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.workspaceId, workspaceId))).get()
    },
    async endpointById(id: string): Promise<EndpointRow | undefined> {
      return endpointByIdStmt.get({ id })
    },
    async listEndpoints(workspaceId: string, mode?: 'live' | 'test'): Promise<EndpointRow[]> {
      const where = mode ? and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.mode, mode)) : eq(webhookEndpoints.workspaceId, workspaceId)
      return db.select().from(webhookEndpoints).where(where).orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id)).all()
    },
    async updateEndpoint(id: string, patch: Partial<NewEndpoint>): Promise<EndpointRow | undefined> {
      return db.update(webhookEndpoints).set(patch).where(eq(webhookEndpoints.id, id)).returning().get()
    },
    async deleteEndpoint(id: string): Promise<boolean> {
      return db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).returning({ id: webhookEndpoints.id }).all().length > 0
    },

    async findDelivery(endpointId: string, id: string): Promise<DeliveryRow | undefined> {
      return db.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.endpointId, endpointId))).get()
    },
    async deliveryById(id: string): Promise<DeliveryRow | undefined> {
      return deliveryByIdStmt.get({ id })
    },
    async listDeliveries(f: DeliveryFilter): Promise<DeliveryRow[]> {
      const parts: (SQL | undefined)[] = [eq(webhookDeliveries.endpointId, f.endpointId)]
      if (f.statuses) parts.push(inArray(webhookDeliveries.status, f.statuses as DeliveryRow['status'][]))
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
    async attempts(deliveryId: string): Promise<AttemptRow[]> {
      return db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, deliveryId)).orderBy(asc(webhookAttempts.attempt), asc(webhookAttempts.startedAt)).all()
    },
    async countDeadReplayable(endpointId: string): Promise<number> {
      const row = db
        .select({ n: count() })
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, 'dead'), eq(webhookDeliveries.replayable, true)))
        .get()
      return row?.n ?? 0
    },

    /** A new delivery and the job of its first attempt (replays; test pings pass no job). */
    async insertDelivery(row: NewDelivery, job: { runAt: number } | null, now: number): Promise<DeliveryRow> {
      return db.transaction((tx) => {
        const inserted = tx.insert(webhookDeliveries).values(row).returning().get()
        if (job) enqueueDeliver(tx, { deliveryId: row.id, attempt: 1 }, job.runAt, now)
        return inserted
      })
    },

    /**
     * Replays: each original stops (a delivery still retrying gives up: the copy supersedes it) and is no
     * longer replayable; each copy is queued for its first attempt. All or nothing.
     */
    async replay(copies: { originalId: string; row: NewDelivery }[], now: number): Promise<DeliveryRow[]> {
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

    /** Up to `limit` dead, replayable deliveries of the endpoint, oldest first. */
    async deadReplayable(endpointId: string, limit: number): Promise<DeliveryRow[]> {
      return db
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, 'dead'), eq(webhookDeliveries.replayable, true)))
        .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
        .limit(limit)
        .all()
    },

    /**
     * Closes an open batch: its collected events become the payload. Answers the delivery (closed now or
     * before). IMMEDIATE so the fan-out cannot add an event between the close and the read.
     */
    async closeBatch(deliveryId: string, now: number): Promise<DeliveryRow | undefined> {
      return db.transaction((tx) => closeBatchIn(tx, deliveryId, now), { behavior: 'immediate' })
    },

    /**
     * Records one attempt and everything it decides, in one transaction. The endpoint's counters move in
     * SQL (attempts of one endpoint run concurrently). Answers whether the endpoint was disabled by it, or
     * null when the delivery is gone: its endpoint was deleted while the request was out, taking its
     * deliveries along, so the outcome has nothing to belong to and nothing is written.
     */
    async recordAttempt(deliveryId: string, endpointId: string, outcome: AttemptOutcome, now: number, autoDisable: { failures: number; afterMs: number; reason: string }): Promise<boolean | null> {
      return db.transaction((tx) => {
        // Checked inside the (IMMEDIATE) transaction, so a delete cannot slip in between check and write.
        if (!tx.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).get()) return null
        tx.insert(webhookAttempts).values(outcome.attempt).run()
        tx.update(webhookDeliveries).set(outcome.delivery).where(eq(webhookDeliveries.id, deliveryId)).run()
        if (outcome.next) enqueueDeliver(tx, outcome.next.payload, outcome.next.runAt, now)
        const effect = outcome.endpoint
        if (!effect) return false
        const e = webhookEndpoints
        if (effect.kind === 'success') {
          tx.update(e).set({ failureCount: 0, failingSince: null, lastSuccessAt: now }).where(eq(e.id, endpointId)).run()
          return false
        }
        const before = tx.select({ isActive: e.isActive }).from(e).where(eq(e.id, endpointId)).get()
        const since = sql`coalesce(${e.failingSince}, ${now})`
        const exhausted = sql`(${e.failureCount} + 1 >= ${autoDisable.failures} and ${since} <= ${now - autoDisable.afterMs})`
        const after = tx
          .update(e)
          .set(
            effect.kind === 'gone'
              ? { failureCount: sql`${e.failureCount} + 1`, failingSince: since, isActive: false, disabledReason: effect.reason, updatedAt: now }
              : {
                  failureCount: sql`${e.failureCount} + 1`,
                  failingSince: since,
                  isActive: sql`case when ${e.isActive} = 1 and ${exhausted} then 0 else ${e.isActive} end`,
                  disabledReason: sql`case when ${e.isActive} = 1 and ${exhausted} then ${autoDisable.reason} else ${e.disabledReason} end`,
                },
          )
          .where(eq(e.id, endpointId))
          .returning({ isActive: e.isActive })
          .get()
        return !!before?.isActive && !!after && !after.isActive
      }, { behavior: 'immediate' })
    },

    /** A delivery that will not be attempted (its endpoint is paused or gone): dead, replayable later. */
    async abandon(deliveryId: string, reason: string, now: number) {
      db.update(webhookDeliveries)
        .set({ status: 'dead', nextAttemptAt: null, errorMessage: reason, updatedAt: now })
        .where(and(eq(webhookDeliveries.id, deliveryId), inArray(webhookDeliveries.status, ['pending', 'failed'])))
        .run()
    },

    /** Puts an attempt off (concurrency caps): the same attempt, a little later. */
    async defer(payload: DeliverPayload, runAt: number, now: number) {
      db.transaction((tx) => enqueueDeliver(tx, payload, runAt, now))
    },
  }
}

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>

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
 * Deletes deliveries that reached a final state (success, dead) before `before`, with their attempts,
 * endpoint by endpoint through the (endpoint, status, created) index, at most 5,000 per transaction so
 * writers never wait long. Deliveries still pending or retrying stay whatever their age. Answers how many.
 */
export function pruneDeliveries(db: Db, before: number): number {
  const sqlite = db.$client
  const endpoints = (sqlite.query('SELECT id FROM webhook_endpoints').all() as { id: string }[]).map((r) => r.id)
  const chunk = sqlite.prepare(
    "DELETE FROM webhook_deliveries WHERE rowid IN (SELECT rowid FROM webhook_deliveries WHERE endpoint_id = ? AND status IN ('success', 'dead') AND created_at < ? LIMIT 5000)",
  )
  let removed = 0
  for (const id of endpoints) {
    for (;;) {
      const n = sqlite.transaction(() => chunk.run(id, before).changes).immediate()
      removed += n
      if (n < 5000) break
    }
  }
  return removed
}

/**
 * The fan-out's statements, prepared once on the dispatching connection (link.clicked arrives by the
 * thousand a second). Synchronous: they run inside the dispatch transaction.
 */
export function createFanoutStatements(db: Db) {
  const sqlite = db.$client
  const activeEndpoints = db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.workspaceId, sql.placeholder('workspaceId')), eq(webhookEndpoints.mode, sql.placeholder('mode')), eq(webhookEndpoints.isActive, true)))
    .prepare()
  const insertDelivery = sqlite.prepare(
    `INSERT INTO webhook_deliveries (id, endpoint_id, workspace_id, event, event_id, payload, status, attempt, max_attempts, batch_size, batch_open, batch_closes_at,
       next_attempt_at, replayable, is_ping, idempotency_key, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, 1, 0, ?, ?, ?)`,
  )
  const openBatch = sqlite.prepare<{ id: string; batch_size: number }, [string]>('SELECT id, batch_size FROM webhook_deliveries WHERE endpoint_id = ? AND batch_open = 1 LIMIT 1')
  const addBatchEvent = sqlite.prepare('INSERT INTO webhook_batch_events (delivery_id, position, envelope) VALUES (?, ?, ?)')
  const growBatch = sqlite.prepare('UPDATE webhook_deliveries SET batch_size = batch_size + 1, updated_at = ? WHERE id = ?')
  const enqueueJob = preparedEnqueue(db, DELIVER_JOB, DELIVER_JOB_MAX_ATTEMPTS)
  return {
    activeEndpoints: (workspaceId: string, mode: string): EndpointRow[] => activeEndpoints.all({ workspaceId, mode }),
    insertDelivery(d: {
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
    }) {
      insertDelivery.run(d.id, d.endpointId, d.workspaceId, d.event, d.eventId, d.payloadJson, d.maxAttempts, d.batchSize, d.batchOpen ? 1 : 0, d.batchClosesAt, d.nextAttemptAt, d.idempotencyKey, d.now, d.now)
    },
    openBatch: (endpointId: string) => openBatch.get(endpointId) ?? null,
    addBatchEvent(deliveryId: string, position: number, envelopeJson: string, now: number) {
      addBatchEvent.run(deliveryId, position, envelopeJson)
      growBatch.run(now, deliveryId)
    },
    closeBatch: (tx: Tx, deliveryId: string, now: number) => closeBatchIn(tx, deliveryId, now),
    enqueueDeliver(payload: DeliverPayload, runAt: number, now: number) {
      enqueueJob(payload, runAt, now)
    },
  }
}

export type FanoutStatements = ReturnType<typeof createFanoutStatements>
