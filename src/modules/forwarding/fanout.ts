// The outbox consumer of forwarding: each event is queued for every open session of its workspace and mode
// whose event patterns match (inside the dispatch transaction: never lost, never queued twice). Sessions get
// no retries and touch no endpoint's health. Waiting polls are woken once the dispatch has committed.
import type { Db } from '../../db/client'
import type { Mode } from '../../events/interest'
import type { OutboxConsumer } from '../../events/outbox'
import type { Clock } from '../../platform/clock'
import { eventMatches } from '../webhooks/filters'
import { QUEUE_CAP } from './model'
import { createQueueStatements, type OpenSession } from './repo'

/** A cached list is trusted this long against sessions opened or ended by another process. */
const TTL_MS = 5000
const MAX_KEYS = 10_000

/** Open sessions per workspace and mode, cached; `changed()` drops the cache when this process changes one. */
export class OpenSessions {
  private readonly cache = new Map<string, { generation: number; at: number; sessions: OpenSession[] }>()
  private generation = 0
  private readonly st: ReturnType<typeof createQueueStatements>

  constructor(db: Db, private readonly clock: Clock) {
    this.st = createQueueStatements(db)
  }

  changed() {
    this.generation++
  }

  of(workspaceId: string, mode: Mode): OpenSession[] {
    const key = `${workspaceId}\u0000${mode}`
    const now = this.clock.now()
    const hit = this.cache.get(key)
    if (hit && hit.generation === this.generation && now >= hit.at && now - hit.at < TTL_MS) return hit.sessions
    if (this.cache.size >= MAX_KEYS) this.cache.clear()
    const sessions = this.st.openSessions(workspaceId, mode, now)
    this.cache.set(key, { generation: this.generation, at: now, sessions })
    return sessions
  }

  /** Whether an open session listens for `type` (the interest source of clicks). */
  wants(type: string, workspaceId: string, mode: Mode) {
    return this.of(workspaceId, mode).some((s) => eventMatches(s.events, type))
  }
}

export function createForwardingFanout(db: Db, open: OpenSessions, wake: (sessionIds: string[]) => void): OutboxConsumer {
  const st = createQueueStatements(db)
  return (tx, event, now) => {
    const { envelope } = event
    const sessions = open.of(event.workspaceId, envelope.mode).filter((s) => eventMatches(s.events, envelope.type))
    if (!sessions.length) return
    const body = JSON.stringify(envelope)
    const queued = sessions.filter((s) => st.enqueue(tx, s.id, { eventId: envelope.id, type: envelope.type, body }, QUEUE_CAP, now)).map((s) => s.id)
    // The dispatch transaction is synchronous: a microtask runs once it has committed. A rolled-back one only
    // wakes a poll that then finds nothing and answers an empty list.
    if (queued.length) queueMicrotask(() => wake(queued))
  }
}
