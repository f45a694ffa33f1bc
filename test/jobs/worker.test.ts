// The durable job queue and its worker on a real SQLite file, driven by a ManualClock: retries, backoff,
// leases, shutdown hand-back and periodic triggers are checked by moving the clock, never by sleeping
// until a schedule time comes.
import { afterEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { type Cron, scheduledJobs } from 'croner'
import { eq } from 'drizzle-orm'
import { ManualClock } from '../../src/platform/clock'
import { openDatabase } from '../../src/db/client'
import { jobs } from '../../src/db/schema'
import { publish } from '../../src/events/outbox'
import { createLogger, type Logger } from '../../src/platform/log'
import { startPeriodic, triggerPeriodic, type PeriodicTask } from '../../src/jobs/periodic'
import { enqueue, type JobQueue } from '../../src/jobs/queue'
import { engineOf } from '../../src/db/store'
import { sqliteQueue } from './_queue'
import { PRUNE_IDEMPOTENCY, SYSTEM_PERIODIC as PERIODIC_TASKS } from '../../src/modules/system'
import { defaultBackoff, PermanentFailure, RetryAt, Worker, type JobContext, type WorkerOptions } from '../../src/jobs/worker'
import { ON_PG, ROOT, setupSqlite, tempDir, type TestEnv } from '../helpers'

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0)

const envs: TestEnv[] = []
const workers: Worker[] = []

afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop(100)
  for (const e of envs.splice(0)) await e.cleanup()
})

function env(worker: WorkerOptions = {}, log?: Logger) {
  const clock = new ManualClock(T0)
  const e = setupSqlite({ clock, worker: { id: 'w1', ...worker }, log })
  envs.push(e)
  return { ...e, clock, rt: e.rt }
}

function capture() {
  const lines: string[] = []
  return { lines, log: createLogger('debug', (line) => lines.push(line)) }
}

/** Waits for the background loop (real timers, small pollMs), bounded; never for a schedule time. */
async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 3000) {
  const until = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > until) throw new Error('condition not reached in time')
    await Bun.sleep(2)
  }
}

function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

const add = (rt: TestEnv['rt'], input: Parameters<typeof enqueue>[1]) => enqueue(rt.db.db, input, rt.clock.now())

describe.skipIf(ON_PG)('running jobs', () => {
  test('enqueue + runDue runs the handler once with the payload, then the job is gone', async () => {
    const { rt } = env()
    const calls: { payload: unknown; ctx: JobContext }[] = []
    rt.worker.handle('test.echo', async (payload, ctx) => void calls.push({ payload, ctx }))
    const id = add(rt, { type: 'test.echo', payload: { hello: 'world', n: 3 } })
    expect(id).toStartWith('job_')
    expect((await rt.queue.get(id!))?.status).toBe('pending')

    expect(await rt.worker.runDue()).toBe(1)
    expect(calls).toHaveLength(1)
    expect(calls[0]!.payload).toEqual({ hello: 'world', n: 3 })
    expect(calls[0]!.ctx.attempt).toBe(1)
    expect(calls[0]!.ctx.job.id).toBe(id!)
    expect(await rt.queue.get(id!)).toBeUndefined()
    expect(await rt.worker.runDue()).toBe(0)
    expect(calls).toHaveLength(1)
  })

  test('a job with runAt in the future is not claimed before its time', async () => {
    const { rt, clock } = env()
    let runs = 0
    rt.worker.handle('test.later', async () => void runs++)
    const id = add(rt, { type: 'test.later', runAt: T0 + 60_000 })
    expect(await rt.queue.depth(clock.now())).toEqual({ due: 0, scheduled: 1, running: 0, dead: 0 })
    expect(await rt.worker.runDue()).toBe(0)
    clock.advance(59_999)
    expect(await rt.worker.runDue()).toBe(0)
    expect(runs).toBe(0)
    expect((await rt.queue.get(id!))?.attempts).toBe(0)
    clock.advance(1)
    expect(await rt.worker.runDue()).toBe(1)
    expect(runs).toBe(1)
  })

  test('uniqueKey dedupes enqueue while the job exists, and frees the key once it is done', async () => {
    const { rt } = env()
    let runs = 0
    rt.worker.handle('test.unique', async () => void runs++)
    const first = add(rt, { type: 'test.unique', uniqueKey: 'k1' })
    expect(first).not.toBeNull()
    expect(add(rt, { type: 'test.unique', uniqueKey: 'k1' })).toBeNull()
    expect(add(rt, { type: 'test.unique', uniqueKey: 'k2' })).not.toBeNull()
    // no key: never deduplicated
    expect(add(rt, { type: 'test.unique' })).not.toBeNull()
    expect(add(rt, { type: 'test.unique' })).not.toBeNull()
    expect(rt.db.db.select().from(jobs).all()).toHaveLength(4)

    expect(await rt.worker.runDue()).toBe(4)
    expect(runs).toBe(4)
    expect(add(rt, { type: 'test.unique', uniqueKey: 'k1' })).not.toBeNull()
  })

  test('enqueue joins the caller transaction: rolled back with it', async () => {
    const { rt } = env()
    expect(() =>
      rt.db.db.transaction((tx) => {
        enqueue(tx, { type: 'test.rollback' }, T0)
        throw new Error('abort')
      }),
    ).toThrow('abort')
    expect(rt.db.db.select().from(jobs).all()).toHaveLength(0)
  })
})

