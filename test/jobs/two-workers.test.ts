// Exactly-once under contention: two workers in two separate processes on one SQLite file (WAL) share the
// queue (and the outbox). Every job must run exactly once and every event be dispatched exactly once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase, type DbHandle } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { registerEvents } from '../../src/events/catalogue'
import { publish } from '../../src/events/outbox'
import { enqueue } from '../../src/jobs/queue'
import { ROOT, tempDir } from '../helpers'
import { eventsPending, jobsLeft } from './_queue'
import { WEBHOOK_EVENTS } from '../../src/modules/webhooks/model'

// The webhooks module registers webhook.test when a runtime is built; this file publishes without one.
registerEvents(WEBHOOK_EVENTS)

const FIXTURE = 'test/jobs/fixtures/worker-process.ts'

interface Report {
  worker: string
  handled: number
  consumed: number
  left: number
  errors: string[]
}

let dir: string
let dbPath: string
let h: DbHandle

beforeAll(() => {
  dir = tempDir('lnk-two-workers-')
  dbPath = join(dir, 'lnk.db')
  h = openDatabase(dbPath)
  migrate(h.sqlite)
  // Plain tables without unique constraints, so a job run twice or an event dispatched twice shows up. Raw on
  // purpose, here and wherever they are used: they are the test's own tables, no lnk storage.
  h.sqlite.exec('CREATE TABLE handled (job_id TEXT NOT NULL, worker TEXT NOT NULL)')
  h.sqlite.exec('CREATE TABLE consumed (event_id TEXT NOT NULL, worker TEXT NOT NULL)')
  h.sqlite.exec('CREATE TABLE ready (worker TEXT NOT NULL)')
})

afterAll(() => {
  h?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function runWorkers(ids: string[], env: Record<string, string> = {}): Promise<Report[]> {
  h.sqlite.exec('DELETE FROM ready')
  const procs = ids.map((id) =>
    Bun.spawn(['bun', 'run', FIXTURE, dbPath, id, String(ids.length)], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdout: 'pipe',
      stderr: 'pipe',
    }),
  )
  const killer = setTimeout(() => procs.forEach((p) => p.kill()), 35_000)
  try {
    return await Promise.all(
      procs.map(async (p, i) => {
        const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
        if (code !== 0) throw new Error(`worker ${ids[i]} exited with ${code}\n${out}\n${err}`)
        return JSON.parse(out.trim().split('\n').at(-1)!) as Report
      }),
    )
  } finally {
    clearTimeout(killer)
  }
}

/** A count from the test's own tables (raw on purpose, see beforeAll). */
const count = (sql: string) => (h.sqlite.query(sql).get() as { n: number }).n

describe('two worker processes on one database file', () => {
  test('claim 400 jobs: each runs exactly once, none is left, both workers take part', async () => {
    const now = Date.now()
    const ids = h.db.transaction((tx) => Array.from({ length: 400 }, (_, i) => enqueue(tx, { type: 'test.record', payload: { i } }, now)!))
    expect(new Set(ids).size).toBe(400)
    expect(await jobsLeft(h.db)).toBe(400)

    const reports = await runWorkers(['alpha', 'beta'])

    expect(count('SELECT count(*) AS n FROM handled')).toBe(400)
    expect(count('SELECT count(DISTINCT job_id) AS n FROM handled')).toBe(400)
    const handledIds = (h.sqlite.query('SELECT job_id FROM handled').all() as { job_id: string }[]).map((r) => r.job_id)
    expect(new Set(handledIds)).toEqual(new Set(ids))
    expect(await jobsLeft(h.db)).toBe(0)
    expect(reports.map((r) => r.left)).toEqual([0, 0])
    expect(reports.reduce((n, r) => n + r.handled, 0)).toBe(400)
    for (const r of reports) {
      expect(r.errors).toEqual([])
      // both competed for the queue (they start together behind a barrier)
      expect(r.handled).toBeGreaterThan(0)
      expect(count(`SELECT count(*) AS n FROM handled WHERE worker = '${r.worker}'`)).toBe(r.handled)
    }
  }, 40_000)

  test('dispatch 600 outbox events: each reaches a consumer exactly once, in order per worker, without lock errors', async () => {
    const now = Date.now()
    const eventIds = h.db.transaction((tx) =>
      Array.from(
        { length: 600 },
        (_, i) => publish(tx, { type: 'webhook.test', workspaceId: 'ws_1', mode: 'live', data: { endpointId: 'we_1', message: `m${i}` } }, now + i).id,
      ),
    )
    // a few jobs too, so the workers keep polling while the outbox drains
    h.db.transaction((tx) => {
      for (let i = 0; i < 200; i++) enqueue(tx, { type: 'test.record' }, now)
    })

    const reports = await runWorkers(['gamma', 'delta'], { LNK_TEST_OUTBOX: '1' })

    expect(count('SELECT count(*) AS n FROM consumed')).toBe(600)
    expect(count('SELECT count(DISTINCT event_id) AS n FROM consumed')).toBe(600)
    expect(await eventsPending(h.db)).toBe(0)
    expect(await jobsLeft(h.db)).toBe(0)
    expect(reports.reduce((n, r) => n + r.consumed, 0)).toBe(600)
    // events reach consumers oldest first: the rowid order of `consumed` follows the outbox order (raw on
    // purpose: the test's own table in the order its rows were written, joined with the events' seq)
    const order = (
      h.sqlite.query('SELECT c.event_id AS id, o.seq AS seq FROM consumed c JOIN outbox o ON o.id = c.event_id ORDER BY c.rowid').all() as { seq: number }[]
    ).map((r) => r.seq)
    expect(order).toEqual([...order].sort((a, b) => a - b))
    const consumedIds = (h.sqlite.query('SELECT event_id FROM consumed').all() as { event_id: string }[]).map((r) => r.event_id)
    expect(new Set(consumedIds)).toEqual(new Set(eventIds))
    // a deferred dispatch transaction would fail here with "database is locked" whenever the other process
    // had committed since its read; the IMMEDIATE one waits for the lock instead
    for (const r of reports) expect(r.errors).toEqual([])
  }, 40_000)
})
