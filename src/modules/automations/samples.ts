// GET /zapier/samples: what Zapier's performList and Make's sample step show while a trigger is set up. Real
// events first (the caller's own data maps best), a synthetic one only when there is none; either way full
// envelopes with their `id`, which Zapier uses to dedupe.
import type { Clock } from '../../platform/clock'
import { Issues } from '../../platform/errors'
import type { EventDefinition } from '../../events/catalogue'
import { EVENT_CATALOGUE } from '../webhooks/model'
import type { Caller } from '../identity'
import { sampleEnvelope } from './example'
import { flatten } from './flatten'
import type { SampleMode, SamplesRepo } from './port-samples'

export interface SamplesCtx {
  samples: SamplesRepo
  clock: Clock
}

/** Zapier shows at most three samples and picks among them. */
export const SAMPLE_LIMIT = 3

export async function listSamples(ctx: SamplesCtx, caller: Caller, query: { event?: string; flat?: string }): Promise<Record<string, unknown>[]> {
  const { def, flat } = parseQuery(query)
  const shape = flat ? flatten : (v: Record<string, unknown>) => v
  const now = ctx.clock.now()
  if (!def) return EVENT_CATALOGUE.map((e) => ({ event: e.type, description: e.description, sample: shape(sampleEnvelope(e, caller.mode, now)) }))
  const real = await recentEnvelopes(ctx.samples, caller.workspace.id, caller.mode, def.type)
  return (real.length ? real : [sampleEnvelope(def, caller.mode, now)]).map(shape)
}

function parseQuery(query: { event?: string; flat?: string }): { def: EventDefinition | undefined; flat: boolean } {
  const issues = new Issues('query')
  let def: EventDefinition | undefined
  if (query.event !== undefined) {
    def = EVENT_CATALOGUE.find((e) => e.type === query.event)
    if (!def) issues.add('event', `unknown event "${query.event}"; valid names: ${EVENT_CATALOGUE.map((e) => e.type).join(', ')}`)
  }
  if (query.flat !== undefined && query.flat !== '1' && query.flat !== '0') issues.add('flat', 'must be 1 (nested keys joined with __) or 0')
  issues.throwIfAny()
  return { def, flat: query.flat === '1' }
}

/**
 * Up to SAMPLE_LIMIT distinct events, newest first: delivered envelopes, topped up from the outbox (events
 * no endpoint took, or not dispatched yet). An outbox row may be an event already delivered: the ids dedupe.
 */
async function recentEnvelopes(repo: SamplesRepo, workspaceId: string, mode: SampleMode, type: string): Promise<Record<string, unknown>[]> {
  const byId = new Map<string, Record<string, unknown>>()
  const add = (envelope: Record<string, unknown>) => {
    if (typeof envelope.id === 'string' && !byId.has(envelope.id)) byId.set(envelope.id, envelope)
  }
  for (const envelope of await repo.deliveredEnvelopes(workspaceId, mode, type, SAMPLE_LIMIT)) add(envelope)
  // At most byId.size of these can repeat a delivered one, so SAMPLE_LIMIT rows always fill the gap.
  if (byId.size < SAMPLE_LIMIT) for (const event of await repo.recentEvents(workspaceId, mode, type, SAMPLE_LIMIT)) add({ ...event })
  return [...byId.values()].sort(newestFirst).slice(0, SAMPLE_LIMIT)
}

/** By the envelope's timestamp (ISO 8601 in UTC, so text order is time order), then its time-ordered id. */
function newestFirst(a: Record<string, unknown>, b: Record<string, unknown>): number {
  return cmp(String(b.timestamp ?? ''), String(a.timestamp ?? '')) || cmp(String(b.id), String(a.id))
}

const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0)