describe.skipIf(ON_PG)('failures and retries', () => {
  test('a failing handler is retried at the backoff time, not before, until maxAttempts; then dead with lastError', async () => {
    const { rt, clock } = env({ backoff: (n) => n * 10_000 })
    const attempts: number[] = []
    rt.worker.handle('test.flaky', async (_p, ctx) => {
      attempts.push(ctx.attempt)
      throw new Error(`boom ${ctx.attempt}`)
    })
    const id = add(rt, { type: 'test.flaky', maxAttempts: 3 })!

    expect(await rt.worker.runDue()).toBe(1)
    let job = (await rt.queue.get(id))!
    expect(job).toMatchObject({ status: 'pending', attempts: 1, lastError: 'boom 1', runAt: T0 + 10_000, lockedBy: null, lockedUntil: null })

    expect(await rt.worker.runDue()).toBe(0)
    clock.advance(9_999)
    expect(await rt.worker.runDue()).toBe(0)
    expect(attempts).toEqual([1])
    clock.advance(1)
    expect(await rt.worker.runDue()).toBe(1)
    job = (await rt.queue.get(id))!
    expect(job).toMatchObject({ status: 'pending', attempts: 2, lastError: 'boom 2', runAt: T0 + 10_000 + 20_000 })

    clock.advance(19_999)
    expect(await rt.worker.runDue()).toBe(0)
    clock.advance(1)
    expect(await rt.worker.runDue()).toBe(1)
    job = (await rt.queue.get(id))!
    expect(job).toMatchObject({ status: 'dead', attempts: 3, lastError: 'boom 3', lockedBy: null })
    expect(attempts).toEqual([1, 2, 3])

    clock.advance(24 * 3_600_000)
    expect(await rt.worker.runDue()).toBe(0)
    expect(attempts).toEqual([1, 2, 3])
    expect(await rt.queue.depth(clock.now())).toEqual({ due: 0, scheduled: 0, running: 0, dead: 1 })
  })

  test('with the default backoff the first retry waits 2 s ± 20 %', async () => {
    const { rt, clock } = env()
    let runs = 0
    rt.worker.handle('test.fails-once', async () => {
      if (++runs === 1) throw new Error('first time')
    })
    const id = add(rt, { type: 'test.fails-once' })!
    await rt.worker.runDue()
    const { runAt } = (await rt.queue.get(id))!
    expect(runAt - T0).toBeGreaterThanOrEqual(1600)
    expect(runAt - T0).toBeLessThanOrEqual(2400)
    clock.set(runAt - 1)
    expect(await rt.worker.runDue()).toBe(0)
    clock.set(runAt)
    expect(await rt.worker.runDue()).toBe(1)
    expect(runs).toBe(2)
    expect(await rt.queue.get(id)).toBeUndefined()
  })

  test('RetryAt sets the next run time exactly (a time in the past means now)', async () => {
    const { rt, clock } = env()
    const seen: number[] = []
    rt.worker.handle('test.retry-at', async (_p, ctx) => {
      seen.push(ctx.attempt)
      if (ctx.attempt === 1) throw new RetryAt(T0 + 12_345, 'receiver said Retry-After')
      if (ctx.attempt === 2) throw new RetryAt(0)
    })
    const id = add(rt, { type: 'test.retry-at' })!
    expect(await rt.worker.runDue()).toBe(1)
    expect(await rt.queue.get(id)).toMatchObject({ status: 'pending', runAt: T0 + 12_345, lastError: 'receiver said Retry-After' })
    clock.set(T0 + 12_344)
    expect(await rt.worker.runDue()).toBe(0)
    clock.set(T0 + 12_345)
    // attempt 2 asks for a time long gone: it is due again at once, so the same pass runs attempt 3
    expect(await rt.worker.runDue()).toBe(2)
    expect(seen).toEqual([1, 2, 3])
    expect(await rt.queue.get(id)).toBeUndefined()
  })

  test('PermanentFailure makes the job dead at once', async () => {
    const { rt, clock } = env()
    let runs = 0
    rt.worker.handle('test.permanent', async () => {
      runs++
      throw new PermanentFailure('receiver is gone')
    })
    const id = add(rt, { type: 'test.permanent', maxAttempts: 5 })!
    expect(await rt.worker.runDue()).toBe(1)
    expect(await rt.queue.get(id)).toMatchObject({ status: 'dead', attempts: 1, lastError: 'receiver is gone' })
    clock.advance(3_600_000 * 48)
    expect(await rt.worker.runDue()).toBe(0)
    expect(runs).toBe(1)
  })

  test('a job type without a handler goes dead', async () => {
    const { rt, clock } = env()
    const id = add(rt, { type: 'test.nobody-handles-this', maxAttempts: 5 })!
    expect(await rt.worker.runDue()).toBe(1)
    const job = (await rt.queue.get(id))!
    expect(job.status).toBe('dead')
    expect(job.lastError).toContain('no handler')
    expect(job.lastError).toContain('test.nobody-handles-this')
    clock.advance(3_600_000)
    expect(await rt.worker.runDue()).toBe(0)
  })

  test('the default backoff stays within ±20 % of 2^n seconds capped at 1 h, and really jitters', () => {
    for (let n = 1; n <= 40; n++) {
      const base = Math.min(2 ** n * 1000, 3_600_000)
      let min = Infinity
      let max = -Infinity
      for (let i = 0; i < 400; i++) {
        const d = defaultBackoff(n)
        expect(Number.isInteger(d)).toBe(true)
        min = Math.min(min, d)
        max = Math.max(max, d)
      }
      expect(min).toBeGreaterThanOrEqual(Math.floor(base * 0.8))
      expect(max).toBeLessThanOrEqual(Math.ceil(base * 1.2))
      // 400 uniform samples: both tenths at the edges are reached (failure odds ~ 2·0.9^400)
      expect(min).toBeLessThan(base * 0.9)
      expect(max).toBeGreaterThan(base * 1.1)
    }
    // the cap: 2^12 s is past one hour
    expect(defaultBackoff(12)).toBeLessThanOrEqual(3_600_000 * 1.2)
    expect(defaultBackoff(1000)).toBeLessThanOrEqual(3_600_000 * 1.2)
  })
})

