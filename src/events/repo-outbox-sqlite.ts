// The outbox insert as one statement prepared once, for SQLite's hot paths (the click flush publishes
// link.clicked by the thousand a second); every other outbox statement is written once in repo-outbox.ts.
import type { Db } from '../db/client'
import type { NewEvent } from './repo-outbox'

/** The outbox row of an event, on the caller's connection inside its transaction. */
export function preparedEventInsert(db: Db) {
  const insert = db.$client.prepare('INSERT INTO outbox (id, type, mode, workspace_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?)')
  return (e: NewEvent) => {
    insert.run(e.id, e.type, e.mode, e.workspaceId, JSON.stringify(e.data), e.createdAt)
  }
}
