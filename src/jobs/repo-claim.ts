// The queue's claim, on either engine: one UPDATE … RETURNING, prepared once per set of job types
// (Engine.prepare), so two workers (threads, processes or nodes) never take the same job.
//
// Due jobs are looked for in two parts, each able to walk the (status, run_at) index in run_at order and stop
// at the limit: running ones whose lease lapsed (a dead worker's, few) and pending ones; the oldest due of
// both are taken. One condition with OR over both made SQLite gather and sort every due job at each claim
// (with 20,000 deliveries queued, ~90 µs of a delivery's CPU went there). On PostgreSQL, where several nodes
// claim at once, each part locks its rows FOR UPDATE SKIP LOCKED, so claimers on other connections pass over
// them instead of waiting or taking them too; a row another claimer claimed and committed since this
// statement's snapshot is re-checked against the conditions once locked, and no longer matches. Locking
// CTEs are never inlined, so each part runs once. The lease (locked_by, locked_until) lets another worker
// resume a job whose worker died.
import { and, asc, eq, inArray, lte, notInArray, sql, type SQL } from 'drizzle-orm'
import { all, first, type Engine } from '../db/engine'
import type { JobStatus } from '../db/schema'

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

/** Which job types a claim takes: only these, or all but those. */
export interface JobTypes {
  only?: string[]
  except?: string[]
}

function claimStatements(engine: Engine, types: JobTypes) {
  const { db } = engine
  const { jobs } = engine.t
  const p = sql.placeholder
  const list = types.only ?? types.except ?? []
  // No types to take is nothing to take; none to leave out is everything.
  const filter = types.only ? (list.length ? inArray(jobs.type, list) : sql`1 = 0`) : list.length ? notInArray(jobs.type, list) : undefined
  const lapsedLease = and(eq(jobs.status, 'running'), lte(jobs.lockedUntil, p('now')), filter)
  const pendingDue = and(eq(jobs.status, 'pending'), lte(jobs.runAt, p('now')), filter)
  const part = (name: string, where: SQL | undefined) =>
    db.$with(name).as(
      engine.forUpdate(
        db
          .select({ id: jobs.id, due: sql<number>`${jobs.runAt}`.as('due') })
          .from(jobs)
          .where(where)
          .orderBy(asc(jobs.runAt))
          .limit(p('limit')),
        { skipLocked: true },
      ),
    )
  const lapsed = part('lapsed', lapsedLease)
  const pending = part('pending', pendingDue)
  const taken = sql`(select ${sql.identifier('id')} from (select * from ${lapsed} union all select * from ${pending}) as ${sql.identifier('due_jobs')}
    order by ${sql.identifier('due')} limit ${p('limit')})`
  const claim = engine.prepare(
    db
      .with(lapsed, pending)
      .update(jobs)
      .set({
        status: 'running',
        lockedBy: sql`${p('workerId')}`,
        lockedUntil: sql`${p('lockedUntil')}`,
        attempts: sql`${jobs.attempts} + 1`,
        updatedAt: sql`${p('now')}`,
      })
      .where(inArray(jobs.id, taken))
      .returning(),
  )
  // A subquery comes in parentheses of its own.
  const any = engine.prepare(sql`select exists ${db.select({ id: jobs.id }).from(jobs).where(pendingDue)}
    or exists ${db.select({ id: jobs.id }).from(jobs).where(lapsedLease)} as found`)
  return { claim, any }
}

/** The claim on `engine`, its statements prepared once per set of job types. */
export function createClaimer(engine: Engine) {
  const prepared = new Map<string, ReturnType<typeof claimStatements>>()
  const statementsFor = (types: JobTypes) => {
    const key = JSON.stringify([types.only ?? null, types.except ?? null])
    let st = prepared.get(key)
    if (!st) prepared.set(key, (st = claimStatements(engine, types)))
    return st
  }
  return {
    /**
     * Whether any job is claimable: a plain read, so an idle queue never asks for SQLite's write lock, which
     * the claim's UPDATE takes even when it matches nothing. PostgreSQL's claim on an idle queue locks
     * nothing: one statement there, no read first.
     */
    async any(now: number, types: JobTypes): Promise<boolean> {
      if (engine.name !== 'sqlite') return true
      const row = (await engine.run(() => first(statementsFor(types).any, { now }))) as { found: unknown } | undefined
      return !!Number(row?.found)
    },
    /** Takes up to `limit` claimable jobs, oldest due first, for `workerId` until `now + leaseMs`; counts the attempt. */
    async claim(workerId: string, now: number, limit: number, leaseMs: number, types: JobTypes): Promise<JobRow[]> {
      if (limit <= 0) return []
      const values = { workerId, lockedUntil: now + leaseMs, now, limit }
      const rows = (await engine.run(() => all(statementsFor(types).claim, values))) as JobRow[]
      // RETURNING answers in no promised order; the worker starts them oldest due first.
      return rows.sort((a, b) => a.runAt - b.runAt)
    },
  }
}
