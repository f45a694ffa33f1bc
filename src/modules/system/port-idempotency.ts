// Stored answers of POSTs sent with an Idempotency-Key: the HTTP layer declares what it asks of storage
// (http/idempotency.ts); repo-idempotency.ts answers it on either engine.
export type { IdempotencyRecord, IdempotencyRepo, NewIdempotencyRecord } from '../../http/idempotency'
