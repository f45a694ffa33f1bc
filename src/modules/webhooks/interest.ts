// The webhooks area's answer to "does anyone here listen for this event?": an active endpoint of the
// workspace and mode whose event patterns match, from lists cached like the fan-out's (lists.ts). Filters are
// not applied: an event a filter would drop costs a row, one that is never written is lost. For the same
// reason PostgreSQL, which cannot answer synchronously, answers yes while a list is unknown and loads it in
// the background.
import type { Db } from '../../db/client'
import type { PgDb } from '../../db/pg/client'
import type { InterestSource, Mode } from '../../events/interest'
import type { Clock } from '../../platform/clock'
import { eventMatches } from './filters'
import type { WorkspaceLists } from './lists'
import { createFanoutStatements, type EndpointRow } from './repo'
import type { FanoutStatementsPg } from './repo-fanout-pg'

const listens = (endpoints: readonly EndpointRow[], type: string) => endpoints.some((e) => eventMatches(e.events, type))

export function webhookInterest(db: Db, lists: WorkspaceLists<EndpointRow>, clock: Clock): InterestSource {
  const st = createFanoutStatements(db)
  return (type: string, workspaceId: string, mode: Mode) => listens(lists.read(workspaceId, mode, clock.now(), () => st.activeEndpoints(workspaceId, mode)), type)
}

export function webhookInterestPg(db: PgDb, st: FanoutStatementsPg, lists: WorkspaceLists<EndpointRow>, clock: Clock): InterestSource {
  return (type: string, workspaceId: string, mode: Mode) => {
    const endpoints = lists.peek(workspaceId, mode, clock.now(), () => st.activeEndpoints(db, workspaceId, mode))
    return endpoints === undefined || listens(endpoints, type)
  }
}
