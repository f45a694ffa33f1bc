// Stored answers of POSTs sent with an Idempotency-Key.
import { and, eq, lt } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { idempotencyRecords } from '../../db/schema'

export type IdempotencyRecord = typeof idempotencyRecords.$inferSelect

export function createIdempotencyRepo(db: Db) {
  return {
    async find(apiKeyId: string, key: string): Promise<IdempotencyRecord | undefined> {
      return db.select().from(idempotencyRecords).where(and(eq(idempotencyRecords.apiKeyId, apiKeyId), eq(idempotencyRecords.key, key))).get()
    },
    /** Reserves the key; false when another request holds it already. Expired holders are replaced. */
    async reserve(record: typeof idempotencyRecords.$inferInsert, now: number): Promise<boolean> {
      return db.transaction((tx) => {
        tx.delete(idempotencyRecords)
          .where(and(eq(idempotencyRecords.apiKeyId, record.apiKeyId), eq(idempotencyRecords.key, record.key), lt(idempotencyRecords.expiresAt, now + 1)))
          .run()
        const inserted = tx.insert(idempotencyRecords).values(record).onConflictDoNothing().returning({ id: idempotencyRecords.id }).all()
        return inserted.length === 1
      })
    },
    async complete(id: string, status: number, body: string) {
      db.update(idempotencyRecords).set({ responseStatus: status, responseBody: body }).where(eq(idempotencyRecords.id, id)).run()
    },
    async release(id: string) {
      db.delete(idempotencyRecords).where(eq(idempotencyRecords.id, id)).run()
    },
    /** Deletes every record past its expiry; answers how many. */
    async pruneExpired(now: number): Promise<number> {
      return db.delete(idempotencyRecords).where(lt(idempotencyRecords.expiresAt, now + 1)).returning({ id: idempotencyRecords.id }).all().length
    },
  }
}

export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>
