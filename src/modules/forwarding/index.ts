// Local forwarding: sessions `lnk listen` polls, fed by an outbox consumer, woken through the bus the moment
// an event for them commits, and pruned a day after they end.
import type { PeriodicTask } from '../../jobs/periodic'
import { DAY_MS } from '../../platform/time'
import { defineModule, type HttpKit, type Platform } from '../module'
import { createForwardingFanout, OpenSessions } from './fanout'
import { createForwardingRepo } from './repo'
import { forwardingRoutes } from './routes'
import type { ForwardingCtx } from './service'
import { Waiters } from './waiters'

const PRUNE_SESSIONS = 'forwarding.prune'
const PERIODIC: PeriodicTask[] = [{ name: 'prune-forwarding-sessions', pattern: '17 * * * *', jobType: PRUNE_SESSIONS }]

export function createForwardingModule(platform: Platform, http: HttpKit) {
  const { config, clock, log, db, workerDb, bus, interest } = platform
  const openHere = new OpenSessions(db.db, clock)
  const openOnWorker = new OpenSessions(workerDb.db, clock)
  const waiters = new Waiters()
  const ctx: ForwardingCtx = {
    config,
    clock,
    log,
    sessions: createForwardingRepo(db.db),
    waiters,
    changed() {
      openHere.changed()
      openOnWorker.changed()
    },
  }
  // Clicks write link.clicked only where someone listens for it: an open session counts.
  interest.add((type, workspaceId, mode) => openHere.wants(type, workspaceId, mode))
  bus.on('forwarding.queued', ({ sessionIds }) => {
    for (const id of sessionIds) waiters.wake(id)
  })
  const onWorker = createForwardingRepo(workerDb.db)
  return defineModule({
    name: 'forwarding',
    ctx,
    waiters,
    routes: forwardingRoutes(ctx, http),
    consumers: [createForwardingFanout(workerDb.db, openOnWorker, (sessionIds) => bus.emit('forwarding.queued', { sessionIds }))],
    periodic: PERIODIC,
    /** Held polls answer at once, so they never hold up a shutdown. */
    async close() {
      waiters.releaseAll()
    },
    jobs: [
      {
        type: PRUNE_SESSIONS,
        run: async () => {
          const removed = await onWorker.pruneExpired(clock.now() - DAY_MS)
          if (removed) log.info('forwarding sessions ended a day ago pruned', { removed })
        },
      },
    ],
  })
}

export type ForwardingModule = ReturnType<typeof createForwardingModule>
