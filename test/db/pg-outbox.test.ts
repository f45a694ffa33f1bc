// The outbox's one dispatch (src/events/outbox.ts) on PostgreSQL and on SQLite: the same script on both hands
// the same events to consumers in the same batches and prunes the same rows. Then
// what only PostgreSQL can do: a consumer's writes commit or roll back with the cursor's move; a hole in the
// sequence left by a publisher still in flight stops dispatch until it commits, one left by a rollback does
// not; and publishers on separate connections racing two dispatchers (two nodes) get every committed event
// handed over exactly once, in seq order.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { waiting, type Engine } from '../../src/db/engine'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import { pgDrizzle } from '../../src/db/pg/client'
import { openPostgres } from '../../src/db/pg/connect'
import { migratePostgres } from '../../src/db/pg/migrate'
import {
  dispatchOutbox,
  dispatchedUpTo,
  hasPendingEvents,
  publishing,
  pruneDispatched,
  settleOn,
  type DispatchOptions,
  type EventConsumer,
  type OutboxEvent,
  type PublishInput,
} from '../../src/events/outbox'
import { registerEvents } from '../../src/events/catalogue'
import { enqueuing } from '../../src/jobs/queue'
import { LINK_EVENTS } from '../../src/modules/links/model'
import { openEngines, type Engines } from '../setup/engines'
import { createTestDatabase, type TestDatabase } from '../setup/postgres'

const T0 = 1_700_000_000_000

// The links module registers link.created when a runtime is built; these tests publish without one.
registerEvents(LINK_EVENTS)

const input = (n: number): PublishInput => ({ type: 'link.created', workspaceId: `ws_${n % 2}`, mode: n % 3 ? 'live' : 'test', data: { n } })

/** What a consumer sees of an event, without its random id. */
const seen = (e: OutboxEvent) => ({
  seq: e.seq,
  workspaceId: e.workspaceId,
  type: e.envelope.type,
  mode: e.envelope.mode,
  timestamp: e.envelope.timestamp,
  data: e.envelope.data,
})

class Rollback extends Error {}

const publishIn = (engine: Engine, n: number, now: number) => engine.transaction((tx) => publishing(engine, tx, input(n), now))
const dispatch = (engine: Engine, consumers: EventConsumer[], now: number, options?: DispatchOptions) =>
  dispatchOutbox(engine, consumers, now, settleOn(engine), options)

describe('the same script on both engines', () => {
  let engines: Engines

  beforeAll(async () => {
    engines = await openEngines()
  })

  afterAll(async () => {
    await engines?.close()
  })

  test('dispatch, the cursor jump without consumers, and pruning answer alike', async () => {
    const on = (engine: Engine) => ({
      publish: async (n: number, now: number) => void (await publishIn(engine, n, now)),
      pending: () => hasPendingEvents(engine),
      dispatch: async (limit: number, withConsumer = true) => {
        const got: ReturnType<typeof seen>[] = []
        const consumer: EventConsumer = function* (_tx, e) {
          got.push(seen(e))
        }
        const count = await dispatch(engine, withConsumer ? [consumer] : [], T0 + 99, { limit })
        return { count, got, cursor: await dispatchedUpTo(engine) }
      },
      prune: (before: number) => pruneDispatched(engine, before),
    })
    const sqlite = on(sqliteEngine(engines.sqlite.db))
    const postgres = on(pgEngine(engines.pg))

    const script = async (e: typeof postgres) => {
      const trace: unknown[] = [await e.pending(), await e.dispatch(10)]
      for (let n = 1; n <= 5; n++) await e.publish(n, T0 + n)
      trace.push(await e.pending(), await e.dispatch(2), await e.dispatch(10), await e.dispatch(10), await e.pending())
      for (let n = 6; n <= 8; n++) await e.publish(n, T0 + n)
      trace.push(await e.pending(), await e.dispatch(10, false), await e.pending(), await e.dispatch(10))
      await e.publish(9, T0 + 9)
      // Only dispatched events go, and only those created before the cut.
      trace.push(await e.prune(T0 + 4), await e.prune(T0 + 100), await e.pending(), await e.dispatch(10))
      return trace
    }

    const onSqlite = await script(sqlite)
    const onPostgres = await script(postgres)
    expect(onPostgres).toEqual(onSqlite)
    // The script did what it says: two batches of 5, a jump of 3, prunes of 3 then 5.
    expect(onPostgres[3]).toMatchObject({ count: 2, cursor: 2 })
    expect(onPostgres[8]).toMatchObject({ count: 3, got: [], cursor: 8 })
    expect(onPostgres.slice(11, 13)).toEqual([3, 5])
    expect(((await engines.sql`SELECT seq FROM outbox`) as { seq: string }[]).map((r) => Number(r.seq))).toEqual([9])
  })
})

