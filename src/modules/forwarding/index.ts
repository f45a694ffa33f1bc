// Local forwarding: sessions `lnk listen` polls, fed by an outbox consumer, woken through the bus the moment
// an event for them commits, and pruned a day after they end. On PostgreSQL a poll may be held on any node:
// `forwarding.queued` reaches them all, and a session opened or ended on one node is announced
// (`subscribers.changed`) so every node's cached lists of open sessions drop.
import { engineOf, onEngine } from '../../db/store'
import type { EventConsumer } from '../../events/outbox'
import type { PeriodicTask } from '../../jobs/periodic'
import { DAY_MS } from '../../platform/time'
import { defineModule, type Platform } from '../module'
import type { HttpKit } from '../identity'
import { WorkspaceLists } from '../webhooks'
import { forwardingFanout, OpenSessions, OpenSessionsPg } from './fanout'
import type { ForwardingRepo, OpenSession } from './port'
import { createForwardingRepo } from './repo'
import { forwardingRoutes } from './routes'
import type { ForwardingCtx } from './service'
import { Waiters } from './waiters'

const PRUNE_SESSIONS = 'forwarding.prune'
const PERIODIC: PeriodicTask[] = [{ name: 'prune-forwarding-sessions', pattern: '17 * * * *', jobType: PRUNE_SESSIONS }]

/** The repos and consumers of the engine served from. */
interface Wiring {
  sessions: ForwardingRepo
  /** The prune's (SQLite: the worker's connection). */
  onWorker: ForwardingRepo
  consumer: EventConsumer
}

export function createForwardingModule(platform: Platform, http: HttpKit) {
  const { config, clock, log, store, bus, interest } = platform
  const waiters = new Waiters()
  // Moves whenever cached lists of open sessions may be stale: a change here or on another node, a reset.
  let generation = 0
  const openGeneration = () => generation
  bus.on('subscribers.changed', ({ area }) => {
    if (area === 'forwarding') generation++
  })
  bus.on('caches.reset', () => {
    generation++
    // A wake-up may have been lost with the other notices: held polls look at their queues.
    waiters.wakeAll()
  })
  bus.on('forwarding.queued', ({ sessionIds }) => {
    for (const id of sessionIds) waiters.wake(id)
  })
  const wiring = onEngine<Wiring>(
    store,
    (s) => {
      const openHere = new OpenSessions(s.db.db, clock, openGeneration)
      // Clicks write link.clicked only where someone listens for it: an open session counts.
      interest.add((type, workspaceId, mode) => openHere.wants(type, workspaceId, mode))
      // The consumer runs inside the dispatch transaction, which is on the worker's own connection.
      const onWorker = engineOf(s, 'worker')
      const consumer = forwardingFanout(onWorker, new WorkspaceLists<OpenSession>(openGeneration), bus)
      return { sessions: createForwardingRepo(engineOf(s)), onWorker: createForwardingRepo(onWorker), consumer }
    },
    (s) => {
      const engine = engineOf(s)
      const open = new OpenSessionsPg(engine, clock, openGeneration)
      interest.add((type, workspaceId, mode) => open.wants(type, workspaceId, mode))
      const repo = createForwardingRepo(engine)
      return { sessions: repo, onWorker: repo, consumer: forwardingFanout(engine, open.lists, bus) }
    },
  )
  const ctx: ForwardingCtx = {
    config,
    clock,
    log,
    sessions: wiring.sessions,
    waiters,
    changed() {
      generation++
      bus.emit('subscribers.changed', { area: 'forwarding' })
    },
  }
  return defineModule({
    name: 'forwarding',
    ctx,
    waiters,
    routes: forwardingRoutes(ctx, http),
    consumers: [wiring.consumer],
    periodic: PERIODIC,
    /** Held polls answer at once, so they never hold up a shutdown. */
    async close() {
      waiters.releaseAll()
    },
    jobs: [
      {
        type: PRUNE_SESSIONS,
        run: async () => {
          const removed = await wiring.onWorker.pruneExpired(clock.now() - DAY_MS)
          if (removed) log.info('forwarding sessions ended a day ago pruned', { removed })
        },
      },
    ],
  })
}

export type ForwardingModule = ReturnType<typeof createForwardingModule>
