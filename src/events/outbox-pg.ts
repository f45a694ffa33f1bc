// Until every consumer is a transaction body (outbox.ts's EventConsumer): the PostgreSQL form modules still give.
import type { PgTx } from '../db/pg/client'
import type { OutboxEvent } from './outbox'

export type OutboxConsumerPg = (tx: PgTx, event: OutboxEvent, now: number) => Promise<void>
