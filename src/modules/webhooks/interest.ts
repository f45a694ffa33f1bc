// The webhooks area's answer to "does anyone here listen for this event?": an active endpoint of the
// workspace and mode whose event patterns match, from lists cached like the fan-out's (lists.ts). Filters are
// not applied: an event a filter would drop costs a row, one that is never written is lost. For the same
// reason PostgreSQL, which cannot answer synchronously, answers yes while a list is unknown and loads it in
// the background.
import type { Engine } from '../../db/engine'
import { driveSync } from '../../db/engine/sqlite'
import type { InterestSource, Mode } from '../../events/interest'
import type { Clock } from '../../platform/clock'
import { eventMatches } from './filters'
import type { WorkspaceLists } from './lists'
import type { EndpointRow } from './port'
import { activeEndpoints } from './repo-fanout'

const listens = (endpoints: readonly EndpointRow[], type: string) => endpoints.some((e) => eventMatches(e.events, type))

/** SQLite: on the requests' connection (`engine`'s). */
export function webhookInterest(engine: Engine, lists: WorkspaceLists<EndpointRow>, clock: Clock): InterestSource {
  const load = (workspaceId: string, mode: Mode) => driveSync(engine.db, (_, db) => activeEndpoints(engine, db, workspaceId, mode))
  return (type: string, workspaceId: string, mode: Mode) =>
    listens(
      lists.read(workspaceId, mode, clock.now(), () => load(workspaceId, mode)),
      type,
    )
}

/** PostgreSQL: on the pool (`engine`'s). */
export function webhookInterestPg(engine: Engine, lists: WorkspaceLists<EndpointRow>, clock: Clock): InterestSource {
  return (type: string, workspaceId: string, mode: Mode) => {
    const endpoints = lists.peek(workspaceId, mode, clock.now(), () => engine.run((db) => activeEndpoints(engine, db, workspaceId, mode)))
    return endpoints === undefined || listens(endpoints, type)
  }
}
