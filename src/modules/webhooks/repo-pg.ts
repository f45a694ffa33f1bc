// The webhooks repo on PostgreSQL: WebhooksRepo (repo.ts) with the same meaning, for several nodes on one
// database. SQLite's single writer made a read followed by a write safe; here every such decision is taken
// on a locked row or by a conditional statement, as the comments at each say:
// - an attempt is recorded once: the delivery moves only from the attempt before it (a second recording of
//   the same attempt, from another node, finds nothing to move and writes nothing);
// - the endpoints an attempt batch touches are locked first, in id order, so batches recorded on several
//   nodes, an endpoint deleted meanwhile, and the disable decision never interleave or deadlock;
// - a replay locks its original, so one original is replayed once however many ask at once;
// - counters move in SQL (`failure_count + 1`), never read and written back;
// - an endpoint's maxConcurrent is counted across nodes by slots held as advisory locks (createDeliverySlotsPg).
import type { SQL as BunSQL } from 'bun'
import { and, asc, count, desc, eq, gt, gte, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm'
import { bunClientOf, type PgDb, type PgTx } from '../../db/pg/client'
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../db/pg/schema.generated'
import { escapeLike } from '../../db/like'
import type { AsyncPort } from '../../db/rows'
import { completeInTransactionPg } from '../../jobs/repo-queue-pg'
import type { AttemptRecord, AttemptRow, AutoDisable, DeliveryRow, DeliveryStatus, EndpointRow, WebhooksRepo } from './repo'
import { byBytes, closeBatchInPg, enqueueDeliverPg } from './repo-fanout-pg'

/** Deliveries pruned per transaction, as on SQLite. */
const PRUNE_CHUNK = 5_000

/** The port on PostgreSQL (it has no synchronous reads, so it is the port itself). */
export type WebhooksRepoPg = AsyncPort<WebhooksRepo>

const endpointRow = (row: unknown) => row as EndpointRow | undefined
const deliveryRow = (row: unknown) => row as DeliveryRow | undefined

export function createWebhooksRepoPg(db: PgDb): WebhooksRepoPg {
  const e = webhookEndpoints
  const d = webhookDeliveries
  return {
    async insertEndpoint(row) {
      const [inserted] = await db.insert(e).values(row).returning()
      return endpointRow(inserted)!
    },
    async findEndpoint(workspaceId, id) {
      const [row] = await db.select().from(e).where(and(eq(e.id, id), eq(e.workspaceId, workspaceId)))
      return endpointRow(row)
    },
    async endpointById(id) {
      const [row] = await db.select().from(e).where(eq(e.id, id))
      return endpointRow(row)
    },
    async listEndpoints(workspaceId, kind, mode) {
      const where = and(eq(e.workspaceId, workspaceId), eq(e.kind, kind), isNull(e.deletedAt), mode ? eq(e.mode, mode) : undefined)
      return (await db.select().from(e).where(where).orderBy(asc(e.createdAt), asc(byBytes(e.id)))) as EndpointRow[]
    },
    async countEndpoints(workspaceId, kind) {
      const [row] = await db.select({ n: count() }).from(e).where(and(eq(e.workspaceId, workspaceId), eq(e.kind, kind), isNull(e.deletedAt)))
      return row?.n ?? 0
    },
    async updateEndpoint(id, patch) {
      const [row] = await db.update(e).set(patch).where(eq(e.id, id)).returning()
      return endpointRow(row)
    },
    async rotateSecret(id, secret, previousUntil, now) {
      // One statement: `secret` on the right is the row's own, so two rotations at once chain (the second
      // keeps the first's new secret as its previous one) instead of both keeping the secret they read.
      const [row] = await db
        .update(e)
        .set({
          secret,
          previousSecret: previousUntil === null ? null : sql`${e.secret}`,
          previousSecretExpiresAt: previousUntil,
          updatedAt: now,
        })
        .where(eq(e.id, id))
        .returning()
      return endpointRow(row)
    },
    async deleteEndpoint(id) {
      return (await db.delete(e).where(eq(e.id, id)).returning({ id: e.id })).length > 0
    },
    async removeRestHook(id, reason, now) {
      return db.transaction((tx) => removeRestHookInPg(tx, id, reason, now))
    },

    async findDelivery(endpointId, id) {
      const [row] = await db.select().from(d).where(and(eq(d.id, id), eq(d.endpointId, endpointId)))
      return deliveryRow(row)
    },
    async deliveryById(id) {
      const [row] = await db.select().from(d).where(eq(d.id, id))
      return deliveryRow(row)
    },
    async listDeliveries(f) {
      const parts: (SQL | undefined)[] = [eq(d.endpointId, f.endpointId)]
      if (f.statuses) parts.push(inArray(d.status, f.statuses as DeliveryStatus[]))
      if (f.event) parts.push(eq(d.event, f.event))
      if (f.from !== undefined) parts.push(gte(d.createdAt, f.from))
      if (f.to !== undefined) parts.push(lt(d.createdAt, f.to))
      if (f.since !== undefined) parts.push(gt(d.createdAt, f.since))
      if (f.q) {
        const like = `%${escapeLike(f.q.toLowerCase())}%`
        parts.push(
          or(
            sql`lower(${d.event}) like ${like} escape '\\'`,
            sql`lower(${d.id}) like ${like} escape '\\'`,
            sql`lower(coalesce(${d.eventId}, '')) like ${like} escape '\\'`,
            sql`lower(${d.idempotencyKey}) like ${like} escape '\\'`,
            // jsonb's text spaces its separators (`"a": 1`); values and keys match as on SQLite.
            sql`lower(coalesce(${d.payload}::text, '')) like ${like} escape '\\'`,
          ),
        )
      }
      return (await db
        .select()
        .from(d)
        .where(and(...parts))
        .orderBy(desc(d.createdAt), desc(byBytes(d.id)))
        .limit(f.limit)) as DeliveryRow[]
    },
    async attempts(deliveryId) {
      const a = webhookAttempts
      return (await db.select().from(a).where(eq(a.deliveryId, deliveryId)).orderBy(asc(a.attempt), asc(a.startedAt), asc(byBytes(a.id)))) as AttemptRow[]
    },
    async countDeadReplayable(endpointId) {
      const [row] = await db.select({ n: count() }).from(d).where(and(eq(d.endpointId, endpointId), eq(d.status, 'dead'), eq(d.replayable, true)))
      return row?.n ?? 0
    },

    async insertDelivery(row, job, now) {
      return db.transaction(async (tx) => {
        const [inserted] = await tx.insert(d).values(row).returning()
        if (job) await enqueueDeliverPg(tx, { deliveryId: row.id, attempt: 1 }, job.runAt, now)
        return deliveryRow(inserted)!
      })
    },
    async replay(copies, now) {
      return db.transaction(async (tx) => {
        const out: DeliveryRow[] = []
        for (const { originalId, row } of copies) {
          // Locked: of two replays of one original at once, the second waits and finds it replayed.
          const [original] = await tx.select({ status: d.status, replayable: d.replayable }).from(d).where(eq(d.id, originalId)).for('update')
          if (!original || !original.replayable) continue
          const superseded = original.status === 'failed' || original.status === 'pending'
          await tx
            .update(d)
            .set({
              replayable: false,
              updatedAt: now,
              ...(superseded ? { status: 'dead' as const, nextAttemptAt: null, errorMessage: `superseded by replay ${row.id}` } : {}),
            })
            .where(eq(d.id, originalId))
          const [copy] = await tx.insert(d).values(row).returning()
          out.push(deliveryRow(copy)!)
          await enqueueDeliverPg(tx, { deliveryId: row.id, attempt: 1 }, now, now)
        }
        return out
      })
    },
    async deadReplayable(endpointId, limit) {
      return (await db
        .select()
        .from(d)
        .where(and(eq(d.endpointId, endpointId), eq(d.status, 'dead'), eq(d.replayable, true)))
        .orderBy(asc(d.createdAt), asc(byBytes(d.id)))
        .limit(limit)) as DeliveryRow[]
    },
    async closeBatch(deliveryId, now) {
      return db.transaction((tx) => closeBatchInPg(tx, deliveryId, now))
    },
    async recordAttempt(deliveryId, endpointId, outcome, now, autoDisable) {
      return db.transaction(async (tx) => (await recordInPg(tx, [{ deliveryId, endpointId, outcome, now, job: null }], autoDisable))[0]!)
    },
    async recordAttempts(records, autoDisable) {
      return db.transaction((tx) => recordInPg(tx, records, autoDisable))
    },
    async abandon(deliveryId, reason, now) {
      // Conditional: only a delivery still waiting dies; one recorded meanwhile keeps its outcome.
      await db
        .update(d)
        .set({ status: 'dead', nextAttemptAt: null, errorMessage: reason, updatedAt: now })
        .where(and(eq(d.id, deliveryId), inArray(d.status, ['pending', 'failed'])))
    },
    async defer(payload, runAt, now) {
      await db.transaction((tx) => enqueueDeliverPg(tx, payload, runAt, now))
    },
    async pruneDeliveries(before) {
      return pruneDeliveriesPg(db, before)
    },
  }
}

/**
 * Records each attempt in order, as on SQLite (repo.ts attemptRecording): an endpoint's successes in a row
 * are written once, as the last of them, and a failure first writes the successes before it.
 */
async function recordInPg(tx: PgTx, records: AttemptRecord[], autoDisable: AutoDisable): Promise<(boolean | null)[]> {
  const e = webhookEndpoints
  const d = webhookDeliveries
  // The endpoints first, in one order on every node: the counters and the disable decision below are then
  // this transaction's alone, and two batches (or a batch and an endpoint's delete, which locks the
  // endpoint before its deliveries) cannot each hold a row the other waits for. NO KEY UPDATE leaves the
  // fan-out's inserts of new deliveries for these endpoints (their foreign key check) free to go on.
  const endpointIds = [...new Set(records.map((r) => r.endpointId))]
  if (endpointIds.length) await tx.select({ id: e.id }).from(e).where(inArray(e.id, endpointIds)).orderBy(asc(byBytes(e.id))).for('no key update')

  const lastSuccess = new Map<string, number>()
  const writeSuccess = async (endpointId: string) => {
    const at = lastSuccess.get(endpointId)
    if (at === undefined) return
    await tx.update(e).set({ failureCount: 0, failingSince: null, lastSuccessAt: at }).where(eq(e.id, endpointId))
    lastSuccess.delete(endpointId)
  }
  const results: (boolean | null)[] = []
  for (const { deliveryId, endpointId, outcome, now, job } of records) {
    // The job goes whatever happens below: its attempt is made, and recorded or (delivery gone) moot.
    if (job) await completeInTransactionPg(bunClientOf(tx), job.id, job.workerId)
    const r = outcome.delivery
    // Moves only from the attempt before this one: the same attempt recorded again (another node's job
    // for it) changes nothing and is answered like a delivery gone. No row also means the delivery went
    // with its endpoint, deleted while the request was out.
    const moved = await tx
      .update(d)
      .set({
        attempt: r.attempt,
        status: r.status,
        responseStatus: r.responseStatus,
        durationMs: r.durationMs,
        nextAttemptAt: r.nextAttemptAt,
        deliveredAt: sql`coalesce(${r.deliveredAt ?? null}::bigint, ${d.deliveredAt})`,
        errorMessage: r.errorMessage,
        updatedAt: r.updatedAt,
      })
      .where(and(eq(d.id, deliveryId), eq(d.attempt, r.attempt - 1)))
      .returning({ id: d.id })
    if (!moved.length) {
      results.push(null)
      continue
    }
    await tx.insert(webhookAttempts).values(outcome.attempt)
    if (outcome.next) await enqueueDeliverPg(tx, outcome.next.payload, outcome.next.runAt, now)
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
    await writeSuccess(endpointId)
    results.push(await failedPg(tx, endpointId, effect, now, autoDisable))
  }
  for (const endpointId of [...lastSuccess.keys()]) await writeSuccess(endpointId)
  return results
}

/** A failed attempt counts against the endpoint; answers whether that disabled it (its row is locked). */
async function failedPg(tx: PgTx, endpointId: string, effect: { kind: 'failure' } | { kind: 'gone'; reason: string }, now: number, autoDisable: AutoDisable): Promise<boolean> {
  const e = webhookEndpoints
  const [before] = await tx.select({ isActive: e.isActive, kind: e.kind }).from(e).where(eq(e.id, endpointId))
  const since = sql`coalesce(${e.failingSince}, ${now}::bigint)`
  const exhausted = sql`(${e.failureCount} + 1 >= ${autoDisable.failures}::bigint and ${since} <= ${now - autoDisable.afterMs}::bigint)`
  const disabling = sql`(${e.isActive} and ${exhausted})`
  const [after] = await tx
    .update(e)
    .set(
      effect.kind === 'gone'
        ? { failureCount: sql`${e.failureCount} + 1`, failingSince: since, isActive: false, disabledReason: effect.reason, updatedAt: now }
        : {
            failureCount: sql`${e.failureCount} + 1`,
            failingSince: since,
            isActive: sql`case when ${disabling} then false else ${e.isActive} end`,
            disabledReason: sql`case when ${disabling} then ${autoDisable.reason}::text else ${e.disabledReason} end`,
          },
    )
    .where(eq(e.id, endpointId))
    .returning({ isActive: e.isActive })
  if (effect.kind === 'gone' && before?.kind === 'rest_hook') await removeRestHookInPg(tx, endpointId, effect.reason, now)
  return !!before?.isActive && !!after && !after.isActive
}

/** removeRestHookIn of repo.ts: conditional on the row not removed yet, so it happens once. */
async function removeRestHookInPg(tx: PgTx, id: string, reason: string, now: number): Promise<boolean> {
  const e = webhookEndpoints
  const d = webhookDeliveries
  const removed = await tx
    .update(e)
    .set({ isActive: false, deletedAt: now, disabledReason: reason, secret: '', previousSecret: null, previousSecretExpiresAt: null, updatedAt: now })
    .where(and(eq(e.id, id), eq(e.kind, 'rest_hook'), isNull(e.deletedAt)))
    .returning({ id: e.id })
  if (!removed.length) return false
  await tx
    .update(d)
    .set({ status: 'dead', nextAttemptAt: null, errorMessage: `Not sent: the subscription was removed (${reason})`, updatedAt: now })
    .where(and(eq(d.endpointId, id), inArray(d.status, ['pending', 'failed'])))
  return true
}

/** pruneDeliveries of repo.ts: endpoint by endpoint, at most PRUNE_CHUNK per statement (its own transaction). */
async function pruneDeliveriesPg(db: PgDb, before: number): Promise<number> {
  const d = webhookDeliveries
  const endpoints = await db.select({ id: webhookEndpoints.id }).from(webhookEndpoints)
  let removed = 0
  for (const { id } of endpoints) {
    for (;;) {
      const chunk = db
        .select({ id: d.id })
        .from(d)
        .where(and(eq(d.endpointId, id), inArray(d.status, ['success', 'dead']), lt(d.createdAt, before)))
        .limit(PRUNE_CHUNK)
      const n = (await db.delete(d).where(inArray(d.id, chunk)).returning({ id: d.id })).length
      removed += n
      if (n < PRUNE_CHUNK) break
    }
  }
  return removed
}

/** The first key of a delivery slot's advisory lock ("lnkw"); the second is the hash of endpoint and slot. */
const DELIVERY_SLOT_LOCK = 0x6c6e6b77

/** An endpoint's maxConcurrent counted across every node (see createDeliverySlotsPg). */
export interface DeliverySlots {
  /** Takes a free one of the endpoint's `max` slots: its number, or null when all are taken (on any node). */
  take(endpointId: string, max: number): Promise<number | null>
  release(endpointId: string, slot: number): Promise<void>
  /** Frees every slot this node holds and gives the connection back. */
  close(): Promise<void>
}

/**
 * Per-endpoint maxConcurrent across nodes. No row counts the requests in flight, and a slot must outlive
 * any transaction (the request goes out between the claim and the recording) yet be freed when its node
 * dies: slot i of an endpoint is a session-level advisory lock, taken without waiting
 * (pg_try_advisory_lock, atomic across nodes) on one connection this node keeps for them, and freed by
 * PostgreSQL itself when that connection ends. A session may take its own lock twice, so this node keeps
 * the slots it holds or is trying, and never tries one of them again. Two endpoints whose slot keys hash
 * alike share those slots: stricter, never looser. Per-process waiting and the total cap stay in memory
 * (state.ts); this is the count the nodes share.
 */
export async function createDeliverySlotsPg(client: BunSQL): Promise<DeliverySlots> {
  const conn = await client.reserve()
  const held = new Map<string, Set<number>>()
  const key = (endpointId: string, slot: number) => `${endpointId}/${slot}`
  return {
    async take(endpointId, max) {
      const mine = held.get(endpointId) ?? new Set<number>()
      held.set(endpointId, mine)
      for (let slot = 0; slot < max; slot++) {
        if (mine.has(slot)) continue
        // Marked before the await: a take of this node running meanwhile tries another slot.
        mine.add(slot)
        const [row] = await conn`SELECT pg_try_advisory_lock(${DELIVERY_SLOT_LOCK}::int, hashtext(${key(endpointId, slot)})) AS ok`
        if (row.ok) return slot
        mine.delete(slot)
      }
      if (!mine.size) held.delete(endpointId)
      return null
    },
    async release(endpointId, slot) {
      const mine = held.get(endpointId)
      if (!mine?.has(slot)) return
      await conn`SELECT pg_advisory_unlock(${DELIVERY_SLOT_LOCK}::int, hashtext(${key(endpointId, slot)}))`
      mine.delete(slot)
      if (!mine.size) held.delete(endpointId)
    },
    async close() {
      held.clear()
      // The connection goes back to the pool: its session must not keep the slots.
      await conn`SELECT pg_advisory_unlock_all()`
      conn.release()
    },
  }
}
