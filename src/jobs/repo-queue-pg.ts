// The durable job queue on PostgreSQL, for several nodes on one database: the operations of queue.ts and
// repo-queue.ts with the same meaning. A claim locks its rows with FOR UPDATE SKIP LOCKED, so claimers on
// other connections pass over them instead of waiting or taking them too; the lease (locked_by,
// locked_until) lets another node resume a job whose node died. Enqueueing a due job sends a notice on
// JOBS_CHANNEL at commit, so idle workers on every node wake without waiting for their poll.
import type { SQL } from 'bun'
import { listenChanges, publishChange, type ChangeListener } from '../db/pg/notify'
import { newId } from '../platform/random'
import { JOBS_CHANNEL, type EnqueueInput, type JobQueue, type JobRow } from './queue'
import type { JobTypes } from './repo-queue'


/**
 * enqueue() of queue.ts inside the caller's transaction (sql.begin's argument). Answers the job id, or null
 * when a job holding its unique key exists.
 */
export async function enqueuePg(tx: SQL, input: EnqueueInput, now: number): Promise<string | null> {
  const id = newId('job')
  const runAt = input.runAt ?? now
  // A dead job is kept for inspection but gives up its key, as on SQLite (queue.ts says why).
  if (input.uniqueKey != null) await tx`UPDATE jobs SET unique_key = NULL WHERE unique_key = ${input.uniqueKey} AND status = 'dead'`
  // Bun sends a string parameter for a jsonb column as a JSON string; through text it is parsed as JSON.
  const inserted = await tx`
    INSERT INTO jobs (id, type, payload, status, run_at, attempts, max_attempts, unique_key, created_at, updated_at)
    VALUES (${id}, ${input.type}, ${JSON.stringify(input.payload ?? null)}::text::jsonb, 'pending', ${runAt}, 0, ${input.maxAttempts ?? 5}, ${input.uniqueKey ?? null}, ${now}, ${now})
    ON CONFLICT DO NOTHING RETURNING id`
  if (!inserted.length) return null
  // A job for later needs no wake-up: the workers' poll finds it when it is due. PostgreSQL folds identical
  // notices of one transaction into one, so a batch of jobs of one type wakes each listener once.
  if (runAt <= now) await publishChange(tx, JOBS_CHANNEL, input.type)
  return id
}

/**
 * complete() inside the caller's transaction, for a handler that records its work and completes its job in
 * one write (preparedComplete on SQLite). Answers whether `workerId` held the job.
 */
export async function completeInTransactionPg(tx: SQL, id: string, workerId: string): Promise<boolean> {
  const removed = await tx`DELETE FROM jobs WHERE id = ${id} AND locked_by = ${workerId} RETURNING id`
  return removed.length > 0
}

/** Wakes `wake` when a job is enqueued on any node (with its type), and after the listen connection came back (without). */
export function listenForJobs(source: string | SQL, wake: (type?: string) => void): Promise<ChangeListener> {
  return listenChanges(source, [JOBS_CHANNEL], { onChange: (_channel, type) => wake(type), onReset: () => wake() })
}

interface RawJob {
  id: string
  type: string
  payload: unknown
  status: JobRow['status']
  run_at: string | number
  attempts: string | number
  max_attempts: string | number
  unique_key: string | null
  locked_by: string | null
  locked_until: string | number | null
  last_error: string | null
  created_at: string | number
  updated_at: string | number
}

// Bun answers bigint columns as strings; jsonb arrives parsed.
const jobRow = (r: RawJob): JobRow => ({
  id: r.id,
  type: r.type,
  payload: r.payload,
  status: r.status,
  runAt: Number(r.run_at),
  attempts: Number(r.attempts),
  maxAttempts: Number(r.max_attempts),
  uniqueKey: r.unique_key,
  lockedBy: r.locked_by,
  lockedUntil: r.locked_until === null ? null : Number(r.locked_until),
  lastError: r.last_error,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
})

