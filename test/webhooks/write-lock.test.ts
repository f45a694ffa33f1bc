// A delivery's attempt is recorded on the job worker's connection, which never waits for the write lock: when
// another connection holds it (in a server, the click writer's flush), the recording is tried again after
// short pauses with timers, so the thread that answers requests keeps running, and only the recording is
// retried, never the request. A third connection to the same file holds the lock here; a real receiver on
// 127.0.0.1 answers when told to.
import { afterEach, describe, expect, test } from 'bun:test'
import { openDatabase, type DbHandle } from '../../src/db/client'
import { createLogger } from '../../src/platform/log'
import { ON_PG } from '../helpers'
import { holdingReceiver, webhooksEnv, type Env } from './_webhooks'

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c()
})

async function world() {
  const lines: string[] = []
  const env = await webhooksEnv({ log: createLogger('debug', (line) => lines.push(line)) })
  const rx = holdingReceiver(200)
  cleanups.push(
    () => env.cleanup(),
    () => rx.stop(),
    () => rx.release(),
  )
  const ep = await env.createEndpoint({ url: rx.url, events: ['link.created'] })
  // Storage itself: a connection of no module, standing for any other writer of the file.
  const other: DbHandle = openDatabase(env.rt.db.path)
  cleanups.push(() => other.close())
  const lock = {
    take: () => other.sqlite.exec('BEGIN IMMEDIATE'),
    free: () => other.sqlite.exec('ROLLBACK'),
  }
  return { env, rx, ep, lock, lines, recorder: env.rt.modules.webhooks.recorder }
}

/** Bounded: waits (1 ms at a time, so timers keep running) until `cond` holds. */
async function until(cond: () => boolean, what: string) {
  for (let i = 0; i < 5000 && !cond(); i++) await Bun.sleep(1)
  if (!cond()) throw new Error(`${what}: not reached`)
}

const deliveryOf = async (env: Env, endpointId: string) => {
  // The repo (reads need no lock), not the API: a request records its key's use, a write.
  const [d] = await env.rt.modules.webhooks.ctx.webhooks.listDeliveries({ endpointId, limit: 10 })
  return d!
}

// SQLite storage itself (its single write lock, held by another connection to the file); PostgreSQL has no such lock.
describe.skipIf(ON_PG)('recording an attempt while another connection holds the write lock', () => {
  test('waits with timers, not by blocking the thread, and records the attempt once the lock is free; one request', async () => {
    const { env, rx, ep, lock, recorder } = await world()
    await env.emit('link.created')
    const running = env.run()
    await rx.arrived
    lock.take()
    let ticks = 0
    const timer = setInterval(() => ticks++, 1)
    cleanups.push(() => clearInterval(timer))
    rx.release()
    await until(() => recorder.busyAnswers >= 1, 'a first busy answer')
    const ticksAtFirst = ticks
    await until(() => recorder.busyAnswers >= 4, 'more busy answers')
    // The thread ran timers between the tries: nothing waited inside SQLite.
    expect(ticks).toBeGreaterThan(ticksAtFirst)
    expect(await deliveryOf(env, ep.id)).toMatchObject({ status: 'pending', attempt: 0 })
    expect(rx.received).toHaveLength(1)

    lock.free()
    await running
    const d = await deliveryOf(env, ep.id)
    expect(d).toMatchObject({ status: 'success', attempt: 1, responseStatus: 200 })
    expect(await env.rt.modules.webhooks.ctx.webhooks.attempts(d.id)).toHaveLength(1)
    expect(rx.received).toHaveLength(1)
    expect(recorder.givenUp).toBe(0)
    // The job went with the recording: nothing is left to run, now or later.
    env.clock.advance(3_600_000)
    expect(await env.run()).toBe(0)
    expect(rx.received).toHaveLength(1)
  })

  test('past its patience the recording gives up; the job is tried again later and sends again with the same webhook-id', async () => {
    const { env, rx, ep, lock, recorder, lines } = await world()
    recorder.patience = { firstPauseMs: 1, maxPauseMs: 2, giveUpAfterMs: 10 }
    await env.emit('link.created')
    const running = env.run()
    await rx.arrived
    lock.take()
    rx.release()
    await until(() => recorder.givenUp === 1, 'the recording given up')
    // The job's failure waits for the lock in its turn (with timers too), and is written once it is free.
    lock.free()
    await running
    expect(await deliveryOf(env, ep.id)).toMatchObject({ status: 'pending', attempt: 0 })
    expect(lines.some((l) => l.includes('job failed; will retry'))).toBe(true)

    // The worker's backoff (seconds) later the attempt is made again, as after a crash between send and record.
    env.clock.advance(3_600_000)
    expect(await env.run()).toBe(1)
    const d = await deliveryOf(env, ep.id)
    expect(d).toMatchObject({ status: 'success', attempt: 1 })
    expect(await env.rt.modules.webhooks.ctx.webhooks.attempts(d.id)).toHaveLength(1)
    expect(rx.received).toHaveLength(2)
    expect(rx.received[1]!.headers['webhook-id']).toBe(rx.received[0]!.headers['webhook-id']!)
    expect(rx.received[1]!.body).toBe(rx.received[0]!.body)
  })
})
