// Stored answers of POSTs sent with an Idempotency-Key (port-idempotency.ts), on either engine, for requests
// reaching one process or several nodes at once.
import { and, eq, lt } from 'drizzle-orm'
import { rows, type Engine } from '../../db/engine'
import type { IdempotencyRepo } from './port-idempotency'

export function createIdempotencyRepo(engine: Engine): IdempotencyRepo {
  const { db } = engine
  const { idempotencyRecords } = engine.t
  return {
    async find(apiKeyId, key) {
      const [row] = await db
        .select()
        .from(idempotencyRecords)
        .where(and(eq(idempotencyRecords.apiKeyId, apiKeyId), eq(idempotencyRecords.key, key)))
        .limit(1)
      return row
    },
    // Exactly one of the requests racing for a key wins, through the unique index rather than a read: on
    // PostgreSQL a second insert waits for the first one's commit and then does nothing. A request waiting to
    // delete an expired holder that another one deleted first finds nothing left to delete, and its insert
    // then meets that request's new record.
    reserve: (record, now) =>
      engine.transaction(function* (tx) {
        yield* rows(
          tx
            .delete(idempotencyRecords)
            .where(and(eq(idempotencyRecords.apiKeyId, record.apiKeyId), eq(idempotencyRecords.key, record.key), lt(idempotencyRecords.expiresAt, now + 1))),
        )
        const inserted = yield* rows(tx.insert(idempotencyRecords).values(record).onConflictDoNothing().returning({ id: idempotencyRecords.id }))
        return inserted.length === 1
      }),
    async complete(id, status, body) {
      await db.update(idempotencyRecords).set({ responseStatus: status, responseBody: body }).where(eq(idempotencyRecords.id, id))
    },
    async release(id) {
      await db.delete(idempotencyRecords).where(eq(idempotencyRecords.id, id))
    },
    async pruneExpired(now) {
      const removed = await db
        .delete(idempotencyRecords)
        .where(lt(idempotencyRecords.expiresAt, now + 1))
        .returning({ id: idempotencyRecords.id })
      return removed.length
    },
  }
}
