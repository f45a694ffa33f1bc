// Where real samples come from (port-samples.ts), on either engine. Read-only, so nothing to guard against
// other nodes. SQLite reads a windowed sub-select in the order it was written; PostgreSQL keeps no order
// through a sub-select, so the outer selects order again (newest first, ids breaking ties). SQLite follows
// the index for both orders and sorts only deliveries of one creation time by id.
import { and, desc, eq, isNotNull } from 'drizzle-orm'
import type { Engine } from '../../db/engine'
import { iso } from '../../platform/clock'
import { SAMPLE_SCAN_WINDOW, type SamplesRepo } from './port-samples'

export function createSamplesRepo(engine: Engine): SamplesRepo {
  const { db } = engine
  const { outbox, webhookDeliveries: d, webhookEndpoints: e } = engine.t
  return {
    async deliveredEnvelopes(workspaceId, mode, type, limit) {
      const endpoints = await db
        .select({ id: e.id })
        .from(e)
        .where(and(eq(e.workspaceId, workspaceId), eq(e.mode, mode)))
      const byEvent = new Map<string, Record<string, unknown>>()
      for (const { id } of endpoints) {
        // The endpoint's newest deliveries through its (endpoint, created) index, then the type: an event
        // may have been replayed, so a few more than `limit` are taken and deduped by event.
        const recent = db
          .select({ id: d.id, createdAt: d.createdAt, eventId: d.eventId, payload: d.payload, event: d.event, batchOpen: d.batchOpen })
          .from(d)
          .where(eq(d.endpointId, id))
          .orderBy(desc(d.createdAt), desc(d.id))
          .limit(SAMPLE_SCAN_WINDOW)
          .as('recent')
        const rows = await db
          .select({ eventId: recent.eventId, payload: recent.payload })
          .from(recent)
          .where(and(eq(recent.event, type), eq(recent.batchOpen, false), isNotNull(recent.eventId), isNotNull(recent.payload)))
          .orderBy(desc(recent.createdAt), desc(recent.id))
          .limit(limit * 4)
        for (const r of rows) if (r.eventId && r.payload && !byEvent.has(r.eventId)) byEvent.set(r.eventId, r.payload)
      }
      return [...byEvent.values()]
    },
    async recentEvents(workspaceId, mode, type, limit) {
      const recent = db.select().from(outbox).orderBy(desc(outbox.seq)).limit(SAMPLE_SCAN_WINDOW).as('recent')
      const rows = await db
        .select()
        .from(recent)
        .where(and(eq(recent.workspaceId, workspaceId), eq(recent.mode, mode), eq(recent.type, type)))
        .orderBy(desc(recent.seq))
        .limit(limit)
      return rows.map((r) => ({ id: r.id, type: r.type, timestamp: iso(r.createdAt), mode: r.mode, data: r.data }))
    },
  }
}
