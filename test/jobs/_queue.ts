// What is left to do in a database, read through the queue and the outbox as the worker sees them.
import type { Db } from '../../src/db/client'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import { dispatchedUpTo } from '../../src/events/outbox'
import { eventsAfter } from '../../src/events/repo-outbox'
import { createJobQueue } from '../../src/jobs/queue'

/** The queue on one SQLite connection, as the runtime builds it. */
export const sqliteQueue = (db: Db) => createJobQueue(sqliteEngine(db))

/** Jobs in the queue, whatever their state. */
export async function jobsLeft(db: Db): Promise<number> {
  const d = await sqliteQueue(db).depth(Date.now())
  return d.due + d.scheduled + d.running + d.dead
}

/** Outbox events not yet handed to consumers. */
export async function eventsPending(db: Db): Promise<number> {
  const engine = sqliteEngine(db)
  const from = await dispatchedUpTo(engine)
  return (await engine.run((tx) => eventsAfter(engine, tx, from, Number.MAX_SAFE_INTEGER))).length
}
