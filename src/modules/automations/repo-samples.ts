// Where real samples come from: the envelopes already delivered to the workspace's webhook endpoints and
// REST-hook subscriptions, then the events still in the outbox (pruned three days after dispatch). Read-only.
// The port comes first (plain types; Promises, so another database can sit behind it); SQLite follows.
import { and, desc, eq, isNotNull, min } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { outbox, webhookDeliveries, webhookEndpoints } from '../../db/schema'
import type { EventEnvelope } from '../../events/outbox'
import { iso } from '../../platform/clock'

export type SampleMode = 'live' | 'test'

export interface SamplesRepo {
  /**
   * Envelopes of `type` sent to the workspace's endpoints and subscriptions of `mode` (ping deliveries
   * included: they are real webhook.test events), one per event however many endpoints or replays carried
   * it; newest first, by when each event was first delivered.
   */
  deliveredEnvelopes(workspaceId: string, mode: SampleMode, type: string, limit: number): Promise<Record<string, unknown>[]>
  /** Events of `type` of the workspace in `mode` still in the outbox, newest first. */
  recentEvents(workspaceId: string, mode: SampleMode, type: string, limit: number): Promise<EventEnvelope[]>
}

export function createSamplesRepo(db: Db): SamplesRepo {
  return {
    async deliveredEnvelopes(workspaceId, mode, type, limit) {
      const d = webhookDeliveries
      const e = webhookEndpoints
      // Grouped by event: one event fans out to every endpoint and may be replayed; a replay's later
      // creation time must not make an old event look recent, hence the earliest delivery per event.
      const firstSent = min(d.createdAt)
      const rows = db
        .select({ payload: d.payload, firstSent })
        .from(d)
        .innerJoin(e, eq(e.id, d.endpointId))
        .where(and(eq(e.workspaceId, workspaceId), eq(e.mode, mode), eq(d.workspaceId, workspaceId), eq(d.event, type), eq(d.batchOpen, false), isNotNull(d.eventId), isNotNull(d.payload)))
        .groupBy(d.eventId)
        .orderBy(desc(firstSent), desc(d.eventId))
        .limit(limit)
        .all()
      return rows.flatMap((r) => (r.payload ? [r.payload] : []))
    },
    async recentEvents(workspaceId, mode, type, limit) {
      const rows = db
        .select()
        .from(outbox)
        .where(and(eq(outbox.workspaceId, workspaceId), eq(outbox.mode, mode), eq(outbox.type, type)))
        .orderBy(desc(outbox.seq))
        .limit(limit)
        .all()
      return rows.map((r) => ({ id: r.id, type: r.type, timestamp: iso(r.createdAt), mode: r.mode, data: r.data }))
    },
  }
}