describe('on PostgreSQL only', () => {
  let pgDb: TestDatabase
  let sql: SQL
  let db: Engine

  beforeAll(async () => {
    pgDb = await createTestDatabase()
    sql = await openPostgres(pgDb.url, { max: 4 })
    await migratePostgres(sql)
    db = pgEngine(pgDrizzle(sql))
  })

  afterAll(async () => {
    await sql?.close()
    await pgDb?.drop()
  })

  const reset = async () => {
    await sql`DELETE FROM outbox`
    await sql`DELETE FROM outbox_cursor`
    await sql`DELETE FROM jobs`
  }
  const publishOne = async (n: number) => (await publishIn(db, n, T0)).id
  const collect = () => {
    const got: number[] = []
    const consumer: EventConsumer = function* (_tx, e) {
      got.push(e.envelope.data.n as number)
    }
    return { got, consumer }
  }

  test("a consumer's writes commit with the cursor's move, and roll back with it", async () => {
    await reset()
    for (let n = 1; n <= 3; n++) await publishOne(n)
    const record: EventConsumer = function* (tx, e) {
      yield* enqueuing(db, tx, { type: 'seen', payload: e.envelope.data }, T0)
    }
    const refuse: EventConsumer = function* (_tx, e) {
      if (e.envelope.data.n === 2) throw new Error('cannot take event 2')
    }
    await expect(dispatch(db, [record, refuse], T0)).rejects.toThrow('cannot take event 2')
    expect(await sql`SELECT * FROM jobs`).toEqual([])
    expect(await dispatchedUpTo(db)).toBe(0)
    expect(await dispatch(db, [record], T0)).toBe(3)
    expect(((await sql`SELECT payload FROM jobs ORDER BY created_at, payload->>'n'`) as { payload: { n: number } }[]).map((r) => r.payload.n)).toEqual([
      1, 2, 3,
    ])
  })

  test('a hole still in flight holds back the events after it until it commits; a rolled-back one does not', async () => {
    await reset()
    let commit!: () => void
    const gate = new Promise<void>((resolve) => (commit = resolve))
    let published!: () => void
    const inFlight = new Promise<void>((resolve) => (published = resolve))
    const slow = db.transaction(function* (tx) {
      yield* publishing(db, tx, input(1), T0)
      published()
      yield* waiting(gate)
    })
    await inFlight
    await publishOne(2)
    const { got, consumer } = collect()
    expect(await hasPendingEvents(db)).toBe(true)
    // Event 2 is committed, but seq 1 below it may still come: nothing moves.
    expect(await dispatch(db, [consumer], T0, { settleMs: 30 })).toBe(0)
    expect(await dispatchedUpTo(db)).toBe(0)
    commit()
    await slow
    expect(await dispatch(db, [consumer], T0)).toBe(2)
    expect(got).toEqual([1, 2])

    // A publisher that rolls back leaves a hole for good: the events after it still go, at once.
    await expect(
      db.transaction(function* (tx) {
        yield* publishing(db, tx, input(3), T0)
        throw new Rollback('changed its mind')
      }),
    ).rejects.toThrow('changed its mind')
    await publishOne(4)
    expect(await dispatch(db, [consumer], T0, { settleMs: 5_000 })).toBe(1)
    expect(got).toEqual([1, 2, 4])
    const [last] = (await sql`SELECT max(seq) AS seq FROM outbox`) as { seq: string }[]
    expect(await dispatchedUpTo(db)).toBe(Number(last!.seq))
  })

  test('publishers on separate connections and two dispatching nodes: every committed event once, in seq order', async () => {
    await reset()
    const publishers = await openPostgres(pgDb.url, { max: 8 })
    const nodes = [await openPostgres(pgDb.url, { max: 2 }), await openPostgres(pgDb.url, { max: 2 })]
    try {
      const pub = pgEngine(pgDrizzle(publishers))
      // Each publisher commits after a pause inside its transaction, a long one now and then, so seqs commit
      // out of order while dispatchers read; one transaction in seven rolls back, leaving a hole for good.
      let attempts = 0
      const publisher = async (p: number) => {
        for (let i = 0; i < 40; i++) {
          const n = p * 1000 + i
          attempts++
          await pub
            .transaction(function* (tx) {
              yield* publishing(pub, tx, input(n), T0)
              if (n % 2) yield* publishing(pub, tx, input(n + 500), T0)
              yield* waiting(Bun.sleep(Math.random() < 0.2 ? 10 + Math.random() * 10 : Math.random() * 3))
              if (attempts % 7 === 0) throw new Rollback()
            })
            .catch((err) => {
              if (!(err instanceof Rollback)) throw err
            })
        }
      }
      const delivered: number[] = []
      const perNode = [0, 0]
      let publishersRunning = true
      const dispatcher = async (node: number) => {
        const db = pgEngine(pgDrizzle(nodes[node]!))
        const consumer: EventConsumer = function* (tx, e) {
          delivered.push(e.seq)
          perNode[node]!++
          yield* enqueuing(db, tx, { type: 'seen', payload: e.seq }, T0)
        }
        for (let pass = 0; pass < 20_000; pass++) {
          const stillPublishing = publishersRunning
          const n = await dispatch(db, [consumer], T0, { limit: 7, settleMs: 500 })
          if (!n && !stillPublishing && !(await hasPendingEvents(db))) return
          if (!n) await Bun.sleep(1)
        }
        throw new Error('the dispatcher did not drain the outbox')
      }
      const dispatching = [dispatcher(0), dispatcher(1)]
      await Promise.all([0, 1, 2, 3, 4, 5].map(publisher))
      publishersRunning = false
      await Promise.all(dispatching)

      const committed = ((await sql`SELECT seq FROM outbox ORDER BY seq`) as { seq: string }[]).map((r) => Number(r.seq))
      const recorded = ((await sql`SELECT payload FROM jobs`) as { payload: number }[]).map((r) => r.payload).sort((a, b) => a - b)
      expect(committed.length).toBeGreaterThan(150)
      // Some holes for good (rollbacks), and not only at the end.
      expect(committed.at(-1)! - committed.length).toBeGreaterThan(0)
      expect(delivered).toEqual(committed)
      expect(recorded).toEqual(committed)
      expect(perNode[0]! + perNode[1]!).toBe(committed.length)
      expect(await dispatchedUpTo(db)).toBe(committed.at(-1)!)
    } finally {
      await Promise.all([publishers.close(), ...nodes.map((n) => n.close())])
    }
  })
})
