// Stored answers of POSTs sent with an Idempotency-Key, on PostgreSQL: the IdempotencyRepo port
// (repo-idempotency.ts) with the meaning of its SQLite twin, for requests reaching several nodes at once.
import { and, eq, lt } from 'drizzle-orm'
import type { PgDb } from '../../db/pg/client'
import { idempotencyRecords } from '../../db/pg/schema.generated'
import type { AsyncPort } from '../../db/rows'
import type { IdempotencyRepo } from './repo-idempotency'

export function createIdempotencyRepoPg(db: PgDb): AsyncPort<IdempotencyRepo> {
  return {
    async find(apiKeyId, key) {
      const [row] = await db
        .select()
        .from(idempotencyRecords)
        .where(and(eq(idempotencyRecords.apiKeyId, apiKeyId), eq(idempotencyRecords.key, key)))
        .limit(1)
      return row
    },
    async reserve(record, now) {
      // Exactly one of the requests racing for a key wins, through the unique index rather than a read: a
      // second insert waits for the first one's commit and then does nothing. A request waiting to delete an
      // expired holder that another one deleted first finds nothing left to delete, and its insert then
      // meets that request's new record.
      return db.transaction(async (tx) => {
        await tx
          .delete(idempotencyRecords)
          .where(and(eq(idempotencyRecords.apiKeyId, record.apiKeyId), eq(idempotencyRecords.key, record.key), lt(idempotencyRecords.expiresAt, now + 1)))
        const inserted = await tx.insert(idempotencyRecords).values(record).onConflictDoNothing().returning({ id: idempotencyRecords.id })
        return inserted.length === 1
      })
    },
    async complete(id, status, body) {
      await db.update(idempotencyRecords).set({ responseStatus: status, responseBody: body }).where(eq(idempotencyRecords.id, id))
    },
    async release(id) {
      await db.delete(idempotencyRecords).where(eq(idempotencyRecords.id, id))
    },
    async pruneExpired(now) {
      const removed = await db.delete(idempotencyRecords).where(lt(idempotencyRecords.expiresAt, now + 1)).returning({ id: idempotencyRecords.id })
      return removed.length
    },
  }
}
