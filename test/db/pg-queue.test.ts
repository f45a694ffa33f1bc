// The job queue on a real PostgreSQL (src/jobs/queue.ts, its claim repo-claim.ts's): claimers on separate connections never
// take the same job and together take all; a lapsed lease hands a job to another worker with the attempt
// counted; only the lease holder completes, fails or releases; unique keys and dead jobs behave as on
// SQLite (the same script run on both queues gives the same trace); an enqueue rolled back leaves no job and
// sends no wake-up, a committed one wakes a listener on another connection.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { openDatabase, type DbHandle } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { openPostgres } from '../../src/db/pg/connect'
import { migratePostgres } from '../../src/db/pg/migrate'
import type { Engine } from '../../src/db/engine'
import { pgEngine } from '../../src/db/engine/pg'
import { pgDrizzle } from '../../src/db/pg/client'
import { listenChanges } from '../../src/db/pg/notify'
import { completing, createJobQueue, enqueue, enqueuing, JOBS_CHANNEL, type EnqueueInput, type JobQueue } from '../../src/jobs/queue'
import { sqliteQueue } from '../jobs/_queue'
import { tempDir } from '../helpers'
import { createTestDatabase, type TestDatabase } from '../setup/postgres'

const T0 = 1_700_000_000_000

let pg: TestDatabase
let sql: SQL
let queue: JobQueue
let engine: Engine
const pgQueue = (client: SQL) => createJobQueue(pgEngine(pgDrizzle(client)))

beforeAll(async () => {
  pg = await createTestDatabase()
  sql = await openPostgres(pg.url, { max: 4 })
  await migratePostgres(sql)
  engine = pgEngine(pgDrizzle(sql))
  queue = pgQueue(sql)
})

afterAll(async () => {
  await sql?.close()
  await pg?.drop()
})

beforeEach(async () => {
  await sql`DELETE FROM jobs`
})

const add = (input: EnqueueInput, now = T0) => engine.transaction((tx) => enqueuing(engine, tx, input, now))
const complete = (id: string, workerId: string) => engine.transaction((tx) => completing(engine, tx, id, workerId))

/** Polls `done` up to ~10 s: waits are bounded, never timed assertions. */
async function until(done: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 200 && !(await done()); i++) await Bun.sleep(50)
  return done()
}

describe('enqueue, claim, finish', () => {
  test('a job reads back as it was enqueued, payload and times included', async () => {
    const id = (await add({ type: 'a', payload: { n: 1, tags: ['x'] }, maxAttempts: 3 }))!
    const none = (await add({ type: 'b' }))!
    expect(await queue.get(id)).toEqual({
      id,
      type: 'a',
      payload: { n: 1, tags: ['x'] },
      status: 'pending',
      runAt: T0,
      attempts: 0,
      maxAttempts: 3,
      uniqueKey: null,
      lockedBy: null,
      lockedUntil: null,
      lastError: null,
      createdAt: T0,
      updatedAt: T0,
    })
    expect((await queue.get(none))!.payload).toBeNull()
    expect((await queue.get(none))!.maxAttempts).toBe(5)
    expect(await queue.get('job_missing')).toBeUndefined()
  })

  test('a claim takes due jobs oldest first, up to the limit, of the types asked', async () => {
    await add({ type: 'a', runAt: T0 - 10, payload: 1 })
    await add({ type: 'a', runAt: T0 - 30, payload: 2 })
    await add({ type: 'b', runAt: T0 - 20, payload: 3 })
    await add({ type: 'a', runAt: T0 + 1, payload: 4 })
    expect(await queue.claim('w', T0, 0, 1000)).toEqual([])
    expect((await queue.claim('w', T0, 10, 1000, { only: [] })).length).toBe(0)
    expect((await queue.claim('w', T0, 10, 1000, { except: ['a'] })).map((j) => j.payload)).toEqual([3])
    const [first] = await queue.claim('w', T0, 1, 1000, { only: ['a'] })
    expect(first).toMatchObject({ payload: 2, status: 'running', attempts: 1, lockedBy: 'w', lockedUntil: T0 + 1000, updatedAt: T0 })
    expect((await queue.claim('w', T0, 10, 1000)).map((j) => j.payload)).toEqual([1])
    expect(await queue.depth(T0)).toEqual({ due: 0, scheduled: 1, running: 3, dead: 0 })
    expect((await queue.claim('w', T0 + 1, 10, 1000)).map((j) => j.payload)).toEqual([4])
  })

  test('fail reschedules or buries a job; release gives it back with the attempt uncounted', async () => {
    const [a, b, c] = [(await add({ type: 'a' }))!, (await add({ type: 'a' }))!, (await add({ type: 'a' }))!]
    await queue.claim('w', T0, 10, 1000)
    await queue.fail(a, 'w', 'boom', T0 + 500, T0 + 1)
    await queue.fail(b, 'w', 'for good', null, T0 + 1)
    await queue.release([c], 'w', T0 + 2)
    expect(await queue.get(a)).toMatchObject({
      status: 'pending',
      runAt: T0 + 500,
      attempts: 1,
      lastError: 'boom',
      lockedBy: null,
      lockedUntil: null,
      updatedAt: T0 + 1,
    })
    expect(await queue.get(b)).toMatchObject({ status: 'dead', runAt: T0, attempts: 1, lastError: 'for good', lockedBy: null })
    expect(await queue.get(c)).toMatchObject({ status: 'pending', runAt: T0 + 2, attempts: 0, lockedBy: null })
    expect(await queue.depth(T0 + 2)).toEqual({ due: 1, scheduled: 1, running: 0, dead: 1 })
  })

  test('a job completed inside the handler’s transaction is removed only for its holder', async () => {
    const id = (await add({ type: 'a' }))!
    await queue.claim('w', T0, 1, 1000)
    expect(await complete(id, 'other')).toBe(false)
    const rolledBack = engine.transaction(function* (tx) {
      expect(yield* completing(engine, tx, id, 'w')).toBe(true)
      throw new Error('the handler failed after completing')
    })
    await expect(rolledBack).rejects.toThrow('the handler failed')
    expect(await queue.get(id)).toBeDefined()
    expect(await complete(id, 'w')).toBe(true)
    expect(await queue.get(id)).toBeUndefined()
  })
})