describe.skipIf(ON_PG)('leases', () => {
  test('a job whose worker died is re-claimed once its lease lapses, and runs once', async () => {
    const { rt, clock } = env()
    const seen: number[] = []
    rt.worker.handle('test.orphan', async (_p, ctx) => void seen.push(ctx.attempt))
    const id = add(rt, { type: 'test.orphan' })!
    const claimed = await rt.queue.claim('dead-worker', clock.now(), 10, 1000)
    expect(claimed.map((j) => j.id)).toEqual([id])
    expect(claimed[0]).toMatchObject({ status: 'running', lockedBy: 'dead-worker', lockedUntil: T0 + 1000, attempts: 1 })

    expect(await rt.worker.runDue()).toBe(0)
    clock.advance(999)
    expect(await rt.worker.runDue()).toBe(0)
    expect(seen).toEqual([])
    clock.advance(1)
    expect(await rt.worker.runDue()).toBe(1)
    expect(seen).toEqual([2])
    expect(await rt.queue.get(id)).toBeUndefined()
    clock.advance(3_600_000)
    expect(await rt.worker.runDue()).toBe(0)
    expect(seen).toEqual([2])
  })

  test('claim never hands a leased job to a second worker', async () => {
    const { rt, clock } = env()
    const ids = [0, 1, 2].map(() => add(rt, { type: 'test.x' })!)
    const a = await rt.queue.claim('a', clock.now(), 2, 1000)
    const b = await rt.queue.claim('b', clock.now(), 10, 1000)
    expect(a).toHaveLength(2)
    expect(b).toHaveLength(1)
    expect(new Set([...a, ...b].map((j) => j.id))).toEqual(new Set(ids))
    expect(await rt.queue.claim('c', clock.now() + 999, 10, 1000)).toEqual([])
    expect(await rt.queue.claim('c', clock.now(), 0, 1000)).toEqual([])
  })

  test('complete and fail by a worker that no longer holds the lease change nothing', async () => {
    const { rt, clock } = env()
    const id = add(rt, { type: 'test.contended' })!
    await rt.queue.claim('dead-worker', clock.now(), 10, 1000)
    clock.advance(1000)
    const [taken] = await rt.queue.claim('w2', clock.now(), 10, 1000)
    expect(taken).toMatchObject({ id, lockedBy: 'w2', attempts: 2 })
    const before = await rt.queue.get(id)

    await rt.queue.complete(id, 'dead-worker')
    await rt.queue.fail(id, 'dead-worker', 'stale failure', null, clock.now())
    await rt.queue.fail(id, 'dead-worker', 'stale retry', clock.now() + 5, clock.now())
    await rt.queue.release([id], 'dead-worker', clock.now())
    expect(await rt.queue.get(id)).toEqual(before)

    await rt.queue.fail(id, 'w2', 'real failure', clock.now() + 5000, clock.now())
    expect(await rt.queue.get(id)).toMatchObject({ status: 'pending', lastError: 'real failure', runAt: clock.now() + 5000, lockedBy: null })
    // now pending: nobody holds it, so an old holder still cannot complete it
    await rt.queue.complete(id, 'w2')
    expect((await rt.queue.get(id))?.status).toBe('pending')
  })

  test('claim takes lapsed leases and due jobs oldest due first, up to the limit, of the types asked', async () => {
    const { rt, clock } = env()
    const late = add(rt, { type: 'test.a', runAt: T0 - 1000 })!
    const early = add(rt, { type: 'test.a', runAt: T0 - 3000 })!
    const other = add(rt, { type: 'test.b', runAt: T0 - 5000 })!
    add(rt, { type: 'test.a', runAt: T0 + 60_000 })
    // A lease that lapses, on a job that was due before all of them.
    const orphan = add(rt, { type: 'test.a', runAt: T0 - 9000 })!
    await rt.queue.claim('dead-worker', clock.now(), 1, 1000, { only: ['test.a'] })
    clock.advance(1000)
    const taken = await rt.queue.claim('w', clock.now(), 2, 1000, { only: ['test.a'] })
    expect(taken.map((j) => j.id)).toEqual([orphan, early])
    expect(taken[0]).toMatchObject({ status: 'running', lockedBy: 'w', attempts: 2 })
    expect((await rt.queue.claim('w', clock.now(), 10, 1000, { except: ['test.a'] })).map((j) => j.id)).toEqual([other])
    expect((await rt.queue.claim('w', clock.now(), 10, 1000)).map((j) => j.id)).toEqual([late])
  })

  test('a job re-claimed after its last attempt lapsed goes dead without running again', async () => {
    const { rt, clock } = env()
    let runs = 0
    rt.worker.handle('test.last-orphan', async () => void runs++)
    const id = add(rt, { type: 'test.last-orphan', maxAttempts: 1 })!
    await rt.queue.claim('dead-worker', clock.now(), 10, 1000)
    clock.advance(1000)
    expect(await rt.worker.runDue()).toBe(1)
    expect(runs).toBe(0)
    expect((await rt.queue.get(id))?.status).toBe('dead')
  })
})

