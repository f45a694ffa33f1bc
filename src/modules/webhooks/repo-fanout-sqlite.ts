// The fan-out's statements on SQLite, for link.clicked at thousands of events a second: the ones run per
// delivery are prepared once on the dispatching connection and run on the driver (db/hot.ts), joining the
// dispatch transaction open on it. They run at once when their step is taken (a SQLite transaction body runs
// synchronously, db/engine), so they yield nothing. The endpoint list (loaded once per cache period) and the
// batch close (once per full batch) are repo-fanout.ts's, as on PostgreSQL.
import { and, eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import type { Engine } from '../../db/engine'
import { hotStatement } from '../../db/hot'
import { webhookBatchEvents as b, webhookDeliveries as d } from '../../db/schema'
import { preparedEnqueue } from '../../jobs/queue'
import { DELIVER_JOB, DELIVER_JOB_MAX_ATTEMPTS } from './port'
import { createFanoutStatements, type FanoutStatements } from './repo-fanout'

/** `engine` is the SQLite engine on `db`, the connection that dispatches. */
export function createFanoutStatementsSqlite(db: Db, engine: Engine): FanoutStatements {
  const shared = createFanoutStatements(engine)
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
    db.insert(b).values({ deliveryId: sql.placeholder('deliveryId'), position: sql.placeholder('position'), envelope: asIs('envelopeJson') }),
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
    activeEndpoints: shared.activeEndpoints,
    *insertDelivery(_tx, delivery) {
      insertDelivery.run(delivery)
    },
    *openBatch(_tx, endpointId) {
      const open = openBatch.get({ endpointId })
      return open ? { id: open.id as string, batchSize: open.batch_size as number } : null
    },
    *addBatchEvent(_tx, deliveryId, position, envelopeJson, now) {
      addBatchEvent.run({ deliveryId, position, envelopeJson })
      growBatch.run({ deliveryId, now })
    },
    closeBatch: shared.closeBatch,
    *enqueueDeliver(_tx, payload, runAt, now) {
      enqueueJob(payload, runAt, now)
    },
  }
}
