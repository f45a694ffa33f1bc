// The webhooks fan-out's statements on either engine, run inside the outbox dispatch transaction, and the
// batch close and deliver-job enqueue that the repo (repo.ts, repo-attempts.ts) shares with them. The ones run
// for every delivery (link.clicked at thousands of events a second) are prepared once (Engine.prepare) on the
// engine that dispatches (SQLite: the worker's connection); the endpoint list (loaded once per cache period)
// and the batch close (once per full batch) are built at each call.
//
// An open batch is the one row that the fan-out (adding an event) and a deliver job (closing it) both write.
// SQLite serializes them through its single writer; on PostgreSQL each locks the batch's row first (FOR
// UPDATE), so an event is either in the batch before the close reads its events, or finds the batch closed
// and starts a new one: never added after the read and deleted with the rest.
import { and, asc, eq, sql, type Placeholder } from 'drizzle-orm'
import { exec, first, rows, type Builder, type Engine, type Steps } from '../../db/engine'
import { enqueuing, preparedEnqueue } from '../../jobs/queue'
import { DELIVER_JOB, DELIVER_JOB_MAX_ATTEMPTS, type DeliverPayload, type DeliveryRow, type EndpointRow, type FanoutDelivery } from './port'

/** The fan-out's statements, each a step of the dispatch transaction's body (db/engine). */
export interface FanoutStatements {
  /** The active endpoints of a workspace and mode, in creation order. */
  activeEndpoints(tx: Builder, workspaceId: string, mode: string): Steps<EndpointRow[]>
  insertDelivery(tx: Builder, d: FanoutDelivery): Steps<unknown>
  /** The endpoint's open batch (at most one), with the events it holds so far. */
  openBatch(tx: Builder, endpointId: string): Steps<{ id: string; batchSize: number } | null>
  addBatchEvent(tx: Builder, deliveryId: string, position: number, envelopeJson: string, now: number): Steps<void>
  closeBatch(tx: Builder, deliveryId: string, now: number): Steps<void>
  enqueueDeliver(tx: Builder, payload: DeliverPayload, runAt: number, now: number): Steps<unknown>
}

/** The job of a delivery's attempt `payload.attempt`, due at `runAt`. */
export const enqueueDeliver = (engine: Engine, tx: Builder, payload: DeliverPayload, runAt: number, now: number): Steps<unknown> =>
  enqueuing(engine, tx, { type: DELIVER_JOB, payload, runAt, maxAttempts: DELIVER_JOB_MAX_ATTEMPTS }, now)

/**
 * Closes an open batch: its collected events become the payload. Answers the delivery, closed now or before.
 * The batch's row is locked before its events are read (see the header).
 */
export function* closingBatch(engine: Engine, tx: Builder, deliveryId: string, now: number): Steps<DeliveryRow | undefined> {
  const { webhookDeliveries: d, webhookBatchEvents: b } = engine.t
  const [row] = yield* rows(engine.forUpdate(tx.select().from(d).where(eq(d.id, deliveryId))))
  if (!row || !row.batchOpen) return row as DeliveryRow | undefined
  const events = yield* rows(tx.select({ envelope: b.envelope }).from(b).where(eq(b.deliveryId, deliveryId)).orderBy(asc(b.position)))
  const payload = { type: 'batch', count: events.length, events: events.map((e) => e.envelope) }
  yield* rows(tx.delete(b).where(eq(b.deliveryId, deliveryId)))
  const [closed] = yield* rows(
    tx.update(d).set({ batchOpen: false, payload, batchSize: events.length, nextAttemptAt: now, updatedAt: now }).where(eq(d.id, deliveryId)).returning(),
  )
  return closed as DeliveryRow | undefined
}

/**
 * A JSON document given as its text, stored without being encoded again: the envelope arrives serialized once
 * per event for all its endpoints. SQLite's JSON columns hold the text as it is; PostgreSQL parses it into
 * jsonb (a string parameter would be stored as a JSON string).
 */
