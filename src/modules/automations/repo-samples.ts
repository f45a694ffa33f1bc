// Where real samples come from: the envelopes already delivered to the workspace's webhook endpoints and
// REST-hook subscriptions, then the events still in the outbox (pruned three days after dispatch). Read-only.
// The port comes first (plain types; Promises, so another database can sit behind it); SQLite follows.
import { and, desc, eq, isNotNull } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { outbox, webhookDeliveries, webhookEndpoints } from '../../db/schema'
import type { EventEnvelope } from '../../events/outbox'
import { iso } from '../../platform/clock'

export type SampleMode = 'live' | 'test'

/**
 * How far back each read looks: the newest deliveries of each endpoint and the newest outbox events. A
 * sample call stays a few milliseconds however many million events a busy workspace sent; an event type
 * rarer than that window answers with the synthetic sample.
 */
export const SAMPLE_SCAN_WINDOW = 20_000

export interface SamplesRepo {
  /**
   * Distinct envelopes of `type` sent to the workspace's endpoints and subscriptions of `mode` (ping
   * deliveries included: they are real webhook.test events), within each endpoint's newest
   * SAMPLE_SCAN_WINDOW deliveries: at least the `limit` newest events, in no particular order (the caller
   * orders them with the outbox's).
   */
  deliveredEnvelopes(workspaceId: string, mode: SampleMode, type: string, limit: number): Promise<Record<string, unknown>[]>
  /** Events of `type` of the workspace in `mode` among the newest SAMPLE_SCAN_WINDOW outbox rows, newest first. */
  recentEvents(workspaceId: string, mode: SampleMode, type: string, limit: number): Promise<EventEnvelope[]>
}

export function createSamplesRepo(db: Db): SamplesRepo {
  const d = webhookDeliveries
  const e = webhookEndpoints
  return {
    async deliveredEnvelopes(workspaceId, mode, type, limit) {
      const endpoints = db.select({ id: e.id }).from(e).where(and(eq(e.workspaceId, workspaceId), eq(e.mode, mode))).all()
      const byEvent = new Map<string, Record<string, unknown>>()
      for (const { id } of endpoints) {
        // The endpoint's newest deliveries through its (endpoint, created) index, then the type: an event
        // may have been replayed, so a few more than `limit` are taken and deduped by event.
        const recent = db
          .select({ eventId: d.eventId, payload: d.payload, event: d.event, batchOpen: d.batchOpen })
          .from(d)
          .where(eq(d.endpointId, id))
          .orderBy(desc(d.createdAt))
          .limit(SAMPLE_SCAN_WINDOW)
          .as('recent')
        const rows = db
          .select({ eventId: recent.eventId, payload: recent.payload })
          .from(recent)
          .where(and(eq(recent.event, type), eq(recent.batchOpen, false), isNotNull(recent.eventId), isNotNull(recent.payload)))
          .limit(limit * 4)
          .all()
        for (const r of rows) if (r.eventId && r.payload && !byEvent.has(r.eventId)) byEvent.set(r.eventId, r.payload)
      }
      return [...byEvent.values()]
    },
    async recentEvents(workspaceId, mode, type, limit) {
      const recent = db.select().from(outbox).orderBy(desc(outbox.seq)).limit(SAMPLE_SCAN_WINDOW).as('recent')
      const rows = db
        .select()
        .from(recent)
        .where(and(eq(recent.workspaceId, workspaceId), eq(recent.mode, mode), eq(recent.type, type)))
        .limit(limit)
        .all()
      return rows.map((r) => ({ id: r.id, type: r.type, timestamp: iso(r.createdAt), mode: r.mode, data: r.data }))
    },
  }
}
