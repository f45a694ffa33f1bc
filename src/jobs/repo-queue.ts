// The jobs table (db/schema/platform.ts): every statement of the durable queue. Claiming is one
// UPDATE … RETURNING, so two workers (threads or processes) never take the same job.
import { and, eq, inArray, sql } from 'drizzle-orm'
import type { Db } from '../db/client'
import { jobs, type JobStatus } from '../db/schema'
import type { Tx } from '../db/tx'

export interface JobRow {
  id: string
  type: string
  payload: unknown
  status: JobStatus
  runAt: number
  attempts: number
  maxAttempts: number
  uniqueKey: string | null
  lockedBy: string | null
  lockedUntil: number | null
  lastError: string | null
  createdAt: number
  updatedAt: number
}

export interface NewJob {
  id: string
  type: string
  payload: unknown
  runAt: number
  maxAttempts: number
  uniqueKey: string | null
}

/** Which job types a claim takes: only these, or all but those. */
export interface JobTypes {
  only?: string[]
  except?: string[]
}

/** Inserts a pending job; false when a job holding its unique key exists. Synchronous: joins the caller's transaction. */
export function insertJob(tx: Tx, job: NewJob, now: number): boolean {
  const inserted = tx
    .insert(jobs)
    .values({
      ...job,
      // No payload is stored as JSON null. A bare null would reach SQLite as NULL (drizzle maps only
      // non-null values through the JSON column) and break the NOT NULL constraint.
      payload: job.payload == null ? sql`'null'` : job.payload,
      status: 'pending',
      attempts: 0,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning({ id: jobs.id })
    .all()
  return inserted.length > 0
}

/** Dead jobs give up `key`; they stay for inspection. Synchronous: joins the caller's transaction. */
export function releaseDeadJobsKey(tx: Tx, key: string) {
  tx.update(jobs).set({ uniqueKey: null }).where(and(eq(jobs.uniqueKey, key), eq(jobs.status, 'dead'))).run()
}

/**
 * insertJob() through one statement prepared once, for hot paths: jobs of one type without a unique key.
 * Synchronous: call it inside the caller's transaction on the same connection.
 */
export function preparedJobInsert(db: Db, type: string, maxAttempts: number) {
  const insert = db.$client.prepare(
    "INSERT INTO jobs (id, type, payload, status, run_at, attempts, max_attempts, unique_key, created_at, updated_at) VALUES (?, ?, ?, 'pending', ?, 0, ?, NULL, ?, ?)",
  )
  return (id: string, payload: unknown, runAt: number, now: number) => {
    insert.run(id, type, JSON.stringify(payload ?? null), runAt, maxAttempts, now, now)
  }
}

/**
 * Removes a job held by `workerId`, through one statement prepared once: for a handler that completes its
 * job inside its own transaction (the webhook deliveries record an attempt and complete its job together).
 * Synchronous: call it inside the caller's transaction on the same connection. Answers whether it was held.
 */
export function preparedJobRemove(db: Db) {
  const remove = db.$client.prepare('DELETE FROM jobs WHERE id = ? AND locked_by = ?')
  return (id: string, workerId: string): boolean => remove.run(id, workerId).changes > 0
}

interface RawJob {
  id: string
  type: string
  payload: string
  status: JobRow['status']
  run_at: number
  attempts: number
  max_attempts: number
  unique_key: string | null
  locked_by: string | null
  locked_until: number | null
  last_error: string | null
  created_at: number
  updated_at: number
}

const jobRow = (r: RawJob): JobRow => ({
  id: r.id,
  type: r.type,
  payload: JSON.parse(r.payload),
  status: r.status,
  runAt: r.run_at,
  attempts: r.attempts,
  maxAttempts: r.max_attempts,
  uniqueKey: r.unique_key,
  lockedBy: r.locked_by,
  lockedUntil: r.locked_until,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

/**
 * The claim's statements for one set of job types, prepared once. Due jobs are looked for in two parts, each
 * able to walk the (status, run_at) index: pending ones in run_at order, stopping after `limit`, and running
 * ones whose lease lapsed (as many as are running). One condition with OR over both made SQLite gather and
 * sort every due job at each claim: with 20,000 deliveries queued, ~90 µs of a delivery's CPU went there.
 */
function claimStatements(db: Db, types: JobTypes) {
  const list = types.only ?? types.except ?? []
  const marks = list.map(() => '?').join(', ')
  // No types to take is nothing to take; none to leave out is everything.
  const filter = types.only ? (list.length ? ` AND type IN (${marks})` : ' AND 1 = 0') : list.length ? ` AND type NOT IN (${marks})` : ''
  const pendingDue = `SELECT id, run_at AS due FROM jobs WHERE status = 'pending' AND run_at <= ?${filter}`
  const lapsed = `SELECT id, run_at AS due FROM jobs WHERE status = 'running' AND locked_until <= ?${filter}`
  const any = db.$client.prepare<{ found: number }, never[]>(`SELECT EXISTS (${pendingDue}) OR EXISTS (${lapsed}) AS found`)
  const claim = db.$client.prepare<RawJob, never[]>(
    `UPDATE jobs SET status = 'running', locked_by = ?, locked_until = ?, attempts = attempts + 1, updated_at = ? WHERE id IN (` +
      `SELECT id FROM (${lapsed} UNION ALL SELECT id, due FROM (${pendingDue} ORDER BY run_at LIMIT ?)) ORDER BY due LIMIT ?) RETURNING *`,
  )
  const args = (now: number) => [now, ...list] as never[]
  return {
    any: (now: number) => (any.get(...args(now), ...args(now))?.found ?? 0) !== 0,
    claim(workerId: string, now: number, limit: number, leaseMs: number): JobRow[] {
      const rows = claim.all(...([workerId, now + leaseMs, now, ...args(now), ...args(now), limit, limit] as never[])).map(jobRow)
      // RETURNING answers in no promised order; the worker starts them oldest due first.
      return rows.sort((a, b) => a.runAt - b.runAt)
    },
  }
}

export function createQueueRepo(db: Db) {
  const prepared = new Map<string, ReturnType<typeof claimStatements>>()
  const statementsFor = (types: JobTypes) => {
    const key = JSON.stringify([types.only ?? null, types.except ?? null])
    let st = prepared.get(key)
    if (!st) prepared.set(key, (st = claimStatements(db, types)))
    return st
  }

  return {
    /** A plain read. */
    async anyClaimable(now: number, types: JobTypes): Promise<boolean> {
      return statementsFor(types).any(now)
    },
    /** Takes up to `limit` claimable jobs, oldest due first, for `workerId` until `now + leaseMs`; counts the attempt. */
    async claim(workerId: string, now: number, limit: number, leaseMs: number, types: JobTypes): Promise<JobRow[]> {
      return statementsFor(types).claim(workerId, now, limit, leaseMs)
    },
    /** Removes a job held by `workerId`. */
    async remove(id: string, workerId: string) {
      db.delete(jobs).where(and(eq(jobs.id, id), eq(jobs.lockedBy, workerId))).run()
    },
    /** A job held by `workerId` is pending again at `runAt`, or dead when null, with the error that stopped it. */
    async reschedule(id: string, workerId: string, error: string, runAt: number | null, now: number) {
      const unlocked = { lastError: error, lockedBy: null, lockedUntil: null, updatedAt: now }
      db.update(jobs)
        .set(runAt === null ? { ...unlocked, status: 'dead' } : { ...unlocked, status: 'pending', runAt })
        .where(and(eq(jobs.id, id), eq(jobs.lockedBy, workerId)))
        .run()
    },
    /** Running jobs held by `workerId` are pending again now, their attempt uncounted. */
    async release(ids: string[], workerId: string, now: number) {
      // CASE, not the two-argument max(): that one is SQLite-only (PostgreSQL spells it greatest()).
      db.update(jobs)
        .set({ status: 'pending', runAt: now, lockedBy: null, lockedUntil: null, attempts: sql`case when ${jobs.attempts} > 0 then ${jobs.attempts} - 1 else 0 end`, updatedAt: now })
        .where(and(inArray(jobs.id, ids), eq(jobs.lockedBy, workerId), eq(jobs.status, 'running')))
        .run()
    },
    async depth(now: number): Promise<{ due: number; scheduled: number; running: number; dead: number }> {
      const row = db
        .select({
          due: sql<number>`coalesce(sum(case when ${jobs.status} = 'pending' and ${jobs.runAt} <= ${now} then 1 else 0 end), 0)`,
          scheduled: sql<number>`coalesce(sum(case when ${jobs.status} = 'pending' and ${jobs.runAt} > ${now} then 1 else 0 end), 0)`,
          running: sql<number>`coalesce(sum(case when ${jobs.status} = 'running' then 1 else 0 end), 0)`,
          dead: sql<number>`coalesce(sum(case when ${jobs.status} = 'dead' then 1 else 0 end), 0)`,
        })
        .from(jobs)
        .get()
      return { due: Number(row?.due ?? 0), scheduled: Number(row?.scheduled ?? 0), running: Number(row?.running ?? 0), dead: Number(row?.dead ?? 0) }
    },
    async get(id: string): Promise<JobRow | undefined> {
      return db.select().from(jobs).where(eq(jobs.id, id)).get()
    },
  }
}
