// The worker loop: dispatches the outbox, then claims due jobs and runs their handlers, a bounded number at
// a time. Timers only wake it; what must happen lives in the jobs table. Time comes from the injected clock
// so tests drive retries with runDue() instead of sleeping.
import type { Clock } from '../platform/clock'
import type { OutboxDrain } from '../events/outbox'
import type { Logger } from '../platform/log'
import { base62, random } from '../platform/random'
import { isBusy, retryWhileBusy } from './busy'
import type { JobQueue, JobRow } from './queue'
import { HOUR_MS, MINUTE_MS } from '../platform/time'

export interface JobContext {
  job: JobRow
  /** The attempt being made, 1-based. */
  attempt: number
  /** The worker holding the job's lease (to complete the job in the handler's own transaction). */
  workerId: string
}

/**
 * A handler answers COMPLETED when it removed its job itself, in the transaction that recorded its work
 * (preparedComplete or completing in queue.ts): the worker then writes nothing more. Otherwise the worker completes it.
 */
export const COMPLETED = 'completed'

export type JobHandler = (payload: unknown, ctx: JobContext) => Promise<void | typeof COMPLETED>

/** Throw from a handler to choose when the next attempt happens (e.g. a receiver's Retry-After). */
export class RetryAt extends Error {
  constructor(
    readonly at: number,
    message = 'retry requested',
  ) {
    super(message)
  }
}

/** Throw from a handler when another attempt cannot succeed. */
export class PermanentFailure extends Error {}

export interface WorkerOptions {
  id?: string
  concurrency?: number
  pollMs?: number
  leaseMs?: number
  /** Delay before attempt n+1 after n failed attempts. Default: 2^n s capped at 1 h, ±20 % jitter. */
  backoff?: (failedAttempts: number) => number
}

export function defaultBackoff(failedAttempts: number): number {
  const base = Math.min(2 ** failedAttempts * 1000, HOUR_MS)
  return Math.round(base * (0.8 + 0.4 * random()))
}

/** A pass that found the write lock taken is tried again this soon (a click flush holds it for ms). */
const BUSY_RETRY_MS = 10

/** The shared slots' name among the pools a pass claims for (the others are lanes, named by job type). */
const SHARED = ''

export class Worker {
  readonly id: string
  private handlers = new Map<string, JobHandler>()
  /** Job types with slots of their own (type → concurrency), claimed apart from the shared slots. */
  private lanes = new Map<string, number>()
  private inFlight = new Map<string, { type: string; done: Promise<void> }>()
  private timer: ReturnType<typeof setTimeout> | null = null
  /** The pools the next pass claims for: where a job finished, or all (notify()); null: a poll, all. */
  private wanted: Set<string> | 'all' | null = null
  /** When a pass last looked at every pool (performance.now()). */
  private lastFullPass = 0
  private running = false
  private ticking: Promise<void> | null = null
  private readonly concurrency: number
  private readonly pollMs: number
  private readonly leaseMs: number
  private readonly backoff: (n: number) => number

  constructor(
    private deps: { queue: JobQueue; clock: Clock; log: Logger; outbox?: OutboxDrain },
    options: WorkerOptions = {},
  ) {
    this.id = options.id ?? `worker_${base62(8)}`
    this.concurrency = options.concurrency ?? 8
    this.pollMs = options.pollMs ?? 500
    this.leaseMs = options.leaseMs ?? MINUTE_MS
    this.backoff = options.backoff ?? defaultBackoff
  }

  /**
   * Registers the handler of a job type. With `lane`, that type runs in slots of its own (that many at
   * once) instead of the shared ones: work that waits on the network (webhook deliveries, up to their
   * timeout each) then never holds up the rest.
   */
  handle(type: string, handler: JobHandler, options: { lane?: number } = {}) {
    if (this.handlers.has(type)) throw new Error(`a handler for job type "${type}" is already registered`)
    this.handlers.set(type, handler)
    if (options.lane !== undefined) this.lanes.set(type, Math.max(1, options.lane))
    return this
  }

  get busy() {
    return this.inFlight.size
  }

  start() {
    if (this.running) return
    this.running = true
    this.schedule()
  }

  /** Wakes the loop now, e.g. right after work was enqueued. */
  notify() {
    if (this.running) this.schedule()
  }

  /**
   * Stops claiming and waits up to `timeoutMs` for running jobs. Jobs still running then are given back
   * (their attempt uncounted) so the next start resumes them at once.
   */
  async stop(timeoutMs = 10_000) {
    this.running = false
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    await this.ticking
    const pending = [...this.inFlight.values()].map((j) => j.done)
    if (pending.length) {
      let timedOut = false
      // A cleared timer rather than Bun.sleep(): a sleep left pending would keep the process alive for the
      // whole timeout after the jobs had finished.
      let deadline: ReturnType<typeof setTimeout> | undefined
      await Promise.race([
        Promise.allSettled(pending),
        new Promise<void>((resolve) => {
          deadline = setTimeout(() => {
            timedOut = true
            resolve()
          }, timeoutMs)
        }),
      ])
      clearTimeout(deadline)
      if (timedOut) {
        const ids = [...this.inFlight.keys()]
        this.deps.log.warn('jobs still running at shutdown were given back', { count: ids.length })
        await retryWhileBusy(() => this.deps.queue.release(ids, this.id, this.deps.clock.now()))
      }
    }
  }

  /** One pass: dispatch the outbox and run every job due now, waiting for them. For tests and tools. */
  async runDue(): Promise<number> {
    let total = 0
    for (;;) {
      await this.deps.outbox?.drain()
      const claimed = await this.claimAndStart()
      if (!claimed.length) break
      total += claimed.length
      await Promise.allSettled(claimed)
    }
    return total
  }

