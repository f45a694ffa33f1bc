// Stored answers of POSTs sent with an Idempotency-Key: what the HTTP layer asks of storage, in plain types
// (repo-idempotency.ts answers it on either engine).
import type { Insertable } from '../../db/rows'

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
