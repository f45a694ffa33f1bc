// The webhooks area's answer to "does anyone here listen for this event?": an active endpoint of the
// workspace and mode whose event patterns match. Lists are cached like the fan-out's: dropped when an
// endpoint changes in this process, and trusted for a few seconds against changes made by another process.
// Filters are not applied: an event a filter would drop costs a row, one that is never written is lost.
import type { Db } from '../../db/client'
import type { InterestSource, Mode } from '../../events/interest'
import type { Clock } from '../../platform/clock'
import { eventMatches } from './filters'
import { createFanoutStatements } from './repo'
import type { WebhooksState } from './state'

const TTL_MS = 5000
const MAX_KEYS = 10_000

export function webhookInterest(db: Db, state: WebhooksState, clock: Clock): InterestSource {
  const st = createFanoutStatements(db)
  const cache = new Map<string, { generation: number; at: number; patterns: string[][] }>()
  return (type: string, workspaceId: string, mode: Mode) => {
    const key = `${workspaceId}\u0000${mode}`
    const now = clock.now()
    let hit = cache.get(key)
    if (!hit || hit.generation !== state.generation || now < hit.at || now - hit.at >= TTL_MS) {
      if (cache.size >= MAX_KEYS) cache.clear()
      hit = { generation: state.generation, at: now, patterns: st.activeEndpoints(workspaceId, mode).map((e) => e.events) }
      cache.set(key, hit)
    }
    for (const events of hit.patterns) if (eventMatches(events, type)) return true
    return false
  }
}