  /** Plans a pass now: for the pool named (a job of it finished), or for every pool. */
  private schedule(pool?: string) {
    this.want(pool === undefined ? 'all' : new Set([pool]))
    this.arm(0)
  }

  private want(pools: Set<string> | 'all') {
    if (pools === 'all' || this.wanted === 'all') this.wanted = 'all'
    else if (this.wanted === null) this.wanted = new Set(pools)
    else for (const pool of pools) this.wanted.add(pool)
  }

  /** Sets the pass's timer; a poll (nothing wanted) looks at every pool. */
  private arm(ms: number) {
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = null
      // Every pool at least once per poll interval: while a lane's jobs finish one after another, the
      // poll's own timer keeps being replaced and would never come.
      const at = performance.now()
      const pools = this.wanted === null || at - this.lastFullPass >= this.pollMs ? 'all' : this.wanted
      if (pools === 'all') this.lastFullPass = at
      this.wanted = null
      this.ticking = this.tick(pools)
        .then((busy) => {
          if (!busy || !this.running) return
          // The write lock was taken: try the same pools again shortly, not a poll interval later.
          this.want(pools)
          if (!this.timer) this.arm(BUSY_RETRY_MS)
        })
        .finally(() => {
          this.ticking = null
          if (this.running && !this.timer) this.arm(this.pollMs)
        })
    }, ms)
  }

  /** One pass; answers whether the database was busy (then the pass is tried again shortly). */
  private async tick(pools: Set<string> | 'all'): Promise<boolean> {
    if (!this.running) return false
    let busy = false
    // Separately guarded: an event a consumer cannot take must not stop due jobs from running.
    // A busy database (the click writer holds the lock) is not a failure: the pass is tried again.
    try {
      await this.deps.outbox?.drain()
    } catch (err) {
      if (isBusy(err)) busy = true
      else this.deps.log.error('outbox dispatch failed', { error: (err as Error).message })
    }
    try {
      await this.claimAndStart(pools)
    } catch (err) {
      if (isBusy(err)) busy = true
      else this.deps.log.error('worker tick failed', { error: (err as Error).message })
    }
    return busy
  }

  /**
   * Claims what free slots allow, shared slots and each lane apart, and starts the jobs. Only for the pools
   * asked: a finished delivery frees a slot of its lane, and looking for shared-slot jobs then would walk
   * every due delivery in the (status, run_at) index to find none (~1 ms at 20,000 queued); the shared
   * slots are looked at by polls, notify() and when one of their own jobs finishes.
   */
  private async claimAndStart(pools: Set<string> | 'all' = 'all'): Promise<Promise<void>[]> {
    const { queue, clock } = this.deps
    const busy = (type?: string) => [...this.inFlight.values()].filter((j) => (type === undefined ? !this.lanes.has(j.type) : j.type === type)).length
    const asked = (pool: string) => pools === 'all' || pools.has(pool)
    const now = clock.now()
    const jobs = asked(SHARED) ? await queue.claim(this.id, now, this.concurrency - busy(), this.leaseMs, { except: [...this.lanes.keys()] }) : []
    for (const [type, slots] of this.lanes) {
      if (asked(type)) jobs.push(...(await queue.claim(this.id, now, slots - busy(type), this.leaseMs, { only: [type] })))
    }
    return jobs.map((job) => {
      const p = this.execute(job)
        // execute() handles handler errors itself; what reaches here is the queue failing to record the
        // outcome (e.g. the database busy or full). Log it: an unhandled rejection would end the process.
        // The job stays running and is resumed when its lease lapses.
        .catch((err) => this.deps.log.error('job outcome could not be recorded', { job: job.id, type: job.type, error: (err as Error).message }))
        .finally(() => {
          this.inFlight.delete(job.id)
          // A finished job frees a slot: look for more at once instead of waiting for the poll. Jobs that
          // finish together (a batch of recorded deliveries) share that one pass, and so one claim.
          if (this.running) this.schedule(this.lanes.has(job.type) ? job.type : SHARED)
        })
      this.inFlight.set(job.id, { type: job.type, done: p })
      return p
    })
  }

  private async execute(job: JobRow) {
    const { queue, clock, log } = this.deps
    // The connection does not wait for the write lock: a busy answer is retried after a pause, not failed.
    const fail = (error: string, retryAt: number | null, now: number) => retryWhileBusy(() => queue.fail(job.id, this.id, error, retryAt, now))
    if (job.attempts > job.maxAttempts) {
      await fail(job.lastError ?? 'attempts exhausted', null, clock.now())
      return
    }
    const handler = this.handlers.get(job.type)
    if (!handler) {
      await fail(`no handler for job type "${job.type}"`, null, clock.now())
      log.error('job has no handler', { job: job.id, type: job.type })
      return
    }
    let outcome: void | typeof COMPLETED
    try {
      outcome = await handler(job.payload, { job, attempt: job.attempts, workerId: this.id })
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      const now = clock.now()
      const final = err instanceof PermanentFailure || job.attempts >= job.maxAttempts
      const retryAt = final ? null : err instanceof RetryAt ? Math.max(err.at, now) : now + this.backoff(job.attempts)
      await fail(message.slice(0, 2000), retryAt, now)
      log.warn(final ? 'job failed for good' : 'job failed; will retry', { job: job.id, type: job.type, attempt: job.attempts, error: message.slice(0, 200) })
      return
    }
    if (outcome !== COMPLETED) await retryWhileBusy(() => queue.complete(job.id, this.id))
  }
}
