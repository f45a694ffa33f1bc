// Transaction bodies that wait on outside work between statements (engine `waiting()`, what export and
// import use to write and read their file inside one transaction), on both engines: the wait's result or
// error comes back into the body, a failure after a wait rolls back what the body wrote before it, a read
// snapshot holds across a wait while another connection commits, and a SQLite engine over a shared
// connection refuses to wait rather than let other callers' statements into its transaction.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { count, eq } from 'drizzle-orm'
import { rows, waiting, type Engine } from '../../src/db/engine'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import { openEngines, type Engines } from '../setup/engines'

const T0 = 1_700_000_000_000
let e: Engines
let engines: [string, Engine][]

/** A write on another connection than the engine's, committed at once. */
async function writeElsewhere(name: string, id: string) {
  if (name === 'sqlite') {
    const other = new Database(e.sqlite.path)
    try {
      other.query('INSERT INTO workspaces (id, slug, name, created_at) VALUES (?, ?, ?, ?)').run(id, id, 'Other', T0)
    } finally {
      other.close()
    }
  } else await e.sql.unsafe('INSERT INTO workspaces (id, slug, name, created_at) VALUES ($1, $2, $3, $4)', [id, id, 'Other', T0])
}

beforeAll(async () => {
  e = await openEngines()
  engines = [
    ['sqlite', sqliteEngine(e.sqlite.db, { ownConnection: true })],
    ['pg', pgEngine(e.pg)],
  ]
})

afterAll(async () => {
  await e?.close()
})

const workspaces = async (engine: Engine) => (await engine.db.select({ n: count() }).from(engine.t.workspaces))[0]!.n

test('a wait answers its result, and its error reaches the body', async () => {
  for (const [name, engine] of engines) {
    const seen = await engine.transaction(function* () {
      const value = yield* waiting(new Promise<number>((resolve) => setTimeout(() => resolve(41), 5)))
      let caught = ''
      try {
        yield* waiting(Promise.reject(new Error('file gone')))
      } catch (err) {
        caught = (err as Error).message
      }
      return { value: value + 1, caught }
    })
    expect({ name, seen }).toEqual({ name, seen: { value: 42, caught: 'file gone' } })
  }
})

test('a failure after a wait rolls back the rows written before it', async () => {
  for (const [name, engine] of engines) {
    const before = await workspaces(engine)
    const failed = engine.transaction(
      function* (tx) {
        yield* rows(tx.insert(engine.t.workspaces).values({ id: `ws_rolled_${name}`, slug: `rolled-${name}`, name: 'Rolled', createdAt: T0 }))
        yield* waiting(new Promise((resolve) => setTimeout(resolve, 5)))
        throw new Error('the file broke')
      },
      { immediate: true },
    )
    await expect(failed).rejects.toThrow('the file broke')
    expect({ name, n: await workspaces(engine) }).toEqual({ name, n: before })
    // And one that completes keeps them.
    await engine.transaction(
      function* (tx) {
        yield* waiting(Promise.resolve())
        yield* rows(tx.insert(engine.t.workspaces).values({ id: `ws_kept_${name}`, slug: `kept-${name}`, name: 'Kept', createdAt: T0 }))
      },
      { immediate: true },
    )
    expect({ name, n: await workspaces(engine) }).toEqual({ name, n: before + 1 })
  }
})

test('a snapshot holds across a wait while another connection commits', async () => {
  for (const [name, engine] of engines) {
    const before = await workspaces(engine)
    const seen = await engine.transaction(
      function* (tx) {
        const [first] = yield* rows(tx.select({ n: count() }).from(engine.t.workspaces))
        yield* waiting(writeElsewhere(name, `ws_later_${name}`))
        const [again] = yield* rows(tx.select({ n: count() }).from(engine.t.workspaces))
        const later = yield* rows(
          tx
            .select()
            .from(engine.t.workspaces)
            .where(eq(engine.t.workspaces.id, `ws_later_${name}`)),
        )
        return { first: first!.n, again: again!.n, later: later.length }
      },
      { snapshot: true },
    )
    expect({ name, seen }).toEqual({ name, seen: { first: before, again: before, later: 0 } })
    expect({ name, n: await workspaces(engine) }).toEqual({ name, n: before + 1 })
  }
})

test('SQLite over a shared connection refuses to wait, and rolls back', async () => {
  const shared = sqliteEngine(e.sqlite.db)
  const before = await workspaces(shared)
  const refused = shared.transaction(function* (tx) {
    yield* rows(tx.insert(shared.t.workspaces).values({ id: 'ws_shared', slug: 'shared', name: 'Shared', createdAt: T0 }))
    yield* waiting(Promise.resolve())
  })
  await expect(refused).rejects.toThrow('a SQLite transaction body may wait only on an engine over a connection of its own')
  expect(await workspaces(shared)).toBe(before)
  // A body that never waits runs whole within the call on the engine of its own connection, as on a shared one.
  let ran = false
  const done = engines[0]![1].transaction(function* (tx) {
    yield* rows(tx.select({ n: count() }).from(shared.t.workspaces))
    ran = true
  })
  expect(ran).toBe(true)
  await done
})
