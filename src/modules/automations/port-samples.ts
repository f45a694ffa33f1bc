// Where real samples come from: the envelopes already delivered to the workspace's webhook endpoints and
// REST-hook subscriptions, then the events still in the outbox (pruned three days after dispatch). The port,
// in plain types (repo-samples.ts answers it on either engine).
import type { EventEnvelope } from '../../events/outbox'

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
