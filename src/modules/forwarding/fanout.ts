// The outbox consumer of forwarding: each event is queued for every open session of its workspace and mode
// whose event patterns match (inside the dispatch transaction: never lost, never queued twice). Sessions get
// no retries and touch no endpoint's health. Waiting polls are woken once the dispatch has committed, on
// every node (a poll may be held on any of them).
import type { Db } from '../../db/client'
import type { Builder, Engine, Steps } from '../../db/engine'
import { driveSync } from '../../db/engine/sqlite'
import type { EventBus } from '../../events/bus'
import type { Mode } from '../../events/interest'
import type { EventConsumer, EventEnvelope } from '../../events/outbox'
import type { Clock } from '../../platform/clock'
import { eventMatches, WorkspaceLists } from '../webhooks'
import { QUEUE_CAP } from './model'
import type { OpenSession } from './port'
import { enqueuing, openSessionsOf } from './repo'

const forEvent = (sessions: readonly OpenSession[], type: string) => sessions.filter((s) => eventMatches(s.events, type))
const queued = (envelope: EventEnvelope) => ({ eventId: envelope.id, type: envelope.type, body: JSON.stringify(envelope) })

/** Queues the envelope for each session; answers the sessions that took it. */
function* enqueueAll(engine: Engine, tx: Builder, sessions: readonly OpenSession[], envelope: EventEnvelope, now: number): Steps<string[]> {
  const item = queued(envelope)
  const ids: string[] = []
  for (const s of sessions) if (yield* enqueuing(engine, tx, s.id, item, QUEUE_CAP, now)) ids.push(s.id)
  return ids
}

/** Open sessions per workspace and mode on SQLite, cached (lists.ts) until `generation` moves. */
export class OpenSessions {
  private readonly lists: WorkspaceLists<OpenSession>

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    generation: () => number,
  ) {
    this.lists = new WorkspaceLists(generation)
  }

  of(workspaceId: string, mode: Mode): OpenSession[] {
    const now = this.clock.now()
    return this.lists.read(workspaceId, mode, now, () => driveSync(this.db, (engine, tx) => openSessionsOf(engine, tx, workspaceId, mode, now)))
  }

  /** Whether an open session listens for `type` (the interest source of clicks). */
  wants(type: string, workspaceId: string, mode: Mode) {
    return forEvent(this.of(workspaceId, mode), type).length > 0
  }
}

/**
 * Open sessions per workspace and mode on PostgreSQL, cached: the interest source asks without waiting (it
 * answers what it knows and loads in the background); the fan-out reads the same lists.
 */
export class OpenSessionsPg {
  readonly lists: WorkspaceLists<OpenSession>

  constructor(
    private readonly engine: Engine,
    private readonly clock: Clock,
    generation: () => number,
  ) {
    this.lists = new WorkspaceLists(generation)
  }

  /** Yes while the sessions are unknown (loaded meanwhile): an event nobody wanted costs a row, one not written is lost. */
  wants(type: string, workspaceId: string, mode: Mode) {
    const now = this.clock.now()
    const sessions = this.lists.peek(workspaceId, mode, now, () => this.engine.run((db) => openSessionsOf(this.engine, db, workspaceId, mode, now)))
    return sessions === undefined || forEvent(sessions, type).length > 0
  }
}

/** Session ids per notice: about 30 bytes each keeps a notice well under PostgreSQL's 8000-byte payload. */
const IDS_PER_NOTICE = 200

/**
 * The consumer: queues the event for the sessions that want it and wakes their polls once the dispatch has
 * committed (bus.atCommit: never before the events can be read, on every node, this one's included).
 * `lists` caches the open sessions of each workspace and mode, read on the dispatch transaction.
 */
export function forwardingFanout(engine: Engine, lists: WorkspaceLists<OpenSession>, bus: EventBus): EventConsumer {
  return function* (tx, event, now) {
    const { envelope } = event
    const open = yield* lists.reading(event.workspaceId, envelope.mode, now, () => openSessionsOf(engine, tx, event.workspaceId, envelope.mode, now))
    const sessions = forEvent(open, envelope.type)
    if (!sessions.length) return
    const ids = yield* enqueueAll(engine, tx, sessions, envelope, now)
    for (let i = 0; i < ids.length; i += IDS_PER_NOTICE) yield* bus.atCommit(engine, 'forwarding.queued', { sessionIds: ids.slice(i, i + IDS_PER_NOTICE) })
  }
}
