// The outbox on PostgreSQL: publish() of outbox.ts inside the caller's drizzle transaction, so an event
// exists exactly when the change it reports commits. A notice on OUTBOX_CHANNEL at commit wakes the node
// that dispatches (whichever holds the sweep lock) without waiting for its poll.
import { notifyIn, type PgTx } from '../db/pg/client'
import { outbox } from '../db/pg/schema.generated'
import { iso } from '../platform/clock'
import { sortableId } from '../platform/random'
import { EVENT_TYPES } from './catalogue'
import type { EventEnvelope, PublishInput } from './outbox'

/** The channel of "events wait for dispatch" (no payload). */
export const OUTBOX_CHANNEL = 'lnk_outbox'

export async function publishPg(tx: PgTx, input: PublishInput, now: number): Promise<EventEnvelope> {
  if (!EVENT_TYPES.has(input.type)) throw new Error(`unknown event type "${input.type}": add it to the catalogue`)
  const id = sortableId('evt', now)
  await tx.insert(outbox).values({ id, type: input.type, mode: input.mode, workspaceId: input.workspaceId, data: input.data, createdAt: now })
  // PostgreSQL folds identical notices of one transaction into one.
  await notifyIn(tx, OUTBOX_CHANNEL, '')
  return { id, type: input.type, timestamp: iso(now), mode: input.mode, data: input.data }
}
