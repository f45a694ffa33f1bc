// Recording a delivery's attempts, on either engine: each attempt's row, the delivery's move, the next
// attempt's job, the endpoint's counters and the completion of the job that made it, in one transaction shared
// by the attempts that finished together (recorder.ts). SQLite's transaction takes the one write lock up front;
// on PostgreSQL, where several nodes record at once, every decision is taken on a locked row or by a
// conditional statement:
// - an attempt is recorded once: the delivery moves only from the attempt before it (a second recording of
//   the same attempt, from another node, finds nothing to move and writes nothing);
// - the endpoints a recording touches are locked first, in id order, so recordings on several nodes, an
//   endpoint deleted meanwhile, and the disable decision never interleave or deadlock;
// - counters move in SQL (`failure_count + 1`), never read and written back.
// The statements every delivery runs are AttemptStatements, prepared once (Engine.prepare) on the engine that
// records (SQLite: the job worker's connection): at thousands of deliveries a second, building them again at
// every call cost more than the database's work.
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm'
import { exec, locking, rows, type Builder, type Engine, type Steps } from '../../db/engine'
import { preparedComplete, preparedEnqueue } from '../../jobs/queue'
import { DELIVER_JOB, DELIVER_JOB_MAX_ATTEMPTS, type AttemptRecord, type AutoDisable, type DeliverPayload, type DeliveryResult, type NewAttempt } from './port'

/** The statements recording runs for every attempt, each a step of its transaction's body (db/engine). */
export interface AttemptStatements {
  /** Locks the endpoints the recording touches, in one order on every node. */
  lockEndpoints(tx: Builder, endpointIds: string[]): Steps<void>
  /** Moves the delivery from the attempt before `r.attempt` to `r`; false when nothing moved (recorded already, or gone). */
  moveDelivery(tx: Builder, deliveryId: string, r: DeliveryResult): Steps<boolean>
  insertAttempt(tx: Builder, attempt: NewAttempt): Steps<unknown>
  enqueueDeliver(tx: Builder, payload: DeliverPayload, runAt: number, now: number): Steps<unknown>
  /** Removes the job `workerId` holds, its attempt made. */
  completeJob(tx: Builder, id: string, workerId: string): Steps<unknown>
  /** A success ends the endpoint's run of failures. */
  succeeded(tx: Builder, endpointId: string, at: number): Steps<unknown>
}

export function createAttemptStatements(engine: Engine): AttemptStatements {
  const { db } = engine
  const { webhookAttempts: a, webhookDeliveries: d, webhookEndpoints: e } = engine.t
  const p = sql.placeholder
  // Bound as it comes (an update's set() takes no bare placeholder).
  const asIs = (name: string) => sql`${p(name)}`
  // Moves only from the attempt before this one. No row changed also means the delivery is gone (its endpoint
  // was deleted mid-request, taking its deliveries along).
  const moveDelivery = engine.prepare(
    db
      .update(d)
      .set({
        attempt: asIs('attempt'),
        status: asIs('status'),
        responseStatus: asIs('responseStatus'),
        durationMs: asIs('durationMs'),
        nextAttemptAt: asIs('nextAttemptAt'),
        deliveredAt: sql`coalesce(cast(${p('deliveredAt')} as bigint), ${d.deliveredAt})`,
        errorMessage: asIs('errorMessage'),
        updatedAt: asIs('updatedAt'),
      })
      .where(and(eq(d.id, p('id')), eq(d.attempt, p('previous')))),
  )
  const insertAttempt = engine.prepare(
    db.insert(a).values({
      id: p('id'),
      deliveryId: p('deliveryId'),
      attempt: p('attempt'),
      startedAt: p('startedAt'),
      durationMs: p('durationMs'),
      request: p('request'),
      responseStatus: p('responseStatus'),
      responseHeaders: p('responseHeaders'),
      responseBody: p('responseBody'),
      responseBodyTruncated: p('responseBodyTruncated'),
      error: p('error'),
      address: p('address'),
    }),
  )
  const succeeded = engine.prepare(
    db
      .update(e)
      .set({ failureCount: 0, failingSince: null, lastSuccessAt: asIs('now') })
      .where(eq(e.id, p('endpointId'))),
  )
  const enqueueJob = preparedEnqueue(engine, DELIVER_JOB, DELIVER_JOB_MAX_ATTEMPTS)
  const completeJob = preparedComplete(engine)
  return {
    *lockEndpoints(tx, endpointIds) {
      // The counters and the disable decision below are then this transaction's alone, and two recordings
      // (or a recording and an endpoint's delete, which locks the endpoint before its deliveries) cannot each
      // hold a row the other waits for. NO KEY UPDATE leaves the fan-out's inserts of new deliveries for
      // these endpoints (their foreign key check) free to go on. SQLite's IMMEDIATE transaction holds the
      // one write lock already: nothing else writes these rows.
      yield* locking(
        engine,
        () =>
          tx
            .select({ id: e.id })
            .from(e)
            .where(inArray(e.id, endpointIds))
            .orderBy(asc(engine.byteOrder(e.id))),
        { weak: true },
      )
    },
    *moveDelivery(_tx, id, r) {
      return (yield* exec(moveDelivery, { ...r, deliveredAt: r.deliveredAt ?? null, id, previous: r.attempt - 1 })) > 0
    },
    // The prepared statements' own steps, handed on as they are: no generator of ours around them.
    insertAttempt: (_tx, attempt) => exec(insertAttempt, attempt),
    enqueueDeliver: (_tx, payload, runAt, now) => enqueueJob(payload, runAt, now),
    completeJob: (_tx, id, workerId) => completeJob(id, workerId),
    succeeded: (_tx, endpointId, at) => exec(succeeded, { endpointId, now: at }),
  }
}