describe('leases', () => {
  test('a lapsed lease returns the job to another worker, attempt counted; the old holder can no longer finish it', async () => {
    const id = (await add({ type: 'a' }))!
    expect((await queue.claim('w1', T0, 10, 1000)).map((j) => j.id)).toEqual([id])
    expect(await queue.claim('w2', T0 + 999, 10, 1000)).toEqual([])
    const [again] = await queue.claim('w2', T0 + 1000, 10, 1000)
    expect(again).toMatchObject({ id, attempts: 2, lockedBy: 'w2', lockedUntil: T0 + 2000 })

    await queue.complete(id, 'w1')
    await queue.fail(id, 'w1', 'late', null, T0 + 1001)
    await queue.release([id], 'w1', T0 + 1001)
    expect(await queue.get(id)).toMatchObject({ status: 'running', attempts: 2, lockedBy: 'w2', lastError: null })

    await queue.complete(id, 'w2')
    expect(await queue.get(id)).toBeUndefined()
  })

  test('two claimers on separate connections never take the same job and together take all', async () => {
    const total = 400
    await engine.transaction(function* (tx) {
      for (let i = 0; i < total; i++) yield* enqueuing(engine, tx, { type: i % 3 ? 'a' : 'b', payload: i, runAt: T0 - i }, T0)
    })
    const clients = [new SQL(pg.url, { max: 2 }), new SQL(pg.url, { max: 2 })]
    try {
      const taken: { id: string; by: string }[] = []
      // Two loops per client, so claims also overlap on each client's two connections.
      const claimer = async (q: JobQueue, name: string) => {
        for (let round = 0; round < total; round++) {
          const jobs = await q.claim(name, T0, 7, 60_000)
          if (!jobs.length) return
          for (const j of jobs) taken.push({ id: j.id, by: name })
        }
      }
      const queues = clients.map(pgQueue)
      await Promise.all([claimer(queues[0]!, 'a1'), claimer(queues[0]!, 'a2'), claimer(queues[1]!, 'b1'), claimer(queues[1]!, 'b2')])
      expect(taken.length).toBe(total)
      expect(new Set(taken.map((t) => t.id)).size).toBe(total)
      const held = await sql`SELECT id, locked_by, attempts::int AS attempts FROM jobs`
      expect(held.length).toBe(total)
      const holder = new Map(taken.map((t) => [t.id, t.by]))
      for (const row of held) expect([row.locked_by, row.attempts]).toEqual([holder.get(row.id), 1])
    } finally {
      await Promise.all(clients.map((c) => c.close()))
    }
  })
})