/** The same shape as createJobQueue(db) (queue.ts), on a PostgreSQL client (a pool). */
export function createPgJobQueue(sql: SQL): JobQueue {
  const typeFilter = (types: JobTypes) => {
    const list = types.only ?? types.except ?? []
    // No types to take is nothing to take; none to leave out is everything.
    if (types.only) return list.length ? sql`AND type IN ${sql(list)}` : sql`AND false`
    return list.length ? sql`AND type NOT IN ${sql(list)}` : sql``
  }

  return {
    /** Claims up to `limit` due jobs (pending and due, or running with a lapsed lease), of the given types only or of all but `except`. */
    async claim(workerId: string, now: number, limit: number, leaseMs: number, types: JobTypes = {}): Promise<JobRow[]> {
      if (limit <= 0) return []
      const filter = typeFilter(types)
      // Lapsed leases first (a dead node's jobs, few), then pending jobs for the slots left, each part on the
      // (status, run_at) index. Rows another claimer has locked are skipped; a row it claimed and committed
      // since this statement's snapshot is re-checked against the conditions once locked, and no longer
      // matches. Locking CTEs are never inlined, so each runs once.
      const rows = await sql<RawJob[]>`
        WITH lapsed AS (
          SELECT id FROM jobs WHERE status = 'running' AND locked_until <= ${now}::bigint ${filter}
          ORDER BY run_at LIMIT ${limit}::bigint FOR UPDATE SKIP LOCKED
        ), pending AS (
          SELECT id FROM jobs WHERE status = 'pending' AND run_at <= ${now}::bigint ${filter}
          ORDER BY run_at LIMIT ${limit}::bigint - (SELECT count(*) FROM lapsed) FOR UPDATE SKIP LOCKED
        )
        UPDATE jobs SET status = 'running', locked_by = ${workerId}, locked_until = ${now + leaseMs}::bigint, attempts = attempts + 1, updated_at = ${now}::bigint
        WHERE id IN (SELECT id FROM lapsed UNION ALL SELECT id FROM pending)
        RETURNING *`
      // RETURNING answers in no promised order; the worker starts them oldest due first.
      return rows.map(jobRow).sort((a, b) => a.runAt - b.runAt)
    },
    /** Success: the job is finished and removed. Only the worker holding the lease may do this. */
    async complete(id: string, workerId: string) {
      await sql`DELETE FROM jobs WHERE id = ${id} AND locked_by = ${workerId}`
    },
    /** Failure: back to pending at `retryAt`, or dead when null. Only by the lease holder. */
    async fail(id: string, workerId: string, error: string, retryAt: number | null, now: number) {
      await sql`
        UPDATE jobs SET status = ${retryAt === null ? 'dead' : 'pending'}, run_at = coalesce(${retryAt}::bigint, run_at),
          last_error = ${error}, locked_by = NULL, locked_until = NULL, updated_at = ${now}::bigint
        WHERE id = ${id} AND locked_by = ${workerId}`
    },
    /** Gives jobs back without counting the attempt, e.g. when shutdown cut them short. */
    async release(ids: string[], workerId: string, now: number) {
      if (!ids.length) return
      await sql`
        UPDATE jobs SET status = 'pending', run_at = ${now}::bigint, locked_by = NULL, locked_until = NULL, attempts = greatest(attempts - 1, 0), updated_at = ${now}::bigint
        WHERE id IN ${sql(ids)} AND locked_by = ${workerId} AND status = 'running'`
    },
    async depth(now: number): Promise<{ due: number; scheduled: number; running: number; dead: number }> {
      const [row] = await sql`
        SELECT count(*) FILTER (WHERE status = 'pending' AND run_at <= ${now}::bigint) AS due,
          count(*) FILTER (WHERE status = 'pending' AND run_at > ${now}::bigint) AS scheduled,
          count(*) FILTER (WHERE status = 'running') AS running,
          count(*) FILTER (WHERE status = 'dead') AS dead
        FROM jobs`
      return { due: Number(row.due), scheduled: Number(row.scheduled), running: Number(row.running), dead: Number(row.dead) }
    },
    async get(id: string): Promise<JobRow | undefined> {
      const [row] = await sql<RawJob[]>`SELECT * FROM jobs WHERE id = ${id}`
      return row ? jobRow(row) : undefined
    },
  }
}