const jsonText = (engine: Engine, json: Placeholder) => (engine.name === 'pg' ? sql`${json}::text::jsonb` : sql`${json}`)

/** The active endpoints of a workspace and mode, in creation order, ties by id byte by byte: the order of their deliveries on either engine. */
export function* activeEndpoints(engine: Engine, tx: Builder, workspaceId: string, mode: string): Steps<EndpointRow[]> {
  const e = engine.t.webhookEndpoints
  return (yield* rows(
    tx
      .select()
      .from(e)
      .where(and(eq(e.workspaceId, workspaceId), eq(e.mode, mode as 'live' | 'test'), eq(e.isActive, true)))
      .orderBy(asc(e.createdAt), asc(engine.byteOrder(e.id))),
  )) as EndpointRow[]
}

/** The fan-out's statements, prepared on `engine` (the one whose transactions dispatch). */
export function createFanoutStatements(engine: Engine): FanoutStatements {
  const { db } = engine
  const { webhookDeliveries: d, webhookBatchEvents: b } = engine.t
  const p = sql.placeholder
  // Bound as it comes (an update's set() takes no bare placeholder).
  const asIs = (name: string) => sql`${p(name)}`
  const insertDelivery = engine.prepare(
    db.insert(d).values({
      id: p('id'),
      endpointId: p('endpointId'),
      workspaceId: p('workspaceId'),
      event: p('event'),
      eventId: p('eventId'),
      payload: jsonText(engine, p('payloadJson')),
      status: 'pending',
      attempt: 0,
      maxAttempts: p('maxAttempts'),
      batchSize: p('batchSize'),
      batchOpen: p('batchOpen'),
      batchClosesAt: p('batchClosesAt'),
      nextAttemptAt: p('nextAttemptAt'),
      replayable: true,
      isPing: false,
      idempotencyKey: p('idempotencyKey'),
      createdAt: p('now'),
      updatedAt: p('now'),
    }),
  )
  // Locked until the dispatch commits: a deliver job closing this batch meanwhile waits, then reads the event
  // added here (the header says why).
  const openBatch = engine.prepare(
    engine.forUpdate(
      db
        .select({ id: d.id, batchSize: d.batchSize })
        .from(d)
        .where(and(eq(d.endpointId, p('endpointId')), eq(d.batchOpen, true)))
        .limit(1),
    ),
  )
  const addBatchEvent = engine.prepare(
    db.insert(b).values({ deliveryId: p('deliveryId'), position: p('position'), envelope: jsonText(engine, p('envelopeJson')) }),
  )
  // In SQL, not read and written back: the size is the row's, whoever else moved it.
  const growBatch = engine.prepare(
    db
      .update(d)
      .set({ batchSize: sql`${d.batchSize} + 1`, updatedAt: asIs('now') })
      .where(eq(d.id, p('deliveryId'))),
  )
  const enqueueJob = preparedEnqueue(engine, DELIVER_JOB, DELIVER_JOB_MAX_ATTEMPTS)
  return {
    activeEndpoints: (tx, workspaceId, mode) => activeEndpoints(engine, tx, workspaceId, mode),
    // The prepared statements' own steps, handed on as they are: no generator of ours around them.
    insertDelivery: (_tx, delivery) => exec(insertDelivery, delivery),
    *openBatch(_tx, endpointId) {
      return (yield* first(openBatch, { endpointId })) ?? null
    },
    *addBatchEvent(_tx, deliveryId, position, envelopeJson, now) {
      yield* exec(addBatchEvent, { deliveryId, position, envelopeJson })
      yield* exec(growBatch, { deliveryId, now })
    },
    *closeBatch(tx, deliveryId, now) {
      yield* closingBatch(engine, tx, deliveryId, now)
    },
    enqueueDeliver: (_tx, payload, runAt, now) => enqueueJob(payload, runAt, now),
  }
}
