// Engine.prepare on both engines: a statement compiled once answers what the same drizzle query answers
// (values encoded like their column, rows decoded), counts the rows it changed, and runs inside the body's
// transaction (a rollback takes its writes too). On SQLite it runs where the body stands, on its own connection.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { and, asc, eq, sql } from 'drizzle-orm'
import { openDatabase } from '../../src/db/client'
import { all, exec, first, rows, type Engine } from '../../src/db/engine'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import { tempDir } from '../helpers'
import { openEngines, type Engines } from '../setup/engines'

let engines: Engines
let both: Engine[]
const on = (name: Engine['name']) => both.find((e) => e.name === name)!

beforeAll(async () => {
  engines = await openEngines()
  both = [sqliteEngine(engines.sqlite.db), pgEngine(engines.pg)]
})
afterAll(async () => {
  await engines?.close()
})
beforeEach(async () => {
  for (const engine of both) await engine.run((db) => rows(db.delete(engine.t.jobs)))
})

/** The statements of a test, prepared on `engine`. */
function statements(engine: Engine) {
  const { db } = engine
  const { jobs } = engine.t
  const p = sql.placeholder
  return {
    insert: engine.prepare(
      db.insert(jobs).values({
        id: p('id'),
        type: 'test.prepared',
        payload: p('payload'),
        status: 'pending',
        runAt: p('runAt'),
        attempts: 0,
        maxAttempts: 3,
        uniqueKey: p('uniqueKey'),
        createdAt: p('now'),
        updatedAt: p('now'),
      }),
    ),
    byType: engine.prepare(
      db
        .select({ id: jobs.id, payload: jobs.payload, runAt: jobs.runAt, late: sql<number>`${jobs.runAt} + 1`.mapWith(Number) })
        .from(jobs)
        .where(eq(jobs.type, p('type')))
        .orderBy(asc(jobs.id)),
    ),
    // A placeholder inside a sql`` fragment is bound as it comes.
    reschedule: engine.prepare(
      db
        .update(jobs)
        .set({ runAt: sql`${p('runAt')}` })
        .where(and(eq(jobs.type, 'test.prepared'), eq(jobs.status, 'pending'))),
    ),
    remove: engine.prepare(
      db
        .delete(jobs)
        .where(eq(jobs.id, p('id')))
        .returning({ id: jobs.id, maxAttempts: jobs.maxAttempts }),
    ),
  }
}

describe.each(['sqlite', 'pg'] as const)('on %s', (name) => {
  test('answers what the drizzle query answers: values encoded like their column, rows decoded', async () => {
    const engine = on(name)
    const st = statements(engine)
    const payload = { deliveryId: 'd_1', attempt: 2, nested: { ok: true, list: [1, 'two'] } }
    await engine.transaction(function* () {
      yield* exec(st.insert, { id: 'job_a', payload, runAt: 1_700_000_000_000, uniqueKey: null, now: 5 })
      yield* exec(st.insert, { id: 'job_b', payload: [], runAt: 7, uniqueKey: 'k', now: 5 })
    })
    const read = await engine.run(() => all(st.byType, { type: 'test.prepared' }))
    expect(read).toEqual([
      { id: 'job_a', payload, runAt: 1_700_000_000_000, late: 1_700_000_000_001 },
      { id: 'job_b', payload: [], runAt: 7, late: 8 },
    ])
    const [stored] = await engine.db.select().from(engine.t.jobs).where(eq(engine.t.jobs.id, 'job_a'))
    expect(stored).toMatchObject({ payload, runAt: 1_700_000_000_000, uniqueKey: null, status: 'pending', maxAttempts: 3, createdAt: 5 })
    expect(await engine.run(() => first(st.byType, { type: 'none' }))).toBeUndefined()
  })

  test('exec answers the rows changed; RETURNING rows are decoded', async () => {
    const engine = on(name)
    const st = statements(engine)
    const changed = await engine.transaction(function* () {
      for (const id of ['job_1', 'job_2', 'job_3']) yield* exec(st.insert, { id, payload: {}, runAt: 1, now: 1 })
      return yield* exec(st.reschedule, { runAt: 99 })
    })
    expect(changed).toBe(3)
    expect((await engine.run(() => all(st.byType, { type: 'test.prepared' }))).map((r) => r.runAt)).toEqual([99, 99, 99])
    expect(await engine.run(() => first(st.remove, { id: 'job_2' }))).toEqual({ id: 'job_2', maxAttempts: 3 })
    expect(await engine.run(() => exec(st.remove, { id: 'job_2' }))).toBe(0)
  })

  test("runs inside the body's transaction: a rollback takes its writes too", async () => {
    const engine = on(name)
    const st = statements(engine)
    const failed = await engine
      .transaction(function* () {
        yield* exec(st.insert, { id: 'job_x', payload: {}, runAt: 1, now: 1 })
        // Seen by the transaction's own later statements…
        expect(yield* all(st.byType, { type: 'test.prepared' })).toHaveLength(1)
        throw new Error('roll back')
      })
      .catch((err: Error) => err.message)
    expect(failed).toBe('roll back')
    // …and gone with it.
    expect(await engine.run(() => all(st.byType, { type: 'test.prepared' }))).toEqual([])
  })
})

test('SQLite runs a statement where the body stands, on the connection it was prepared on; yielded to another connection, it is refused', async () => {
  const dir = tempDir()
  const other = openDatabase(join(dir, 'other.db'))
  try {
    const engine = on('sqlite')
    const st = statements(engine)
    // Run at once inside the transaction: the statement after it in the same body sees its row.
    const seen = await engine.transaction(function* (tx) {
      yield* exec(st.insert, { id: 'job_now', payload: {}, runAt: 1, now: 1 })
      return (yield* rows(tx.select().from(engine.t.jobs))).map((r) => r.id)
    })
    expect(seen).toEqual(['job_now'])
    const elsewhere = sqliteEngine(other.db)
    const byHand = elsewhere.run(function* () {
      return yield { prepared: st.byType, values: { type: 'x' }, mode: 'all' as const }
    })
    await expect(byHand).rejects.toThrow('prepared on another connection')
  } finally {
    other.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
