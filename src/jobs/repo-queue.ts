// The jobs table (db/schema/platform.ts): the durable queue's statements, on either engine, written once:
// the claim in repo-claim.ts, the rest here, including the hot paths' insert and removal of a job (a job
// per webhook delivery, written by the thousand a second), prepared once on either engine (Engine.prepare).
import { and, eq, inArray, sql } from 'drizzle-orm'
import { exec, notice, rows, type Builder, type Engine, type Steps } from '../db/engine'
import { newId, sortableId } from '../platform/random'
import { createClaimer, type JobRow, type JobTypes } from './repo-claim'

export type { JobRow, JobTypes }

export function createQueueRepo(engine: Engine) {
  const { db } = engine
  const { jobs } = engine.t
  return {
    ...createClaimer(engine),
    /** Removes a job held by `workerId`. */
    async remove(id: string, workerId: string) {
      await db.delete(jobs).where(and(eq(jobs.id, id), eq(jobs.lockedBy, workerId)))
    },
    /** A job held by `workerId` is pending again at `runAt`, or dead when null, with the error that stopped it. */
    async reschedule(id: string, workerId: string, error: string, runAt: number | null, now: number) {
      const unlocked = { lastError: error, lockedBy: null, lockedUntil: null, updatedAt: now }
      await db
        .update(jobs)
        .set(runAt === null ? { ...unlocked, status: 'dead' } : { ...unlocked, status: 'pending', runAt })
        .where(and(eq(jobs.id, id), eq(jobs.lockedBy, workerId)))
    },
    /** Running jobs held by `workerId` are pending again now, their attempt uncounted. */
    async release(ids: string[], workerId: string, now: number) {
      // CASE, not the two-argument max(): that one is SQLite-only (PostgreSQL spells it greatest()).
      await db
        .update(jobs)
        .set({
          status: 'pending',
          runAt: now,
          lockedBy: null,
          lockedUntil: null,
          attempts: sql`case when ${jobs.attempts} > 0 then ${jobs.attempts} - 1 else 0 end`,
          updatedAt: now,
        })
        .where(and(inArray(jobs.id, ids), eq(jobs.lockedBy, workerId), eq(jobs.status, 'running')))
    },
    async depth(now: number): Promise<{ due: number; scheduled: number; running: number; dead: number }> {
      const [row] = await db
        .select({
          due: sql<number>`coalesce(sum(case when ${jobs.status} = 'pending' and ${jobs.runAt} <= ${now} then 1 else 0 end), 0)`,
          scheduled: sql<number>`coalesce(sum(case when ${jobs.status} = 'pending' and ${jobs.runAt} > ${now} then 1 else 0 end), 0)`,
          running: sql<number>`coalesce(sum(case when ${jobs.status} = 'running' then 1 else 0 end), 0)`,
          dead: sql<number>`coalesce(sum(case when ${jobs.status} = 'dead' then 1 else 0 end), 0)`,
        })
        .from(jobs)
      return { due: Number(row?.due ?? 0), scheduled: Number(row?.scheduled ?? 0), running: Number(row?.running ?? 0), dead: Number(row?.dead ?? 0) }
    },
    async get(id: string): Promise<JobRow | undefined> {
      const [row] = await db.select().from(jobs).where(eq(jobs.id, id))
      return row
    },
  }
}

export interface EnqueueInput {
  type: string
  payload?: unknown
  runAt?: number
  maxAttempts?: number
  /** At most one job with this key exists; a second enqueue with it is ignored. */
  uniqueKey?: string
}

/** The PostgreSQL channel of "a job is due": its payload is the job's type. */
export const JOBS_CHANNEL = 'lnk_jobs'

/**
 * enqueue() inside a transaction body written once for both engines (db/engine). Answers the job id, or null
 * when a job holding its unique key exists. A due job also sends a notice at commit on PostgreSQL, so idle
 * workers on every node wake without waiting for their poll; a job for later needs none (the poll finds it),
 * and PostgreSQL folds identical notices of one transaction, so a batch of one type wakes each listener once.
 */
export function* enqueuing(engine: Engine, tx: Builder, input: EnqueueInput, now: number): Steps<string | null> {
  const { jobs } = engine.t
  const id = newId('job')
  const runAt = input.runAt ?? now
  // A dead job gives up its key, as enqueue() says.
  if (input.uniqueKey != null)
    yield* rows(
      tx
        .update(jobs)
        .set({ uniqueKey: null })
        .where(and(eq(jobs.uniqueKey, input.uniqueKey), eq(jobs.status, 'dead'))),
    )
  const inserted = yield* rows(
    tx
      .insert(jobs)
      // No payload is stored as JSON null: a bare null would reach the NOT NULL column as NULL.
      .values({
        id,
        type: input.type,
        payload: input.payload == null ? sql`'null'` : input.payload,
        status: 'pending',
        runAt,
        attempts: 0,
        maxAttempts: input.maxAttempts ?? 5,
        uniqueKey: input.uniqueKey ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: jobs.id }),
  )
  if (!inserted.length) return null
  if (runAt <= now) yield* notice(engine, JOBS_CHANNEL, input.type)
  return id
}

/** complete() inside a transaction body on either engine: removes a job `workerId` holds; answers whether it held it. */
export function* completing(engine: Engine, tx: Builder, id: string, workerId: string): Steps<boolean> {
  const { jobs } = engine.t
  const removed = yield* rows(
    tx
      .delete(jobs)
      .where(and(eq(jobs.id, id), eq(jobs.lockedBy, workerId)))
      .returning({ id: jobs.id }),
  )
  return removed.length > 0
}

/**
 * enqueuing() for hot paths (the webhook fan-out and deliveries, a job per delivery): the same row through one
 * statement prepared once (Engine.prepare), for one job type without a unique key, inside a transaction body
 * on the engine that prepared it. Answers the job id. `payload` is required (no unique key, no null).
 */
export function preparedEnqueue(engine: Engine, type: string, maxAttempts: number) {
  const { jobs } = engine.t
  const insert = engine.prepare(
    engine.db.insert(jobs).values({
      id: sql.placeholder('id'),
      type,
      payload: sql.placeholder('payload'),
      status: 'pending',
      runAt: sql.placeholder('runAt'),
      attempts: 0,
      maxAttempts,
      uniqueKey: null,
      createdAt: sql.placeholder('now'),
      updatedAt: sql.placeholder('now'),
    }),
  )
  // As enqueuing(): a due job wakes the workers of every node (PostgreSQL); the same notice every time.
  const wake = engine.notify(JOBS_CHANNEL, type)
  return function* (payload: unknown, runAt: number, now: number): Steps<string> {
    // Time-ordered: a job per delivery is written (and soon deleted) by the thousand a second, and random
    // ids would touch a random page of the primary key's index each time.
    const id = sortableId('job', now)
    yield* exec(insert, { id, payload, runAt, now })
    if (wake && runAt <= now) yield wake
    return id
  }
}

/**
 * completing() for a handler that records its work and completes its job in one transaction (worker.ts): one
 * statement prepared once, inside a transaction body on the engine that prepared it. Answers whether
 * `workerId` held the job.
 */
export function preparedComplete(engine: Engine) {
  const { jobs } = engine.t
  const remove = engine.prepare(engine.db.delete(jobs).where(and(eq(jobs.id, sql.placeholder('id')), eq(jobs.lockedBy, sql.placeholder('workerId')))))
  return function* (id: string, workerId: string): Steps<boolean> {
    return (yield* exec(remove, { id, workerId })) > 0
  }
}