/**
 * Records each attempt in order; answers per attempt whether it disabled its endpoint, or null when its
 * delivery is gone (its endpoint was deleted while the request was out, taking its deliveries along) or the
 * attempt was recorded already: then nothing of it is written. An endpoint's successes in a row are written
 * once, as the last of them: each would reset the same counters, and only the last time stays. A failure
 * first writes the successes before it, so the counters move exactly as they would one attempt at a time.
 */
export function* recording(engine: Engine, st: AttemptStatements, tx: Builder, records: AttemptRecord[], autoDisable: AutoDisable): Steps<(boolean | null)[]> {
  const endpointIds = [...new Set(records.map((r) => r.endpointId))]
  if (endpointIds.length) yield* st.lockEndpoints(tx, endpointIds)
  const lastSuccess = new Map<string, number>()
  function* writeSuccess(endpointId: string): Steps<void> {
    const at = lastSuccess.get(endpointId)
    if (at === undefined) return
    yield* st.succeeded(tx, endpointId, at)
    lastSuccess.delete(endpointId)
  }
  const results: (boolean | null)[] = []
  for (const { deliveryId, endpointId, outcome, now, job } of records) {
    // The job goes whatever happens below: its attempt is made, and recorded or (delivery gone) moot.
    if (job) yield* st.completeJob(tx, job.id, job.workerId)
    if (!(yield* st.moveDelivery(tx, deliveryId, outcome.delivery))) {
      results.push(null)
      continue
    }
    yield* st.insertAttempt(tx, outcome.attempt)
    if (outcome.next) yield* st.enqueueDeliver(tx, outcome.next.payload, outcome.next.runAt, now)
    const effect = outcome.endpoint
    if (!effect) {
      results.push(false)
      continue
    }
    if (effect.kind === 'success') {
      lastSuccess.set(endpointId, now)
      results.push(false)
      continue
    }
    yield* writeSuccess(endpointId)
    results.push(yield* failing(engine, tx, endpointId, effect, now, autoDisable))
  }
  for (const endpointId of [...lastSuccess.keys()]) yield* writeSuccess(endpointId)
  return results
}

/** A failed attempt counts against the endpoint; answers whether that disabled it (its row is locked). */
function* failing(
  engine: Engine,
  tx: Builder,
  endpointId: string,
  effect: { kind: 'failure' } | { kind: 'gone'; reason: string },
  now: number,
  autoDisable: AutoDisable,
): Steps<boolean> {
  const e = engine.t.webhookEndpoints
  const [before] = yield* rows(tx.select({ isActive: e.isActive, kind: e.kind }).from(e).where(eq(e.id, endpointId)))
  const since = sql`coalesce(${e.failingSince}, cast(${now} as bigint))`
  const exhausted = sql`(${e.failureCount} + 1 >= cast(${autoDisable.failures} as bigint) and ${since} <= cast(${now - autoDisable.afterMs} as bigint))`
  const disabling = sql`(${e.isActive} and ${exhausted})`
  const [after] = yield* rows(
    tx
      .update(e)
      .set(
        effect.kind === 'gone'
          ? { failureCount: sql`${e.failureCount} + 1`, failingSince: since, isActive: false, disabledReason: effect.reason, updatedAt: now }
          : {
              failureCount: sql`${e.failureCount} + 1`,
              failingSince: since,
              isActive: sql`case when ${disabling} then false else ${e.isActive} end`,
              disabledReason: sql`case when ${disabling} then cast(${autoDisable.reason} as text) else ${e.disabledReason} end`,
            },
      )
      .where(eq(e.id, endpointId))
      .returning({ isActive: e.isActive }),
  )
  if (effect.kind === 'gone' && before?.kind === 'rest_hook') yield* removingRestHook(engine, tx, endpointId, effect.reason, now)
  return !!before?.isActive && !!after && !after.isActive
}

/**
 * Contract section 6: a removed subscription is gone at once, and whatever it still had to send will never
 * be sent (dead, not retried); the row stays, inactive and without its secret, as the tombstone. Conditional
 * on the row not removed yet, so it happens once. False when it was removed already.
 */
export function* removingRestHook(engine: Engine, tx: Builder, id: string, reason: string, now: number): Steps<boolean> {
  const { webhookDeliveries: d, webhookEndpoints: e } = engine.t
  const removed = yield* rows(
    tx
      .update(e)
      .set({ isActive: false, deletedAt: now, disabledReason: reason, secret: '', previousSecret: null, previousSecretExpiresAt: null, updatedAt: now })
      .where(and(eq(e.id, id), eq(e.kind, 'rest_hook'), isNull(e.deletedAt)))
      .returning({ id: e.id }),
  )
  if (!removed.length) return false
  yield* rows(
    tx
      .update(d)
      .set({ status: 'dead', nextAttemptAt: null, errorMessage: `Not sent: the subscription was removed (${reason})`, updatedAt: now })
      .where(and(eq(d.endpointId, id), inArray(d.status, ['pending', 'failed']))),
  )
  return true
}
