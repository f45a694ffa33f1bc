// The durable job queue: enqueue inside the caller's transaction, claim with a lease so another worker can
// resume a job whose worker died, complete or fail. Its statements are in repo-queue.ts.
import type { Db } from '../db/client'
import type { Tx } from '../db/tx'
import { and, eq, sql } from 'drizzle-orm'
import { notice, rows, type Builder, type Engine, type Steps } from '../db/engine'
import { driveSync } from '../db/engine/sqlite'
import { newId, sortableId } from '../platform/random'
import { createQueueRepo, type Claimer, type JobRow, type JobTypes } from './repo-queue'
import { preparedJobInsert, preparedJobRemove } from './repo-queue-sqlite'

export type { JobRow }

export interface EnqueueInput {
  type: string
  payload?: unknown
  runAt?: number
  maxAttempts?: number
  /** At most one job with this key exists; a second enqueue with it is ignored. */
  uniqueKey?: string
}

/**
 * enqueue() inside a synchronous SQLite transaction, for the repos not yet written on the engine seam.
 * Answers the job id, or null when deduplicated.
 */
export function enqueue(tx: Tx, input: EnqueueInput, now: number): string | null {
  return driveSync(tx, (engine, t) => enqueuing(engine, t, input, now))
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
  if (input.uniqueKey != null) yield* rows(tx.update(jobs).set({ uniqueKey: null }).where(and(eq(jobs.uniqueKey, input.uniqueKey), eq(jobs.status, 'dead'))))
  const inserted = yield* rows(
    tx
      .insert(jobs)
      // No payload is stored as JSON null: a bare null would reach the NOT NULL column as NULL.
      .values({ id, type: input.type, payload: input.payload == null ? sql`'null'` : input.payload, status: 'pending', runAt, attempts: 0, maxAttempts: input.maxAttempts ?? 5, uniqueKey: input.uniqueKey ?? null, createdAt: now, updatedAt: now })
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
  const removed = yield* rows(tx.delete(jobs).where(and(eq(jobs.id, id), eq(jobs.lockedBy, workerId))).returning({ id: jobs.id }))
  return removed.length > 0
}

/**
 * enqueue() for hot paths (the webhook fan-out, a job per delivery): the same row through one statement
 * prepared once, for one job type without a unique key. Synchronous: call it inside the caller's
 * transaction on the same connection.
 */
export function preparedEnqueue(db: Db, type: string, maxAttempts: number) {
  const insert = preparedJobInsert(db, type, maxAttempts)
  return (payload: unknown, runAt: number, now: number): string => {
    // Time-ordered: a job per delivery is written (and soon deleted) by the thousand a second, and random
    // ids would touch a random page of the primary key's index each time.
    const id = sortableId('job', now)
    insert(id, payload, runAt, now)
    return id
  }
}

/**
 * complete() inside the caller's transaction, for a handler that records its work and completes its job in
 * one write and then answers COMPLETED (worker.ts). Synchronous, prepared once, on the caller's connection.
 */
export const preparedComplete = (db: Db) => preparedJobRemove(db)

/** The queue on `engine`, claiming with the engine's own statement (repo-queue-sqlite.ts, repo-queue-pg.ts). */
export function createJobQueue(engine: Engine, claimer: Claimer) {
  const repo = createQueueRepo(engine, claimer)
  return {
    /** Claims up to `limit` due jobs (pending and due, or running with a lapsed lease), of the given types only or of all but `except`. */
    async claim(workerId: string, now: number, limit: number, leaseMs: number, types: JobTypes = {}): Promise<JobRow[]> {
      if (limit <= 0) return []
      // A plain read first: an idle queue never asks for the write lock.
      if (!(await repo.any(now, types))) return []
      return repo.claim(workerId, now, limit, leaseMs, types)
    },
    /** Success: the job is finished and removed. Only the worker holding the lease may do this. */
    async complete(id: string, workerId: string) {
      await repo.remove(id, workerId)
    },
    /** Failure: back to pending at `retryAt`, or dead when null. */
    async fail(id: string, workerId: string, error: string, retryAt: number | null, now: number) {
      await repo.reschedule(id, workerId, error, retryAt, now)
    },
    /** Gives jobs back without counting the attempt, e.g. when shutdown cut them short. */
    async release(ids: string[], workerId: string, now: number) {
      if (ids.length) await repo.release(ids, workerId, now)
    },
    depth: repo.depth,
    get: repo.get,
  }
}

export type JobQueue = ReturnType<typeof createJobQueue>
