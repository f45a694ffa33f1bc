// The outbox on a real SQLite file: an event exists exactly when the change it reports was committed, and the
// worker hands each event to its consumers once, oldest first, atomically with what the consumers write.
import { afterEach, describe, expect, test } from 'bun:test'
import { asc, eq } from 'drizzle-orm'
import { ManualClock } from '../../src/platform/clock'
import { jobs, outbox, outboxCursor } from '../../src/db/schema'
import { isRegisteredEvent } from '../../src/events/catalogue'
import { dispatchedUpTo, dispatchOutbox, hasPendingEvents, pruneDispatched, publish, type OutboxEvent, type PublishInput } from '../../src/events/outbox'
import { enqueue } from '../../src/jobs/queue'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import { ON_PG, setupSqlite, type TestEnv } from '../helpers'

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0)
const envs: TestEnv[] = []

afterEach(async () => {
  for (const e of envs.splice(0)) await e.cleanup()
})

function env() {
  const clock = new ManualClock(T0)
  const e = setupSqlite({ clock })
  envs.push(e)
  return { ...e, clock }
}

const ping = (message: string, workspaceId = 'ws_1'): PublishInput => ({
  type: 'webhook.test',
  workspaceId,
  mode: 'live',
  data: { endpointId: 'we_1', message },
})

const rows = (rt: TestEnv['rt']) => rt.db.db.select().from(outbox).orderBy(asc(outbox.seq)).all()
/** The seqs of stored events the cursor has passed. */
const engine = (rt: TestEnv['rt']) => sqliteEngine(rt.db.db)
const dispatchedSeqs = async (rt: TestEnv['rt']) => {
  const upTo = await dispatchedUpTo(engine(rt))
  return rows(rt)
    .filter((r) => r.seq <= upTo)
    .map((r) => r.seq)
}
const cursorTime = (rt: TestEnv['rt']) => rt.db.db.select().from(outboxCursor).get()?.updatedAt ?? null

describe.skipIf(ON_PG)('publish()', () => {
  test('inside a committed transaction leaves one outbox row, not yet dispatched', async () => {
    const { rt } = env()
    const envelope = rt.db.db.transaction((tx) => publish(tx, { ...ping('hello'), mode: 'test' }, T0 + 5))
    expect(envelope).toEqual({
      id: expect.stringMatching(/^evt_[0-9A-Za-z]{20}$/),
      type: 'webhook.test',
      timestamp: '2026-01-01T12:00:00.005Z',
      mode: 'test',
      data: { endpointId: 'we_1', message: 'hello' },
    })
    const stored = rows(rt)
    expect(stored).toHaveLength(1)
    expect(stored[0]).toMatchObject({
      id: envelope.id,
      type: 'webhook.test',
      mode: 'test',
      workspaceId: 'ws_1',
      data: { endpointId: 'we_1', message: 'hello' },
      createdAt: T0 + 5,
    })
    expect(await dispatchedSeqs(rt)).toEqual([])
    expect(await hasPendingEvents(engine(rt))).toBe(true)
  })

  test('inside a transaction that throws leaves nothing, together with the change it reported', async () => {
    const { rt } = env()
    expect(() =>
      rt.db.db.transaction((tx) => {
        enqueue(tx, { type: 'test.change' }, T0)
        publish(tx, ping('never'), T0)
        throw new Error('the change failed')
      }),
    ).toThrow('the change failed')
    expect(rows(rt)).toEqual([])
    expect(rt.db.db.select().from(jobs).all()).toEqual([])
    expect(await hasPendingEvents(engine(rt))).toBe(false)
  })

  test('an unknown event type throws and writes nothing', () => {
    const { rt } = env()
    expect(isRegisteredEvent('link.exploded')).toBe(false)
    expect(() => publish(rt.db.db, { ...ping('x'), type: 'link.exploded' }, T0)).toThrow(/unknown event type "link.exploded"/)
    expect(() => rt.db.db.transaction((tx) => publish(tx, { ...ping('x'), type: '' }, T0))).toThrow(/unknown event type/)
    expect(rows(rt)).toEqual([])
  })
})

