// The durable job queue on SQLite: data access only. Claiming is one UPDATE … RETURNING, so two workers
// (threads or processes) never take the same job; a lease lets another worker resume a job whose worker died.
import { and, asc, eq, inArray, lte, notInArray, or, sql } from 'drizzle-orm'
import type { Db } from '../db/client'
import { jobs } from '../db/schema'
import type { Tx } from '../db/tx'
import { newId } from '../platform/random'

export type JobRow = typeof jobs.$inferSelect

export interface EnqueueInput {
  type: string
  payload?: unknown
  runAt?: number
  maxAttempts?: number
  /** At most one job with this key exists; a second enqueue with it is ignored. */
  uniqueKey?: string
}

/** Synchronous so it can join the caller's transaction. Answers the job id, or null when deduplicated. */
export function enqueue(tx: Tx, input: EnqueueInput, now: number): string | null {
  const id = newId('job')
  // A dead job is kept for inspection but no longer holds its key: otherwise one run that failed for good
  // (a periodic task, a batch window) would block every later enqueue with that key forever.
  if (input.uniqueKey != null) {
    tx.update(jobs).set({ uniqueKey: null }).where(and(eq(jobs.uniqueKey, input.uniqueKey), eq(jobs.status, 'dead'))).run()
  }
  const inserted = tx
    .insert(jobs)
    .values({
      id,
      type: input.type,
      // No payload is stored as JSON null. A bare null would reach SQLite as NULL (drizzle maps only
      // non-null values through the JSON column) and break the NOT NULL constraint.
      payload: input.payload == null ? sql`'null'` : input.payload,
      status: 'pending',
      runAt: input.runAt ?? now,
      attempts: 0,
      maxAttempts: input.maxAttempts ?? 5,
      uniqueKey: input.uniqueKey ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning({ id: jobs.id })
    .all()
  return inserted.length ? id : null
}

/**
 * enqueue() for hot paths (the webhook fan-out, a job per delivery): the same row through one statement
 * prepared once, for one job type without a unique key. Synchronous: call it inside the caller's
 * transaction on the same connection.
 */
export function preparedEnqueue(db: Db, type: string, maxAttempts: number) {
  const insert = db.$client.prepare(
    "INSERT INTO jobs (id, type, payload, status, run_at, attempts, max_attempts, unique_key, created_at, updated_at) VALUES (?, ?, ?, 'pending', ?, 0, ?, NULL, ?, ?)",
  )
  return (payload: unknown, runAt: number, now: number): string => {
    const id = newId('job')
    insert.run(id, type, JSON.stringify(payload ?? null), runAt, maxAttempts, now, now)
    return id
  }
}

export function createJobQueue(db: Db) {
  return {
    /** Claims up to `limit` due jobs (pending and due, or running with a lapsed lease) for `workerId`. */
    /** Claims up to `limit` due jobs, of the given types only or of all but `except`. */
    async claim(workerId: string, now: number, limit: number, leaseMs: number, types: { only?: string[]; except?: string[] } = {}): Promise<JobRow[]> {
      if (limit <= 0) return []
      const due = or(and(eq(jobs.status, 'pending'), lte(jobs.runAt, now)), and(eq(jobs.status, 'running'), lte(jobs.lockedUntil, now)))
      const claimable = types.only ? and(due, inArray(jobs.type, types.only)) : types.except?.length ? and(due, notInArray(jobs.type, types.except)) : due
      // A plain read first: an idle queue never asks for the write lock.
      if (!db.select({ id: jobs.id }).from(jobs).where(claimable).limit(1).get()) return []
      const picked = db
        .select({ id: jobs.id })
        .from(jobs)
        .where(claimable)
        .orderBy(asc(jobs.runAt), asc(jobs.id))
        .limit(limit)
      return db
        .update(jobs)
        .set({ status: 'running', lockedBy: workerId, lockedUntil: now + leaseMs, attempts: sql`${jobs.attempts} + 1`, updatedAt: now })
        .where(inArray(jobs.id, picked))
        .returning()
        .all()
    },
    /** Success: the job is finished and removed. Only the worker holding the lease may do this. */
    async complete(id: string, workerId: string) {
      db.delete(jobs).where(and(eq(jobs.id, id), eq(jobs.lockedBy, workerId))).run()
    },
    /** Failure: back to pending at `retryAt`, or dead when null. */
    async fail(id: string, workerId: string, error: string, retryAt: number | null, now: number) {
      db.update(jobs)
        .set(retryAt === null ? { status: 'dead', lastError: error, lockedBy: null, lockedUntil: null, updatedAt: now } : { status: 'pending', runAt: retryAt, lastError: error, lockedBy: null, lockedUntil: null, updatedAt: now })
        .where(and(eq(jobs.id, id), eq(jobs.lockedBy, workerId)))
        .run()
    },
    /** Gives jobs back without counting the attempt, e.g. when shutdown cut them short. */
    async release(ids: string[], workerId: string, now: number) {
      if (!ids.length) return
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

export type JobQueue = ReturnType<typeof createJobQueue>
