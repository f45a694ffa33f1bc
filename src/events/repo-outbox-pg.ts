// Until the links, pages, domains and clicks repos are written on the engine seam: publish() inside their
// PostgreSQL twins' drizzle transactions (outbox.ts's publishing() is the one form for code written once).
import { notifyIn, type PgTx } from '../db/pg/client'
import { outbox } from '../db/pg/schema.generated'
import { iso } from '../platform/clock'
import { sortableId } from '../platform/random'
import { EVENT_TYPES } from './catalogue'
import { OUTBOX_CHANNEL, type EventEnvelope, type PublishInput } from './outbox'

/** Tells the nodes at commit that events wait. */
export const notifyOutboxIn = (tx: PgTx) => notifyIn(tx, OUTBOX_CHANNEL, 'due')

export async function publishPg(tx: PgTx, input: PublishInput, now: number): Promise<EventEnvelope> {
  if (!EVENT_TYPES.has(input.type)) throw new Error(`unknown event type "${input.type}": add it to the catalogue`)
  const id = sortableId('evt', now)
  await tx.insert(outbox).values({ id, type: input.type, mode: input.mode, workspaceId: input.workspaceId, data: input.data, createdAt: now })
  await notifyOutboxIn(tx)
  return { id, type: input.type, timestamp: iso(now), mode: input.mode, data: input.data }
}
