// The outbox consumer of forwarding: each event is queued for every open session of its workspace and mode
// whose event patterns match (inside the dispatch transaction: never lost, never queued twice). Sessions get
// no retries and touch no endpoint's health. Waiting polls are woken once the dispatch has committed: on
// SQLite by the bus right after the synchronous transaction, on PostgreSQL by a notice sent at its commit,
// which every node hears (a poll may be held on any of them).
import type { Db } from '../../db/client'
import type { Builder, Engine, Steps } from '../../db/engine'
import { drivePg } from '../../db/engine/pg'
import { driveSync } from '../../db/engine/sqlite'
import type { PgDb, PgTx } from '../../db/pg/client'
import { noticeAtCommitPg } from '../../events/bus-pg'
import type { Mode } from '../../events/interest'
import type { EventEnvelope, OutboxConsumer } from '../../events/outbox'
import type { OutboxConsumerPg } from '../../events/outbox-pg'
import type { Clock } from '../../platform/clock'
import { eventMatches } from '../webhooks/filters'
import { WorkspaceLists } from '../webhooks/lists'
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

  constructor(private readonly db: Db, private readonly clock: Clock, generation: () => number) {
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

/** OpenSessions on PostgreSQL: one cache for the fan-out (which awaits a load) and the interest source (which never waits). */
export class OpenSessionsPg {
  private readonly lists: WorkspaceLists<OpenSession>

  constructor(private readonly db: PgDb, private readonly clock: Clock, generation: () => number) {
    this.lists = new WorkspaceLists(generation)
  }

  of(tx: PgTx, workspaceId: string, mode: Mode, now: number): Promise<OpenSession[]> {
    return this.lists.readAsync(workspaceId, mode, now, () => drivePg(tx, (engine, t) => openSessionsOf(engine, t, workspaceId, mode, now)))
  }

  /** Yes while the sessions are unknown (loaded meanwhile): an event nobody wanted costs a row, one not written is lost. */
  wants(type: string, workspaceId: string, mode: Mode) {
    const now = this.clock.now()
    const sessions = this.lists.peek(workspaceId, mode, now, () => drivePg(this.db, (engine, t) => openSessionsOf(engine, t, workspaceId, mode, now)))
    return sessions === undefined || forEvent(sessions, type).length > 0
  }
}

export function createForwardingFanout(open: OpenSessions, wake: (sessionIds: string[]) => void): OutboxConsumer {
  return (tx, event, now) => {
    const { envelope } = event
    const sessions = forEvent(open.of(event.workspaceId, envelope.mode), envelope.type)
    if (!sessions.length) return
    const ids = driveSync(tx, (engine, t) => enqueueAll(engine, t, sessions, envelope, now))
    // The dispatch transaction is synchronous: a microtask runs once it has committed. A rolled-back one only
    // wakes a poll that then finds nothing and answers an empty list.
    if (ids.length) queueMicrotask(() => wake(ids))
  }
}

export function createForwardingFanoutPg(open: OpenSessionsPg): OutboxConsumerPg {
  return async (tx, event, now) => {
    const { envelope } = event
    const sessions = forEvent(await open.of(tx, event.workspaceId, envelope.mode, now), envelope.type)
    if (!sessions.length) return
    const ids = await drivePg(tx, (engine, t) => enqueueAll(engine, t, sessions, envelope, now))
    if (ids.length) await wakeAtCommitPg(tx, ids)
  }
}

/** Session ids per notice: about 30 bytes each keeps a notice well under PostgreSQL's 8000-byte payload. */
const IDS_PER_NOTICE = 200

/**
 * `forwarding.queued` for these sessions, sent by PostgreSQL when the dispatch transaction commits (never on
 * rollback, and never before the events can be read), to every node's listeners, this one's included.
 */
async function wakeAtCommitPg(tx: PgTx, sessionIds: string[]) {
  for (let i = 0; i < sessionIds.length; i += IDS_PER_NOTICE) {
    await noticeAtCommitPg(tx, 'forwarding.queued', { sessionIds: sessionIds.slice(i, i + IDS_PER_NOTICE) })
  }
}
