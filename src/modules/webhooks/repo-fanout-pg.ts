// The webhooks fan-out's statements on PostgreSQL (createFanoutStatements of repo.ts, awaited), run inside the
// outbox dispatch transaction passed to each, and the batch close and deliver-job enqueue that the
// PostgreSQL repo (repo-pg.ts) shares with them.
//
// An open batch is the one row that the fan-out (adding an event) and a deliver job (closing it) both write.
// SQLite serialized them through its single writer; here each locks the batch's row first (FOR UPDATE), so
// an event is either in the batch before the close reads its events, or finds the batch closed and starts
// a new one: never added after the read and deleted with the rest.
import { and, asc, eq, sql, type SQL, type SQLWrapper } from 'drizzle-orm'
import { bunClientOf, type PgTx } from '../../db/pg/client'
import { webhookBatchEvents, webhookDeliveries, webhookEndpoints } from '../../db/pg/schema.generated'
import { enqueuePg } from '../../jobs/repo-queue-pg'
import { DELIVER_JOB, DELIVER_JOB_MAX_ATTEMPTS, type DeliverPayload, type DeliveryRow, type EndpointRow, type FanoutStatements } from './repo'

/** createFanoutStatements' statements, each awaited inside the transaction it is given. */
export type FanoutStatementsPg = {
  [K in keyof FanoutStatements]: (tx: PgTx, ...args: Parameters<FanoutStatements[K]>) => Promise<ReturnType<FanoutStatements[K]>>
}

/**
 * Ties on a text id compare byte by byte, as SQLite does, whatever collation the database was created
 * with (ids are mixed-case base62, which a language collation orders differently).
 */
export const byBytes = (column: SQLWrapper): SQL => sql`${column} collate "C"`

export async function enqueueDeliverPg(tx: PgTx, payload: DeliverPayload, runAt: number, now: number): Promise<void> {
  await enqueuePg(bunClientOf(tx), { type: DELIVER_JOB, payload, runAt, maxAttempts: DELIVER_JOB_MAX_ATTEMPTS }, now)
}

/** closeBatchIn of repo.ts: the batch's row is locked before its events are read (see the header). */
export async function closeBatchInPg(tx: PgTx, deliveryId: string, now: number): Promise<DeliveryRow | undefined> {
  const d = webhookDeliveries
  const [row] = await tx.select().from(d).where(eq(d.id, deliveryId)).for('update')
  if (!row || !row.batchOpen) return row as DeliveryRow | undefined
  const events = await tx
    .select({ envelope: webhookBatchEvents.envelope })
    .from(webhookBatchEvents)
    .where(eq(webhookBatchEvents.deliveryId, deliveryId))
    .orderBy(asc(webhookBatchEvents.position))
  const payload = { type: 'batch', count: events.length, events: events.map((e) => e.envelope) }
  await tx.delete(webhookBatchEvents).where(eq(webhookBatchEvents.deliveryId, deliveryId))
  const [closed] = await tx
    .update(d)
    .set({ batchOpen: false, payload, batchSize: events.length, nextAttemptAt: now, updatedAt: now })
    .where(eq(d.id, deliveryId))
    .returning()
  return closed as DeliveryRow | undefined
}

// The envelope arrives serialized once per event for all its endpoints; PostgreSQL parses it as jsonb
// (a string parameter would otherwise be stored as a JSON string).
const asJsonb = (json: string | null) => sql`${json}::text::jsonb`

export function createFanoutStatementsPg(): FanoutStatementsPg {
  const d = webhookDeliveries
  const e = webhookEndpoints
  return {
    async activeEndpoints(tx, workspaceId, mode) {
      // SQLite answers them in insertion order (rowid); creation order is the same here.
      const rows = await tx
        .select()
        .from(e)
        .where(and(eq(e.workspaceId, workspaceId), eq(e.mode, mode as 'live' | 'test'), eq(e.isActive, true)))
        .orderBy(asc(e.createdAt), asc(byBytes(e.id)))
      return rows as EndpointRow[]
    },
    async insertDelivery(tx, f) {
      await tx.insert(d).values({
        id: f.id,
        endpointId: f.endpointId,
        workspaceId: f.workspaceId,
        event: f.event,
        eventId: f.eventId,
        payload: asJsonb(f.payloadJson),
        status: 'pending',
        attempt: 0,
        maxAttempts: f.maxAttempts,
        batchSize: f.batchSize,
        batchOpen: f.batchOpen,
        batchClosesAt: f.batchClosesAt,
        nextAttemptAt: f.nextAttemptAt,
        replayable: true,
        isPing: false,
        idempotencyKey: f.idempotencyKey,
        createdAt: f.now,
        updatedAt: f.now,
      })
    },
    async openBatch(tx, endpointId) {
      // Locked until the dispatch commits: a deliver job closing this batch meanwhile waits, then reads the
      // event added here (the header says why).
      const [open] = await tx
        .select({ id: d.id, batchSize: d.batchSize })
        .from(d)
        .where(and(eq(d.endpointId, endpointId), eq(d.batchOpen, true)))
        .limit(1)
        .for('update')
      return open ?? null
    },
    async addBatchEvent(tx, deliveryId, position, envelopeJson, now) {
      await tx.insert(webhookBatchEvents).values({ deliveryId, position, envelope: asJsonb(envelopeJson) })
      // In SQL, not read and written back: the size is the row's, whoever else moved it.
      await tx
        .update(d)
        .set({ batchSize: sql`${d.batchSize} + 1`, updatedAt: now })
        .where(eq(d.id, deliveryId))
    },
    async closeBatch(tx, deliveryId, now) {
      await closeBatchInPg(tx, deliveryId, now)
    },
    async enqueueDeliver(tx, payload, runAt, now) {
      await enqueueDeliverPg(tx, payload, runAt, now)
    },
  }
}