describe.skipIf(ON_PG)('dispatch through the worker', () => {
  test('hands events to every consumer oldest first, exactly once, and marks them dispatched', async () => {
    const { rt, clock } = env()
    const a: OutboxEvent[] = []
    const b: string[] = []
    rt.outbox.consume(function* (_tx, event) {
      a.push(event)
    })
    rt.outbox.consume(function* (_tx, event, now) {
      b.push(`${event.envelope.data.message}@${now - T0}`)
    })

    rt.db.db.transaction((tx) => {
      publish(tx, ping('first'), T0 - 3000)
      publish(tx, ping('second', 'ws_2'), T0 - 2000)
    })
    expect(() =>
      rt.db.db.transaction((tx) => {
        publish(tx, ping('rolled back'), T0 - 1500)
        throw new Error('no')
      }),
    ).toThrow('no')
    rt.db.db.transaction((tx) => publish(tx, ping('third'), T0 - 1000))

    clock.advance(7)
    expect(await rt.worker.runDue()).toBe(0) // no jobs: the count is of jobs run
    expect(a.map((e) => e.envelope.data.message)).toEqual(['first', 'second', 'third'])
    expect(b).toEqual(['first@7', 'second@7', 'third@7'])
    expect(a.map((e) => e.seq)).toEqual([...a.map((e) => e.seq)].sort((x, y) => x - y))
    expect(a[1]).toEqual({
      seq: a[1]!.seq,
      workspaceId: 'ws_2',
      envelope: {
        id: expect.stringMatching(/^evt_/),
        type: 'webhook.test',
        timestamp: new Date(T0 - 2000).toISOString(),
        mode: 'live',
        data: { endpointId: 'we_1', message: 'second' },
      },
    })
    const stored = rows(rt)
    expect(stored.map((r) => r.id)).toEqual(a.map((e) => e.envelope.id))
    expect(await dispatchedSeqs(rt)).toEqual(stored.map((r) => r.seq))
    expect(cursorTime(rt)).toBe(T0 + 7)
    expect(await hasPendingEvents(engine(rt))).toBe(false)

    // nothing is handed over twice; a later event is handed over on the next pass
    clock.advance(1000)
    await rt.worker.runDue()
    expect(a).toHaveLength(3)
    rt.db.db.transaction((tx) => publish(tx, ping('fourth'), clock.now()))
    await rt.worker.runDue()
    await rt.worker.runDue()
    expect(a.map((e) => e.envelope.data.message)).toEqual(['first', 'second', 'third', 'fourth'])
    expect(b).toHaveLength(4)
    expect(await dispatchedUpTo(engine(rt))).toBe(rows(rt).at(-1)!.seq)
    expect(cursorTime(rt)).toBe(T0 + 1007)
  })

  test('if a consumer throws, nothing is marked dispatched and what the consumers wrote is rolled back; the next pass retries', async () => {
    const { rt } = env()
    const handledJobs: unknown[] = []
    rt.worker.handle('test.deliver', async (payload) => void handledJobs.push(payload))
    // the first consumer records durable work (as webhook fan-out does) in the dispatch transaction
    rt.outbox.consume(function* (tx, event, now) {
      enqueue(tx, { type: 'test.deliver', payload: event.envelope.data.message }, now)
    })
    let broken = true
    const seenBySecond: string[] = []
    rt.outbox.consume(function* (_tx, event) {
      seenBySecond.push(event.envelope.data.message as string)
      if (broken && event.envelope.data.message === 'b') throw new Error('consumer broke on b')
    })
    rt.db.db.transaction((tx) => {
      for (const m of ['a', 'b', 'c']) publish(tx, ping(m), T0)
    })

    await expect(rt.worker.runDue()).rejects.toThrow('consumer broke on b')
    expect(seenBySecond).toEqual(['a', 'b'])
    expect(await dispatchedSeqs(rt)).toEqual([])
    expect(rt.db.db.select().from(jobs).all()).toEqual([]) // the job enqueued for 'a' (and 'b') was rolled back
    expect(handledJobs).toEqual([])

    // still broken: still nothing
    await expect(rt.worker.runDue()).rejects.toThrow('consumer broke on b')
    expect(await dispatchedSeqs(rt)).toEqual([])
    expect(rt.db.db.select().from(jobs).all()).toEqual([])

    broken = false
    expect(await rt.worker.runDue()).toBe(3) // the three delivery jobs, enqueued by the consumer, ran
    expect(handledJobs).toEqual(['a', 'b', 'c'])
    expect(await dispatchedSeqs(rt)).toHaveLength(3)
    expect(seenBySecond).toEqual(['a', 'b', 'a', 'b', 'a', 'b', 'c'])
    // exactly once after the retry: nothing more to do
    expect(await rt.worker.runDue()).toBe(0)
    expect(handledJobs).toEqual(['a', 'b', 'c'])
  })

  test('more events than one batch are all dispatched in order in one pass; a failure keeps the batches before it', async () => {
    const { rt } = env()
    rt.db.db.transaction((tx) => {
      for (let i = 0; i < 450; i++) publish(tx, ping(`m${i}`), T0 + i)
    })
    const seen: number[] = []
    let failAt = 300
    rt.outbox.consume(function* (tx, event) {
      const i = Number((event.envelope.data.message as string).slice(1))
      if (i === failAt) throw new Error(`cannot take m${i}`)
      seen.push(i)
      tx.insert(jobs)
        .values({ id: `job_m${i}`, type: 'test.noop', payload: {}, status: 'dead', runAt: 0, attempts: 0, maxAttempts: 1, createdAt: 0, updatedAt: 0 })
        .run()
    })

    await expect(rt.worker.runDue()).rejects.toThrow('cannot take m300')
    // the first batch of 200 committed; the failing second batch (200..399) was rolled back whole
    const dispatched = (await dispatchedSeqs(rt)).length
    expect(dispatched).toBe(200)
    expect(rt.db.db.select().from(jobs).all()).toHaveLength(200)
    expect(rt.db.db.select().from(jobs).where(eq(jobs.id, 'job_m250')).get()).toBeUndefined()

    failAt = -1
    seen.length = 0
    await rt.worker.runDue()
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => 200 + i))
    expect(await dispatchedSeqs(rt)).toHaveLength(450)
    expect(rt.db.db.select().from(jobs).all()).toHaveLength(450)
  })

  test('dispatchOutbox answers how many it handed over and honours its limit', async () => {
    const { rt } = env()
    for (let i = 0; i < 5; i++) publish(rt.db.db, ping(`m${i}`), T0 + i)
    const seen: string[] = []
    const consumer = function* (_tx: unknown, e: OutboxEvent) {
      seen.push(e.envelope.data.message as string)
    }
    const dispatch = () => dispatchOutbox(engine(rt), [consumer], T0 + 10, undefined, { limit: 2 })
    expect(await dispatch()).toBe(2)
    expect(await dispatch()).toBe(2)
    expect(await dispatch()).toBe(1)
    expect(await dispatch()).toBe(0)
    expect(seen).toEqual(['m0', 'm1', 'm2', 'm3', 'm4'])
  })

  test('with no consumer registered the cursor jumps past every event (nobody was listening)', async () => {
    const { rt } = env()
    publish(rt.db.db, ping('unheard'), T0)
    publish(rt.db.db, ping('unheard either'), T0)
    await rt.worker.runDue()
    expect(await dispatchedSeqs(rt)).toEqual(rows(rt).map((r) => r.seq))
    expect(await hasPendingEvents(engine(rt))).toBe(false)
  })

  test('pruning deletes dispatched events older than the retention, never pending ones', async () => {
    const { rt } = env()
    publish(rt.db.db, ping('old'), T0 - 10_000)
    publish(rt.db.db, ping('recent'), T0)
    await rt.worker.runDue()
    publish(rt.db.db, ping('pending and old'), T0 - 20_000)
    expect(await pruneDispatched(engine(rt), T0 - 5_000)).toBe(1)
    expect(rows(rt).map((r) => r.data.message)).toEqual(['recent', 'pending and old'])
    expect(await hasPendingEvents(engine(rt))).toBe(true)
  })
})