describe.skipIf(ON_PG)('the background loop', () => {
  test('start() runs enqueued jobs without runDue, never more than `concurrency` at once', async () => {
    const { rt } = env({ concurrency: 2, pollMs: 5 })
    workers.push(rt.worker)
    let active = 0
    let peak = 0
    let done = 0
    rt.worker.handle('test.slow', async () => {
      active++
      peak = Math.max(peak, active)
      await Bun.sleep(5)
      active--
      done++
    })
    for (let i = 0; i < 7; i++) add(rt, { type: 'test.slow' })
    rt.worker.start()
    await waitFor(() => done === 7)
    expect(peak).toBe(2)
    await waitFor(async () => (await rt.queue.depth(rt.clock.now())).running === 0)
    expect(rt.db.db.select().from(jobs).all()).toHaveLength(0)
  })

  test('a lane: its type runs in slots of its own, so stuck jobs of it never hold up the others', async () => {
    const { rt } = env({ concurrency: 1, pollMs: 5 })
    workers.push(rt.worker)
    const gate = deferred()
    let stuck = 0
    let peakStuck = 0
    const quick: string[] = []
    rt.worker.handle(
      'test.network',
      async () => {
        stuck++
        peakStuck = Math.max(peakStuck, stuck)
        await gate.promise
        stuck--
      },
      { lane: 3 },
    )
    rt.worker.handle('test.quick', async (payload) => void quick.push(String(payload)))
    for (let i = 0; i < 5; i++) add(rt, { type: 'test.network' })
    for (const name of ['a', 'b', 'c']) add(rt, { type: 'test.quick', payload: name })
    rt.worker.start()
    // Three network jobs fill their lane; the quick ones still run, one at a time in the one shared slot.
    await waitFor(() => quick.length === 3 && stuck === 3)
    expect(peakStuck).toBe(3)
    expect(quick.sort()).toEqual(['a', 'b', 'c'])
    gate.resolve()
    await waitFor(async () => (await rt.queue.depth(rt.clock.now())).running === 0 && rt.db.db.select().from(jobs).all().length === 0)
    expect(peakStuck).toBe(3)
  })

  test('while a lane finishes jobs one after another, due jobs of the shared slots still run (polled)', async () => {
    const { rt } = env({ pollMs: 5 })
    workers.push(rt.worker)
    let streamed = 0
    let stop = false
    // Each stream job enqueues the next and wakes the worker through its own finish, never notify().
    rt.worker.handle(
      'test.stream',
      async () => {
        streamed++
        await Bun.sleep(1)
        if (!stop) add(rt, { type: 'test.stream' })
      },
      { lane: 1 },
    )
    let quick = false
    rt.worker.handle('test.quiet', async () => void (quick = true))
    add(rt, { type: 'test.stream' })
    rt.worker.start()
    await waitFor(() => streamed >= 3)
    add(rt, { type: 'test.quiet' })
    await waitFor(() => quick)
    stop = true
    expect(streamed).toBeGreaterThan(3)
  })

  test('a claim that finds the write lock taken is tried again shortly, not a poll interval later', async () => {
    const { rt } = env({ pollMs: 600_000 })
    workers.push(rt.worker)
    let ran = false
    rt.worker.handle('test.locked-out', async () => void (ran = true))
    add(rt, { type: 'test.locked-out' })
    // Storage itself: another writer of the file holds the write lock when the worker starts.
    const other = openDatabase(rt.db.path)
    try {
      other.sqlite.exec('BEGIN IMMEDIATE')
      rt.worker.start()
      await Bun.sleep(30)
      expect(ran).toBe(false)
      other.sqlite.exec('ROLLBACK')
      await waitFor(() => ran)
    } finally {
      other.close()
    }
  })

  test('stop(timeout) gives back jobs still running, attempt uncounted, and another worker takes them at once', async () => {
    const { rt, clock } = env({ pollMs: 5, leaseMs: 60_000 })
    const started = deferred()
    const gate = deferred()
    let firstFinished = false
    rt.worker.handle('test.stuck', async () => {
      started.resolve()
      await gate.promise
      firstFinished = true
    })
    const quick: string[] = []
    rt.worker.handle('test.quick', async (p) => void quick.push(p as string))
    const stuckId = add(rt, { type: 'test.stuck' })!
    rt.worker.start()
    await started.promise
    add(rt, { type: 'test.quick', payload: 'q' })
    rt.worker.notify()
    await waitFor(() => quick.length === 1)
    expect((await rt.queue.get(stuckId))?.status).toBe('running')
    expect(rt.worker.busy).toBe(1)

    const t = Date.now()
    await rt.worker.stop(50)
    expect(Date.now() - t).toBeLessThan(2000)
    expect(await rt.queue.get(stuckId)).toMatchObject({ status: 'pending', attempts: 0, lockedBy: null, lockedUntil: null, runAt: clock.now() })

    // the clock has not moved: another worker gets it at once, as attempt 1
    const other = new Worker({ queue: rt.queue, clock, log: rt.log }, { id: 'w2' })
    const seen: number[] = []
    other.handle('test.stuck', async (_p, ctx) => void seen.push(ctx.attempt))
    expect(await other.runDue()).toBe(1)
    expect(seen).toEqual([1])
    expect(await rt.queue.get(stuckId)).toBeUndefined()

    // the first run finishing late records nothing (and throws nothing)
    gate.resolve()
    await waitFor(() => firstFinished && rt.worker.busy === 0)
    expect(rt.db.db.select().from(jobs).all()).toHaveLength(0)
  })

  test('stop() waits for running jobs that finish within the timeout and completes them', async () => {
    const { rt } = env({ pollMs: 5 })
    const started = deferred()
    rt.worker.handle('test.short', async () => {
      started.resolve()
      await Bun.sleep(20)
    })
    const id = add(rt, { type: 'test.short' })!
    rt.worker.start()
    await started.promise
    const t = Date.now()
    await rt.worker.stop(5000)
    expect(Date.now() - t).toBeLessThan(2000)
    expect(await rt.queue.get(id)).toBeUndefined()
    expect(rt.worker.busy).toBe(0)
  })

  test('after stop() the process can end at once: no timer is left waiting for the shutdown timeout', async () => {
    const dir = tempDir()
    try {
      const t = Date.now()
      const proc = Bun.spawn(['bun', 'run', 'test/jobs/fixtures/stop-then-exit.ts', dir], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
      const killer = setTimeout(() => proc.kill(), 25_000)
      const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
      clearTimeout(killer)
      const elapsed = Date.now() - t
      expect(code).toBe(0)
      const report = JSON.parse(out.trim()) as { stopMs: number; left: number }
      expect(report.left).toBe(0)
      expect(report.stopMs).toBeLessThan(2000)
      // stop(15 000) returned early; the process must not linger until the 15 s are up
      expect(elapsed).toBeLessThan(8000)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  test('an outbox consumer that throws does not stop due jobs from running', async () => {
    const { lines, log } = capture()
    const { rt } = env({ pollMs: 5 }, log)
    workers.push(rt.worker)
    let consumed = 0
    rt.outbox.consume(function* () {
      consumed++
      throw new Error('consumer cannot take it')
    })
    rt.db.db.transaction((tx) => publish(tx, { type: 'webhook.test', workspaceId: 'ws_1', mode: 'live', data: { endpointId: 'we_1', message: 'hi' } }, T0))
    let ran = false
    rt.worker.handle('test.independent', async () => void (ran = true))
    add(rt, { type: 'test.independent' })
    rt.worker.start()
    await waitFor(() => ran)
    expect(consumed).toBeGreaterThan(0)
    expect(lines.some((l) => l.includes('outbox dispatch failed') && l.includes('consumer cannot take it'))).toBe(true)
  })

  test('a queue that cannot record an outcome is logged, not an unhandled rejection that ends the process', async () => {
    const { lines, log } = capture()
    const { rt, clock } = env({}, log)
    const real = rt.queue
    let completeCalls = 0
    const broken: JobQueue = {
      ...real,
      complete: async () => {
        completeCalls++
        throw new Error('disk I/O error')
      },
      fail: async () => {
        throw new Error('disk I/O error')
      },
    }
    const worker = new Worker({ queue: broken, clock, log }, { id: 'broken', pollMs: 5 })
    workers.push(worker)
    worker.handle('test.unrecordable', async () => {})
    const id = add(rt, { type: 'test.unrecordable' })!
    worker.start()
    await waitFor(() => lines.some((l) => l.includes('job outcome could not be recorded')))
    expect(completeCalls).toBe(1)
    // the job stays leased to the worker and is resumed after the lease, like after a crash
    expect(await real.get(id)).toMatchObject({ status: 'running', lockedBy: 'broken' })
    await worker.stop(100)
    expect(worker.busy).toBe(0)
  })
})

describe.skipIf(ON_PG)('periodic tasks', () => {
  const reserve = (rt: TestEnv['rt'], key: string, expiresAt: number) =>
    rt.modules.system.idempotency.reserve(
      { id: `idem_${key}`, apiKeyId: 'key_1', key, method: 'POST', path: '/v1/links', requestHash: 'h', createdAt: T0 - 86_400_000, expiresAt },
      T0 - 86_400_000,
    )

  test('the idempotency prune removes only the expired records', async () => {
    const { rt, clock } = env()
    const task = PERIODIC_TASKS[0]!
    expect(task.jobType).toBe(PRUNE_IDEMPOTENCY)
    expect(await reserve(rt, 'old', T0 - 1)).toBe(true)
    expect(await reserve(rt, 'edge', T0)).toBe(true)
    expect(await reserve(rt, 'fresh', T0 + 1)).toBe(true)
    expect(await reserve(rt, 'later', T0 + 86_400_000)).toBe(true)

    const jobId = await triggerPeriodic(engineOf(rt.store), task, clock.now())
    expect(jobId).not.toBeNull()
    expect(await rt.queue.get(jobId!)).toMatchObject({ type: PRUNE_IDEMPOTENCY, uniqueKey: `periodic:${task.name}`, maxAttempts: 3 })
    expect(await rt.worker.runDue()).toBe(1)
    expect(await rt.modules.system.idempotency.find('key_1', 'old')).toBeUndefined()
    expect(await rt.modules.system.idempotency.find('key_1', 'edge')).toBeUndefined()
    expect(await rt.modules.system.idempotency.find('key_1', 'fresh')).toBeDefined()
    expect(await rt.modules.system.idempotency.find('key_1', 'later')).toBeDefined()
    expect(await rt.queue.get(jobId!)).toBeUndefined()
  })

  test('triggering twice before the job runs enqueues one job; after it ran, the next trigger enqueues again', async () => {
    const { rt, clock } = env()
    const task = PERIODIC_TASKS[0]!
    expect(await triggerPeriodic(engineOf(rt.store), task, clock.now())).not.toBeNull()
    expect(await triggerPeriodic(engineOf(rt.store), task, clock.now())).toBeNull()
    expect(rt.db.db.select().from(jobs).where(eq(jobs.type, task.jobType)).all()).toHaveLength(1)
    expect(await rt.worker.runDue()).toBe(1)
    expect(await triggerPeriodic(engineOf(rt.store), task, clock.now())).not.toBeNull()
    expect(rt.db.db.select().from(jobs).where(eq(jobs.type, task.jobType)).all()).toHaveLength(1)
  })

  test('a periodic job that died does not block later triggers', async () => {
    const { rt, clock } = env()
    const task: PeriodicTask = { name: 'test-dies', pattern: '0 * * * *', jobType: 'test.periodic-dies' }
    let runs = 0
    rt.worker.handle(task.jobType, async () => {
      if (++runs === 1) throw new PermanentFailure('broken this once')
    })
    const first = (await triggerPeriodic(engineOf(rt.store), task, clock.now()))!
    await rt.worker.runDue()
    expect((await rt.queue.get(first))?.status).toBe('dead')

    clock.advance(3_600_000)
    const second = await triggerPeriodic(engineOf(rt.store), task, clock.now())
    expect(second).not.toBeNull()
    expect(await triggerPeriodic(engineOf(rt.store), task, clock.now())).toBeNull()
    expect(await rt.worker.runDue()).toBe(1)
    expect(runs).toBe(2)
    // the dead one is kept for inspection
    expect(await rt.queue.get(first)).toMatchObject({ status: 'dead', lastError: 'broken this once' })
  })

  test('startPeriodic creates a UTC croner job per task with its pattern; a tick enqueues once; stop ends them', async () => {
    const { rt, clock } = env()
    const tasks: PeriodicTask[] = [...PERIODIC_TASKS, { name: 'test-every-5', pattern: '*/5 * * * *', jobType: 'test.every-5' }]
    const before = new Set(scheduledJobs)
    let triggers = 0
    const periodic = startPeriodic(
      engineOf(rt.store),
      tasks,
      () => clock.now(),
      () => void triggers++,
    )
    const created = scheduledJobs.filter((c) => !before.has(c))
    try {
      expect(created).toHaveLength(tasks.length)
      for (const task of tasks) {
        const cron = created.find((c) => c.name?.startsWith(`lnk:${task.name}:`)) as Cron | undefined
        expect(cron).toBeDefined()
        expect(cron!.getPattern()).toBe(task.pattern)
        expect(cron!.isRunning()).toBe(true)
      }
      const prune = created.find((c) => c.name?.startsWith('lnk:prune-idempotency:'))!
      // '17 * * * *' in UTC: the next run is at minute 17 of the next hour that still has it
      const from = new Date(Date.UTC(2030, 5, 1, 10, 20, 0))
      expect(prune.nextRun(from)?.toISOString()).toBe('2030-06-01T11:17:00.000Z')
      expect(prune.nextRun(new Date(Date.UTC(2030, 5, 1, 10, 16, 59)))?.toISOString()).toBe('2030-06-01T10:17:00.000Z')
      const every5 = created.find((c) => c.name?.startsWith('lnk:test-every-5:'))!
      expect(every5.nextRuns(3, new Date(Date.UTC(2030, 5, 1, 10, 1, 0))).map((d) => d.toISOString())).toEqual([
        '2030-06-01T10:05:00.000Z',
        '2030-06-01T10:10:00.000Z',
        '2030-06-01T10:15:00.000Z',
      ])

      // a tick (fired by hand so the test need not wait for the minute) enqueues the durable job once
      await prune.trigger()
      await prune.trigger()
      expect(triggers).toBe(1)
      const queued = rt.db.db.select().from(jobs).all()
      expect(queued).toHaveLength(1)
      expect(queued[0]).toMatchObject({ type: PRUNE_IDEMPOTENCY, uniqueKey: 'periodic:prune-idempotency', runAt: T0 })
    } finally {
      periodic.stop()
    }
    for (const c of created) expect(c.isStopped()).toBe(true)
    expect(scheduledJobs.filter((c) => !before.has(c))).toHaveLength(0)
  })

  test('a trigger that fails is reported to onError instead of escaping the croner callback', async () => {
    const { rt, clock } = env()
    const task: PeriodicTask = { name: 'test-fails', pattern: '0 0 1 1 *', jobType: 'test.never' }
    const before = new Set(scheduledJobs)
    const errors: string[] = []
    const periodic = startPeriodic(
      engineOf(rt.store),
      [task],
      () => clock.now(),
      () => {},
      (t, err) => errors.push(`${t.name}: ${(err as Error).message}`),
    )
    const cron = scheduledJobs.find((c) => !before.has(c))!
    try {
      // Raw on purpose: the table is taken away so the trigger's write fails.
      rt.db.sqlite.exec('DROP TABLE jobs')
      await cron.trigger()
      expect(errors).toHaveLength(1)
      expect(errors[0]).toStartWith('test-fails: ')
      expect(errors[0]).toContain('jobs')
    } finally {
      periodic.stop()
    }
  })
})

test.skipIf(ON_PG)('createJobQueue works on any handle of the same file', async () => {
  // a second connection (as a second process would have) sees the jobs the first enqueued
  const { rt, clock } = env()
  const { openDatabase } = await import('../../src/db/client')
  const other = openDatabase(rt.db.path)
  try {
    const id = add(rt, { type: 'test.shared' })!
    const q2 = sqliteQueue(other.db)
    const [job] = await q2.claim('second', clock.now(), 5, 1000)
    expect(job?.id).toBe(id)
    expect(await rt.queue.claim('first', clock.now(), 5, 1000)).toEqual([])
  } finally {
    other.close()
  }
})
