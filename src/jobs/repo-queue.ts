// The jobs table (db/schema/platform.ts): every statement of the durable queue. Claiming is one
// UPDATE … RETURNING, so two workers (threads or processes) never take the same job.
import { and, asc, eq, inArray, lte, notInArray, or, sql, type SQL } from 'drizzle-orm'
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

export function createQueueRepo(db: Db) {
  /** Pending and due, or running with a lapsed lease; of the given types. */
  function claimable(now: number, types: JobTypes): SQL | undefined {
    const due = or(and(eq(jobs.status, 'pending'), lte(jobs.runAt, now)), and(eq(jobs.status, 'running'), lte(jobs.lockedUntil, now)))
    return types.only ? and(due, inArray(jobs.type, types.only)) : types.except?.length ? and(due, notInArray(jobs.type, types.except)) : due
  }

  return {
    /** A plain read. */
    async anyClaimable(now: number, types: JobTypes): Promise<boolean> {
      return db.select({ id: jobs.id }).from(jobs).where(claimable(now, types)).limit(1).get() !== undefined
    },
    /** Takes up to `limit` claimable jobs, oldest due first, for `workerId` until `now + leaseMs`; counts the attempt. */
    async claim(workerId: string, now: number, limit: number, leaseMs: number, types: JobTypes): Promise<JobRow[]> {
      const picked = db
        .select({ id: jobs.id })
        .from(jobs)
        .where(claimable(now, types))
        .orderBy(asc(jobs.runAt), asc(jobs.id))
        .limit(limit)
      return db
        .update(jobs)
        .set({ status: 'running', lockedBy: workerId, lockedUntil: now + leaseMs, attempts: sql`${jobs.attempts} + 1`, updatedAt: now })
        .where(inArray(jobs.id, picked))
        .returning()
        .all()
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
