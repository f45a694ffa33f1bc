// The sweep lock (src/jobs/sweep-lock-pg.ts) on a real PostgreSQL, each node a client of its own: one node
// holds it at a time and keeps it; a node that does not hold it pins no connection; when the holder's
// session ends (its connection cut, or its process killed with SIGKILL) another node takes it at its next
// check and the old holder knows it lost it; giving it up hands it over. Periodic triggers enqueue on the
// holder only, once per waiting job.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { SQL } from 'bun'
import { openPostgres } from '../../src/db/pg/connect'
import { migratePostgres } from '../../src/db/pg/migrate'
import type { PeriodicTask } from '../../src/jobs/periodic'
import { createSweepLock, SWEEP_LOCK, type SweepLock } from '../../src/jobs/sweep-lock-pg'
import { startPeriodic, triggerPeriodic } from '../../src/jobs/periodic'
import { pgEngine } from '../../src/db/engine/pg'
import { pgDrizzle } from '../../src/db/pg/client'
import { createTestDatabase, type TestDatabase } from '../setup/postgres'

const T0 = 1_700_000_000_000

let pg: TestDatabase
let sql: SQL
const opened: { close(): Promise<void> }[] = []

/** A node: a pool of its own and its lock. */
async function node(max = 2): Promise<{ sql: SQL; lock: SweepLock }> {
  const client = await openPostgres(pg.url, { max })
  const lock = createSweepLock(client)
  opened.push(client, lock)
  return { sql: client, lock }
}

/** The backend pids holding the sweep lock. */
const holders = async () =>
  (
    (await sql`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = ${SWEEP_LOCK}::bigint`) as {
      pid: number
    }[]
  ).map((r) => r.pid)

/** Polls `done` up to ~10 s: waits are bounded, never timed assertions. */
async function until(done: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 200 && !(await done()); i++) await Bun.sleep(50)
  return done()
}

beforeAll(async () => {
  pg = await createTestDatabase()
  sql = await openPostgres(pg.url, { max: 2 })
  await migratePostgres(sql)
})

afterAll(async () => {
  for (const o of opened.reverse()) await o.close().catch(() => {})
  await sql?.close()
  await pg?.drop()
})

beforeEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close().catch(() => {})
  await sql`DELETE FROM jobs`
  expect(await until(async () => (await holders()).length === 0)).toBe(true)
})

describe('holding', () => {
  test('one node holds it and keeps it; the others are refused and pin no connection', async () => {
    const racers = await Promise.all([node(), node(), node()])
    const first = await Promise.all(racers.map((n) => n.lock.hold()))
    expect(first.filter(Boolean)).toHaveLength(1)
    await Promise.all(racers.map((n) => n.lock.close()))

    const a = await node()
    const b = await node(1)
    const c = await node()
    expect(await a.lock.hold()).toBe(true)
    for (let i = 0; i < 5; i++) expect(await Promise.all([a.lock.hold(), b.lock.hold(), c.lock.hold(), b.lock.hold()])).toEqual([true, false, false, false])
    expect(await holders()).toHaveLength(1)
    // b's pool has one connection: had a refused check kept it reserved, this would wait for ever.
    expect(await b.sql`SELECT 1 AS one`).toEqual([{ one: 1 }])
  })

  test('giving it up hands it to the next node that checks', async () => {
    const a = await node()
    const b = await node()
    expect(await a.lock.hold()).toBe(true)
    expect(await b.lock.hold()).toBe(false)
    await a.lock.close()
    expect(await b.lock.hold()).toBe(true)
    expect(await a.lock.hold()).toBe(false)
  })

  test("when the holder's session ends, another node takes it and the old holder learns it lost it", async () => {
    const a = await node()
    const b = await node()
    expect(await a.lock.hold()).toBe(true)
    const [pid] = await holders()
    await sql`SELECT pg_terminate_backend(${pid}::int)`
    expect(await until(() => b.lock.hold())).toBe(true)
    expect(await a.lock.hold()).toBe(false)
    expect(await b.lock.hold()).toBe(true)
  })

  test('a holder killed with SIGKILL releases it', async () => {
    const script = `
      import { openPostgres } from ${JSON.stringify(join(import.meta.dir, '../../src/db/pg/connect'))}
      import { createSweepLock } from ${JSON.stringify(join(import.meta.dir, '../../src/jobs/sweep-lock-pg'))}
      const lock = createSweepLock(await openPostgres(process.env.URL))
      console.log(await lock.hold() ? 'held' : 'refused')
      setInterval(() => {}, 1000)`
    const child = Bun.spawn(['bun', '-e', script], { env: { ...process.env, URL: pg.url }, stdout: 'pipe', stderr: 'inherit' })
    try {
      const reader = child.stdout.getReader()
      const { value } = await reader.read()
      expect(new TextDecoder().decode(value).trim()).toBe('held')
      const b = await node()
      expect(await b.lock.hold()).toBe(false)
      child.kill('SIGKILL')
      await child.exited
      expect(await until(() => b.lock.hold())).toBe(true)
    } finally {
      child.kill('SIGKILL')
    }
  })
})

describe('periodic triggers', () => {
  const task: PeriodicTask = { name: 'sweep', pattern: '* * * * * *', jobType: 'sweep.run' }
  const jobs = async () => (await sql`SELECT type, unique_key FROM jobs`) as { type: string; unique_key: string }[]

  test('only the holder enqueues, and one job waits at most', async () => {
    const a = await node()
    const b = await node()
    expect(await a.lock.hold()).toBe(true)
    expect(await triggerPeriodic(pgEngine(pgDrizzle(b.sql)), task, T0, b.lock)).toBeNull()
    expect(await jobs()).toEqual([])
    expect(await triggerPeriodic(pgEngine(pgDrizzle(a.sql)), task, T0, a.lock)).toStartWith('job_')
    expect(await triggerPeriodic(pgEngine(pgDrizzle(a.sql)), task, T0 + 1, a.lock)).toBeNull()
    expect(await jobs()).toEqual([{ type: 'sweep.run', unique_key: 'periodic:sweep' }])
  })

  test('every node ticks, the holder alone triggers', async () => {
    const a = await node()
    const b = await node()
    expect(await a.lock.hold()).toBe(true)
    const triggered = [0, 0]
    const errors: unknown[] = []
    const runs = [a, b].map((n, i) =>
      startPeriodic(
        pgEngine(pgDrizzle(n.sql)),
        [task],
        () => T0,
        () => triggered[i]!++,
        (_t, err) => errors.push(err),
        n.lock,
      ),
    )
    try {
      // Each job taken away as if run, so each tick of the holder enqueues again.
      expect(
        await until(async () => {
          await sql`DELETE FROM jobs`
          return triggered[0]! >= 3
        }),
      ).toBe(true)
      expect(triggered[1]).toBe(0)
      expect(errors).toEqual([])
    } finally {
      runs.forEach((r) => r.stop())
    }
  })
})