describe('unique keys', () => {
  test('a second job with a live key is ignored; a dead job gives its key up', async () => {
    const first = await add({ type: 'a', uniqueKey: 'k' })
    expect(first).toBeString()
    expect(await add({ type: 'a', uniqueKey: 'k' })).toBeNull()
    await queue.claim('w', T0, 10, 1000)
    expect(await add({ type: 'a', uniqueKey: 'k' })).toBeNull()
    await queue.fail(first!, 'w', 'gave up', null, T0)
    const second = await add({ type: 'a', uniqueKey: 'k' })
    expect(second).toBeString()
    expect(second).not.toBe(first)
    expect(await queue.get(first!)).toMatchObject({ status: 'dead', uniqueKey: null })
    expect(await queue.get(second!)).toMatchObject({ status: 'pending', uniqueKey: 'k' })
  })

  test('the same script gives the same trace on SQLite and on PostgreSQL', async () => {
    const dir = tempDir('lnk-pg-queue-')
    const h: DbHandle = openDatabase(join(dir, 'lnk.db'))
    try {
      migrate(h.sqlite)
      const sqlite = sqliteQueue(h.db)
      const onSqlite = await script(sqlite, async (input, now) => enqueue(h.db, input, now))
      const onPg = await script(queue, (input, now) => add(input, now))
      expect(onPg).toEqual(onSqlite)
      expect(onPg.length).toBeGreaterThan(10)
    } finally {
      h.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

/** Enqueues, claims, fails, lets leases lapse and releases; answers what each step saw, ids numbered. */
async function script(q: JobQueue, put: (input: EnqueueInput, now: number) => Promise<string | null>) {
  const names = new Map<string, string>()
  const name = (id: string | null) => (id === null ? null : (names.get(id) ?? (names.set(id, `#${names.size}`), names.get(id)!)))
  const trace: unknown[] = []
  const claim = async (w: string, now: number, types = {}) => {
    const jobs = await q.claim(w, now, 2, 100, types)
    trace.push(['claim', w, now, jobs.map((j) => [name(j.id), j.type, j.payload, j.attempts, j.lockedUntil])])
    return jobs
  }
  const state = async (id: string) => {
    const j = await q.get(id)
    trace.push(['get', name(id), j && [j.status, j.attempts, j.runAt, j.uniqueKey, j.lockedBy, j.lastError]])
  }
  const a = (await put({ type: 'x', payload: { k: 1 }, uniqueKey: 'u', maxAttempts: 2 }, T0))!
  trace.push(['put', name(a), name(await put({ type: 'x', uniqueKey: 'u' }, T0))])
  const b = (await put({ type: 'y', payload: [2], runAt: T0 + 50 }, T0))!
  trace.push(['put', name(b)])
  await claim('w1', T0, { only: ['y'] })
  await claim('w1', T0)
  await claim('w2', T0 + 50)
  await claim('w2', T0 + 100)
  await state(a)
  await q.fail(a, 'w1', 'stale holder', null, T0 + 101)
  await q.fail(a, 'w2', 'boom', T0 + 150, T0 + 101)
  await state(a)
  await q.release([b], 'w2', T0 + 102)
  await state(b)
  await claim('w3', T0 + 150, { except: ['y'] })
  await q.fail(a, 'w3', 'dead now', null, T0 + 151)
  await state(a)
  const c = await put({ type: 'x', uniqueKey: 'u' }, T0 + 152)
  trace.push(['put', name(c)])
  await state(a)
  await state(c!)
  await q.complete(b, 'w3')
  await claim('w3', T0 + 200)
  await q.complete(b, 'w3')
  await state(b)
  trace.push(['depth', await q.depth(T0 + 200)])
  return trace
}

describe('wake-ups', () => {
  test('a committed enqueue of a due job wakes a listener on another connection; a rolled-back or later one does not', async () => {
    const woken: (string | undefined)[] = []
    // As the runtime listens: a job's notice carries its type; a reset (the connection came back) none.
    const listener = await listenChanges(pg.url, [JOBS_CHANNEL], { onChange: (_channel, type) => woken.push(type), onReset: () => woken.push(undefined) })
    try {
      await engine
        .transaction(function* (tx) {
          yield* enqueuing(engine, tx, { type: 'rolled' }, T0)
          throw new Error('roll back')
        })
        .catch(() => {})
      await add({ type: 'later', runAt: T0 + 1 })
      await add({ type: 'due' })
      // Notices arrive in commit order: had the rolled-back or the later one been sent, it would be here first.
      expect(await until(() => woken.includes('due'))).toBe(true)
      expect(woken).toEqual(['due'])
      expect((await sql`SELECT type FROM jobs ORDER BY type`).map((r: { type: string }) => r.type)).toEqual(['due', 'later'])
    } finally {
      await listener.close()
    }
  })
})
