// The durable queue's claim on PostgreSQL, for several nodes on one database: it locks its rows with FOR
// UPDATE SKIP LOCKED, so claimers on other connections pass over them instead of waiting or taking them too;
// the lease (locked_by, locked_until) lets another node resume a job whose node died. Enqueueing a due job
// sends a notice on JOBS_CHANNEL at commit (queue.ts's enqueuing), so idle workers on every node wake
// without waiting for their poll: listenForJobs hears it.
import type { SQL } from 'bun'
import { listenChanges, type ChangeListener } from '../db/pg/notify'
import { JOBS_CHANNEL } from './queue'
import type { Claimer, JobRow, JobTypes } from './repo-queue'

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

/** The claim on PostgreSQL, on Bun's client (the pool). */
export function pgClaimer(sql: SQL): Claimer {
  const typeFilter = (types: JobTypes) => {
    const list = types.only ?? types.except ?? []
    // No types to take is nothing to take; none to leave out is everything.
    if (types.only) return list.length ? sql`AND type IN ${sql(list)}` : sql`AND false`
    return list.length ? sql`AND type NOT IN ${sql(list)}` : sql``
  }
  return {
    // A claim on an idle queue is one statement that locks nothing: no read first.
    any: async () => true,
    async claim(workerId, now, limit, leaseMs, types) {
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
  }
}
