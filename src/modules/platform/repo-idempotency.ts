// Stored answers of POSTs sent with an Idempotency-Key.
// The port comes first (plain types, Promises, so another database can sit behind the same signatures);
// the SQLite implementation follows it.
import { and, eq, lt } from 'drizzle-orm'
import type { Db } from '../../db/client'
import type { Insertable } from '../../db/rows'
import { idempotencyRecords } from '../../db/schema'

/** A POST's stored answer under its Idempotency-Key, per API key. */
export interface IdempotencyRecord {
  id: string
  apiKeyId: string
  key: string
  method: string
  path: string
  requestHash: string
  /** Null while the first request is still being processed. */
  responseStatus: number | null
  responseBody: string | null
  createdAt: number
  expiresAt: number
}

export type NewIdempotencyRecord = Insertable<IdempotencyRecord>

export interface IdempotencyRepo {
  find(apiKeyId: string, key: string): Promise<IdempotencyRecord | undefined>
  /** Reserves the key; false when another request holds it already. Expired holders are replaced. */
  reserve(record: NewIdempotencyRecord, now: number): Promise<boolean>
  /** Stores the answer of the request that holds the record. */
  complete(id: string, status: number, body: string): Promise<void>
  /** Gives the key up (the request failed), so the next request with it runs afresh. */
  release(id: string): Promise<void>
  /** Deletes every record past its expiry; answers how many. */
  pruneExpired(now: number): Promise<number>
}

// --- SQLite ------------------------------------------------------------------------------------------

export function createIdempotencyRepo(db: Db): IdempotencyRepo {
  return {
    async find(apiKeyId, key) {
      return db.select().from(idempotencyRecords).where(and(eq(idempotencyRecords.apiKeyId, apiKeyId), eq(idempotencyRecords.key, key))).get()
    },
    async reserve(record, now) {
      return db.transaction((tx) => {
        tx.delete(idempotencyRecords)
          .where(and(eq(idempotencyRecords.apiKeyId, record.apiKeyId), eq(idempotencyRecords.key, record.key), lt(idempotencyRecords.expiresAt, now + 1)))
          .run()
        const inserted = tx.insert(idempotencyRecords).values(record).onConflictDoNothing().returning({ id: idempotencyRecords.id }).all()
        return inserted.length === 1
      })
    },
    async complete(id, status, body) {
      db.update(idempotencyRecords).set({ responseStatus: status, responseBody: body }).where(eq(idempotencyRecords.id, id)).run()
    },
    async release(id) {
      db.delete(idempotencyRecords).where(eq(idempotencyRecords.id, id)).run()
    },
    async pruneExpired(now) {
      return db.delete(idempotencyRecords).where(lt(idempotencyRecords.expiresAt, now + 1)).returning({ id: idempotencyRecords.id }).all().length
    },
  }
}
