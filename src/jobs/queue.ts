// The durable job queue: enqueue inside the caller's transaction, claim with a lease so another worker can
// resume a job whose worker died, complete or fail. Its statements are in repo-queue.ts.
import type { Tx } from '../db/tx'
import type { Engine } from '../db/engine'
import { driveSync } from '../db/engine/sqlite'
import { createQueueRepo, enqueuing, type EnqueueInput, type JobRow, type JobTypes } from './repo-queue'

export type { EnqueueInput, JobRow }
export { completing, enqueuing, JOBS_CHANNEL, preparedComplete, preparedEnqueue } from './repo-queue'

/**
 * enqueue() inside a synchronous SQLite transaction, for tests that build the queue's state directly: enqueuing() driven on
 * the caller's transaction. Answers the job id, or null when deduplicated.
 */
export function enqueue(tx: Tx, input: EnqueueInput, now: number): string | null {
  return driveSync(tx, (engine, t) => enqueuing(engine, t, input, now))
}

/** The queue on `engine` (SQLite: on its connection, the worker's own for the worker). */
export function createJobQueue(engine: Engine) {
  const repo = createQueueRepo(engine)
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
