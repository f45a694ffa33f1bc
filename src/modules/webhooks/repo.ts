// Queries of the webhooks area, on either engine: endpoints and deliveries. A delivery's state and the job
// that carries its next attempt are always written in one transaction, so a delivery is never waiting without
// a job nor a job left without a reason. Attempts are recorded by repo-attempts.ts; the fan-out's statements
// are in repo-fanout.ts. Where SQLite's single writer made a read followed by a write safe, PostgreSQL, with
// several nodes on one database, takes the decision on a locked row or by a conditional statement, as the
// comments at each say.
import { and, asc, count, desc, eq, gt, gte, inArray, isNull, lt, or, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import { first, rows, type Engine } from '../../db/engine'
import { escapeLike } from '../../db/like'
import { retryWhileBusy } from '../../jobs/busy'
import type { AttemptRecord, AutoDisable, AttemptRow, DeliveryFilter, DeliveryRow, DeliveryStatus, EndpointRow, WebhooksRepo } from './port'
import { createAttemptStatements, recording, removingRestHook } from './repo-attempts'
import { closingBatch, enqueueDeliver } from './repo-fanout'

/** Deliveries pruned per transaction. */
const PRUNE_CHUNK = 5_000

/** The deliver job's statements (its two reads, the recording's) are prepared once on `engine` (SQLite: its connection). */
export function createWebhooksRepo(engine: Engine): WebhooksRepo {
  const { webhookAttempts: a, webhookDeliveries: d, webhookEndpoints: e } = engine.t
  const { db } = engine
  const attempts = createAttemptStatements(engine)
  // Whole rows, as select() answers them: the deliver job reads both for every attempt.
  const deliveryById = engine.prepare(
    db
      .select()
      .from(d)
      .where(eq(d.id, sql.placeholder('id'))),
  )
  const endpointById = engine.prepare(
    db
      .select()
      .from(e)
      .where(eq(e.id, sql.placeholder('id'))),
  )
  // IMMEDIATE on SQLite: a delete cannot slip in between the check and the writes.
  const record = (records: AttemptRecord[], autoDisable: AutoDisable) =>
    engine.transaction((tx) => recording(engine, attempts, tx, records, autoDisable), { immediate: true })
  return {
    async insertEndpoint(row) {
      const [inserted] = await db.insert(e).values(row).returning()
      return inserted as EndpointRow
    },
    async findEndpoint(workspaceId, id) {
      const [row] = await db
        .select()
        .from(e)
        .where(and(eq(e.id, id), eq(e.workspaceId, workspaceId)))
      return row as EndpointRow | undefined
    },
    endpointById: (id) => engine.run(() => first(endpointById, { id })) as Promise<EndpointRow | undefined>,
    async listEndpoints(workspaceId, kind, mode) {
      const where = and(eq(e.workspaceId, workspaceId), eq(e.kind, kind), isNull(e.deletedAt), mode ? eq(e.mode, mode) : undefined)
      return (await db
        .select()
        .from(e)
        .where(where)
        .orderBy(asc(e.createdAt), asc(engine.byteOrder(e.id)))) as EndpointRow[]
    },
    async countEndpoints(workspaceId, kind) {
      const [row] = await db
        .select({ n: count() })
        .from(e)
        .where(and(eq(e.workspaceId, workspaceId), eq(e.kind, kind), isNull(e.deletedAt)))
      return row?.n ?? 0
    },
    async updateEndpoint(id, patch) {
      const [row] = await db.update(e).set(patch).where(eq(e.id, id)).returning()
      return row as EndpointRow | undefined
    },
    async rotateSecret(id, secret, previousUntil, now) {
      // One statement: `secret` on the right is the row's own, so two rotations at once chain (the second
      // keeps the first's new secret as its previous one) instead of both keeping the secret they read.
      const [row] = await db
        .update(e)
        .set({ secret, previousSecret: previousUntil === null ? null : sql`${e.secret}`, previousSecretExpiresAt: previousUntil, updatedAt: now })
        .where(eq(e.id, id))
        .returning()
      return row as EndpointRow | undefined
    },
    async deleteEndpoint(id) {
      return (await db.delete(e).where(eq(e.id, id)).returning({ id: e.id })).length > 0
    },
    removeRestHook: (id, reason, now) => engine.transaction((tx) => removingRestHook(engine, tx, id, reason, now), { immediate: true }),

    async findDelivery(endpointId, id) {
      const [row] = await db
        .select()
        .from(d)
        .where(and(eq(d.id, id), eq(d.endpointId, endpointId)))
      return row as DeliveryRow | undefined
    },
    deliveryById: (id) => engine.run(() => first(deliveryById, { id })) as Promise<DeliveryRow | undefined>,
    async listDeliveries(f) {
      return (await db
        .select()
        .from(d)
        .where(deliveryFilter(engine, f))
        .orderBy(desc(d.createdAt), desc(engine.byteOrder(d.id)))
        .limit(f.limit)) as DeliveryRow[]
    },
    async attempts(deliveryId) {
      return (await db
        .select()
        .from(a)
        .where(eq(a.deliveryId, deliveryId))
        .orderBy(asc(a.attempt), asc(a.startedAt), asc(engine.byteOrder(a.id)))) as AttemptRow[]
    },
    async countDeadReplayable(endpointId) {
      const [row] = await db
        .select({ n: count() })
        .from(d)
        .where(and(eq(d.endpointId, endpointId), eq(d.status, 'dead'), eq(d.replayable, true)))
      return row?.n ?? 0
    },

    insertDelivery: (row, job, now) =>
      engine.transaction(function* (tx) {
        const [inserted] = yield* rows(tx.insert(d).values(row).returning())
        if (job) yield* enqueueDeliver(engine, tx, { deliveryId: row.id, attempt: 1 }, job.runAt, now)
        return inserted as DeliveryRow
      }),
    replay: (copies, now) =>
      engine.transaction(
        function* (tx) {
          const out: DeliveryRow[] = []
          for (const { originalId, row } of copies) {
            // Locked: of two replays of one original at once, the second waits and finds it replayed.
            const [original] = yield* rows(engine.forUpdate(tx.select({ status: d.status, replayable: d.replayable }).from(d).where(eq(d.id, originalId))))
            if (!original || !original.replayable) continue
            const superseded = original.status === 'failed' || original.status === 'pending'
            yield* rows(
              tx
                .update(d)
                .set({
                  replayable: false,
                  updatedAt: now,
                  ...(superseded ? { status: 'dead' as const, nextAttemptAt: null, errorMessage: `superseded by replay ${row.id}` } : {}),
                })
                .where(eq(d.id, originalId)),
            )
            const [copy] = yield* rows(tx.insert(d).values(row).returning())
            out.push(copy as DeliveryRow)
            yield* enqueueDeliver(engine, tx, { deliveryId: row.id, attempt: 1 }, now, now)
          }
          return out
        },
        { immediate: true },
      ),
    async deadReplayable(endpointId, limit) {
      return (await db
        .select()
        .from(d)
        .where(and(eq(d.endpointId, endpointId), eq(d.status, 'dead'), eq(d.replayable, true)))
        .orderBy(asc(d.createdAt), asc(engine.byteOrder(d.id)))
        .limit(limit)) as DeliveryRow[]
    },
    // IMMEDIATE on SQLite, the batch's row locked on PostgreSQL: the fan-out cannot add an event between the
    // close and the read.
    closeBatch: (deliveryId, now) => engine.transaction((tx) => closingBatch(engine, tx, deliveryId, now), { immediate: true }),
    recordAttempt: async (deliveryId, endpointId, outcome, now, autoDisable) =>
      (await record([{ deliveryId, endpointId, outcome, now, job: null }], autoDisable))[0]!,
    recordAttempts: record,
    async abandon(deliveryId, reason, now) {
      // Conditional: only a delivery still waiting dies; one recorded meanwhile keeps its outcome.
      await db
        .update(d)
        .set({ status: 'dead', nextAttemptAt: null, errorMessage: reason, updatedAt: now })
        .where(and(eq(d.id, deliveryId), inArray(d.status, ['pending', 'failed'])))
    },
    defer: (payload, runAt, now) =>
      engine.transaction(function* (tx) {
        yield* enqueueDeliver(engine, tx, payload, runAt, now)
      }),
    async pruneDeliveries(before) {
      // Endpoint by endpoint through the (endpoint, status, created) index, at most PRUNE_CHUNK deliveries per
      // transaction. A transaction that finds SQLite's write lock taken (on the job worker's connection, which
      // does not wait for it) is tried again after a pause.
      const endpoints = await db.select({ id: e.id }).from(e)
      let removed = 0
      for (const { id } of endpoints) {
        for (;;) {
          const n = await retryWhileBusy(() =>
            engine.transaction(
              function* (tx) {
                const chunk = tx
                  .select({ id: d.id })
                  .from(d)
                  .where(and(eq(d.endpointId, id), inArray(d.status, ['success', 'dead']), lt(d.createdAt, before)))
                  .limit(PRUNE_CHUNK)
                return (yield* rows(tx.delete(d).where(inArray(d.id, chunk)).returning({ id: d.id }))).length
              },
              { immediate: true },
            ),
          )
          removed += n
          if (n < PRUNE_CHUNK) break
        }
      }
      return removed
    },
  }
}

/**
 * The conditions of a delivery list. `q` matches event, ids, webhook-id and payload with ASCII letters folded,
 * as SQLite's lower() folds them, on either engine.
 */
function deliveryFilter(engine: Engine, f: DeliveryFilter): SQL | undefined {
  const d = engine.t.webhookDeliveries
  const parts: (SQL | undefined)[] = [eq(d.endpointId, f.endpointId)]
  if (f.statuses) parts.push(inArray(d.status, f.statuses as DeliveryStatus[]))
  if (f.event) parts.push(eq(d.event, f.event))
  if (f.from !== undefined) parts.push(gte(d.createdAt, f.from))
  if (f.to !== undefined) parts.push(lt(d.createdAt, f.to))
  if (f.since !== undefined) parts.push(gt(d.createdAt, f.since))
  if (f.q) {
    const like = `%${escapeLike(f.q.toLowerCase())}%`
    const matches = (text: AnyColumn | SQL) => sql`${engine.asciiLower(text)} like ${like} escape '\\'`
    parts.push(
      or(
        matches(d.event),
        matches(d.id),
        matches(sql`coalesce(${d.eventId}, '')`),
        matches(d.idempotencyKey),
        // PostgreSQL's jsonb text spaces its separators (`"a": 1`); values and keys match as on SQLite.
        matches(sql`coalesce(cast(${d.payload} as text), '')`),
      ),
    )
  }
  return and(...parts)
}
