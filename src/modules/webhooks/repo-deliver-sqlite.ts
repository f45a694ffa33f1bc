// The deliver job's statements on SQLite, prepared once on the job worker's connection and run on the driver
// (db/hot.ts): its two reads and the statements recording runs for every attempt (repo-attempts.ts), at
// thousands of deliveries a second, where drizzle building and preparing them again per call cost more than
// SQLite's work. The recording's run at once when their step is taken (a SQLite transaction body runs
// synchronously, db/engine), inside the transaction the repo holds on this connection, IMMEDIATE, so a delete
// cannot slip in between the check and the writes.
import { and, eq, getTableColumns, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { hotStatement } from '../../db/hot'
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../db/schema'
import { preparedComplete, preparedEnqueue } from '../../jobs/queue'
import { DELIVER_JOB, DELIVER_JOB_MAX_ATTEMPTS, type DeliveryRow, type EndpointRow } from './port'
import type { HotPaths } from './repo'

export function createDeliverStatementsSqlite(db: Db): HotPaths {
  const d = webhookDeliveries
  const e = webhookEndpoints
  const a = webhookAttempts
  const asIs = (name: string) => sql`${sql.placeholder(name)}`
  // Moves only from the attempt before this one, as on PostgreSQL (repo-attempts.ts). No row changed also
  // means the delivery is gone (its endpoint was deleted mid-request, taking its deliveries along).
  const moveDelivery = hotStatement(
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
      .where(and(eq(d.id, sql.placeholder('id')), eq(d.attempt, sql.placeholder('previous')))),
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
  return {
    deliveryById: rowById<DeliveryRow>(db, d),
    endpointById: rowById<EndpointRow>(db, e),
    attempts: {
      // The IMMEDIATE transaction holds SQLite's one write lock already: nothing else writes these rows.
      *lockEndpoints() {},
      *moveDelivery(_tx, id, r) {
        return moveDelivery.run({ ...r, deliveredAt: r.deliveredAt ?? null, id, previous: r.attempt - 1 }) > 0
      },
      *insertAttempt(_tx, attempt) {
        insertAttempt.run(attempt)
      },
      *enqueueDeliver(_tx, payload, runAt, now) {
        enqueueJob(payload, runAt, now)
      },
      *completeJob(_tx, id, workerId) {
        completeJob(id, workerId)
      },
      *succeeded(_tx, endpointId, at) {
        succeeded.run({ endpointId, now: at })
      },
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
  const stmt = hotStatement(
    db,
    db
      .select()
      .from(table)
      .where(eq(table.id, sql.placeholder('id'))),
  )
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
