// The webhooks repo and the fan-out statements on both engines: each script runs on the one repo
// (src/modules/webhooks/repo.ts) and the one set of fan-out statements (repo-fanout.ts, the deliver job's
// and the fan-out's statements prepared once on each engine) on PostgreSQL and on SQLite, and must answer
// the same and leave the same rows (endpoints,
// deliveries, attempts, batch events, jobs). Then what only PostgreSQL can get wrong, with calls at once on
// separate connections of the pool: one attempt recorded twice, failures racing to disable an endpoint,
// batches of attempts locking endpoints in opposite orders, one delivery replayed twice, events joining a
// batch while it closes, rotations of one secret, and two nodes taking delivery slots of one endpoint
// (maxConcurrent).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { asc } from 'drizzle-orm'
import type { Builder, Steps } from '../../src/db/engine'
import { pgEngine } from '../../src/db/engine/pg'
import { driveSync, sqliteEngine } from '../../src/db/engine/sqlite'
import type { PgDb } from '../../src/db/pg/client'
import * as lite from '../../src/db/schema'
import * as pgs from '../../src/db/pg/schema.generated'
import { createJobQueue, type JobRow } from '../../src/jobs/queue'
import type { AttemptOutcome, AutoDisable, NewDelivery, NewEndpoint, WebhooksRepo } from '../../src/modules/webhooks/port'
import { createWebhooksRepo } from '../../src/modules/webhooks/repo'
import { createFanoutStatements, type FanoutStatements } from '../../src/modules/webhooks/repo-fanout'
import { createDeliverySlotsPg } from '../../src/modules/webhooks/repo-slots-pg'
import { openEngines, type Engines } from '../setup/engines'

const T0 = 1_700_000_000_000
const AUTO: AutoDisable = { failures: 3, afterMs: 1_000, reason: 'auto off' }

type Repo = WebhooksRepo
/** The fan-out's statements bound to one transaction (or none, on SQLite), awaited. */
type Fanout = {
  [K in keyof FanoutStatements]: (
    ...args: FanoutStatements[K] extends (tx: Builder, ...a: infer A) => Steps<infer _> ? A : never
  ) => Promise<FanoutStatements[K] extends (...a: never[]) => Steps<infer R> ? R : never>
}
interface Engine {
  repo: Repo
  /** Runs `fn` with the fan-out's statements inside one dispatch-like transaction. */
  fanout<T>(fn: (st: Fanout) => Promise<T>): Promise<T>
  claim(workerId: string, now: number): Promise<JobRow[]>
  state(): Promise<unknown>
}

let engines: Engines
let sqlite: Engine
let postgres: Engine
let pgRepo: Repo
let pgStatements: FanoutStatements

/** Sorted by UTF-8 bytes, as SQLite's ORDER BY on text. */
function byBytes<T>(rows: T[], key: (r: T) => string): T[] {
  return rows.sort((a, b) => Buffer.compare(Buffer.from(key(a)), Buffer.from(key(b))))
}

/** Jobs without their random ids and claim details, in a stable order. */
const jobsOf = (rows: { type: string; payload: unknown; status: string; runAt: number; maxAttempts: number; uniqueKey: string | null }[]) =>
  byBytes(
    rows.map(({ type, payload, status, runAt, maxAttempts, uniqueKey }) => ({ type, payload, status, runAt, maxAttempts, uniqueKey })),
    (j) => JSON.stringify([j.runAt, j.payload, j.status]),
  )

/** Each statement of `st` run at once by `run` on `tx`. */
const bound = (st: FanoutStatements, tx: Builder, run: (steps: Steps<unknown>) => unknown) =>
  Object.fromEntries(
    Object.entries(st).map(([k, f]) => [k, async (...args: unknown[]) => run((f as (...a: unknown[]) => Steps<unknown>)(tx, ...args))]),
  ) as Fanout

beforeAll(async () => {
  engines = await openEngines()
  const workspaces = ['ws_a', 'ws_b'].map((id) => ({ id, slug: id, name: id, createdAt: T0 }))
  engines.sqlite.db.insert(lite.workspaces).values(workspaces).run()
  await engines.pg.insert(pgs.workspaces).values(workspaces)
  const db = engines.sqlite.db
  const pg = engines.pg
  const liteEngine = sqliteEngine(db)
  const postgresEngine = pgEngine(pg)
  const sqliteQueue = createJobQueue(liteEngine)
  const pgQueue = createJobQueue(postgresEngine)
  const sqliteState = async () => ({
    endpoints: db.select().from(lite.webhookEndpoints).orderBy(asc(lite.webhookEndpoints.id)).all(),
    deliveries: db.select().from(lite.webhookDeliveries).orderBy(asc(lite.webhookDeliveries.id)).all(),
    attempts: db.select().from(lite.webhookAttempts).orderBy(asc(lite.webhookAttempts.id)).all(),
    batchEvents: db.select().from(lite.webhookBatchEvents).orderBy(asc(lite.webhookBatchEvents.deliveryId), asc(lite.webhookBatchEvents.position)).all(),
    jobs: jobsOf(db.select().from(lite.jobs).all()),
  })
  const onSqlite = (repo: Repo, st: FanoutStatements): Engine => ({
    repo,
    fanout: (fn) => fn(bound(st, db, (steps) => driveSync(db, () => steps))),
    claim: (workerId, now) => sqliteQueue.claim(workerId, now, 100, 60_000),
    state: sqliteState,
  })
  sqlite = onSqlite(createWebhooksRepo(liteEngine), createFanoutStatements(liteEngine))
  pgRepo = createWebhooksRepo(postgresEngine)
  pgStatements = createFanoutStatements(postgresEngine)
  postgres = {
    repo: pgRepo,
    // The engine on the transaction: its statements run on it, as the dispatch's do.
    fanout: (fn) => pg.transaction((tx) => fn(bound(pgStatements, tx as unknown as Builder, (steps) => pgEngine(tx as unknown as PgDb).run(() => steps)))),
    claim: (workerId, now) => pgQueue.claim(workerId, now, 100, 60_000),
    state: async () => ({
      endpoints: byBytes(await pg.select().from(pgs.webhookEndpoints), (r) => r.id),
      deliveries: byBytes(await pg.select().from(pgs.webhookDeliveries), (r) => r.id),
      attempts: byBytes(await pg.select().from(pgs.webhookAttempts), (r) => r.id),
      batchEvents: byBytes(await pg.select().from(pgs.webhookBatchEvents), (r) => `${r.deliveryId}\n${String(r.position).padStart(6, '0')}`),
      jobs: jobsOf(await pg.select().from(pgs.jobs)),
    }),
  }
})

afterAll(async () => {
  await engines?.close()
})

/** Empties the webhook tables and the queue on both engines: every script starts from nothing. */
async function reset() {
  const db = engines.sqlite.db
  for (const t of [lite.webhookBatchEvents, lite.webhookAttempts, lite.webhookDeliveries, lite.webhookEndpoints, lite.jobs]) db.delete(t).run()
  for (const t of [pgs.webhookBatchEvents, pgs.webhookAttempts, pgs.webhookDeliveries, pgs.webhookEndpoints, pgs.jobs]) await engines.pg.delete(t)
}

/** Runs the script on SQLite, then on PostgreSQL, each from empty tables; answers and rows left must be equal. */
async function same<T>(script: (e: Engine) => Promise<T>): Promise<T> {
  const answers: unknown[] = []
  const states: unknown[] = []
  for (const engine of [sqlite, postgres]) {
    await reset()
    answers.push(await script(engine))
    states.push(await engine.state())
  }
  for (let i = 1; i < answers.length; i++) {
    expect(answers[i]).toEqual(answers[0])
    expect(states[i]).toEqual(states[0])
  }
  return answers[0] as T
}

function endpoint(id: string, over: Partial<NewEndpoint> = {}): NewEndpoint {
  return {
    id,
    workspaceId: 'ws_a',
    url: `https://example.com/${id}`,
    events: ['*'],
    format: 'standard',
    mode: 'live',
    isActive: true,
    failureCount: 0,
    customHeaders: [{ name: 'x-team', value: 'growth' }],
    batchEnabled: false,
    batchWindowSeconds: 60,
    maxConcurrent: 5,
    mtlsEnabled: false,
    secret: 'whsec_one',
    createdAt: T0,
    updatedAt: T0,
    ...over,
  }
}

function delivery(id: string, endpointId: string, over: Partial<NewDelivery> = {}): NewDelivery {
  return {
    id,
    endpointId,
    workspaceId: 'ws_a',
    event: 'link.created',
    eventId: `evt_${id}`,
    payload: { id: `evt_${id}`, type: 'link.created', data: { slug: `Slug-${id}`, n: 1 } },
    status: 'pending',
    attempt: 0,
    maxAttempts: 3,
    batchSize: 1,
    batchOpen: false,
    replayable: true,
    isPing: false,
    idempotencyKey: `msg_${id}`,
    nextAttemptAt: T0,
    createdAt: T0,
    updatedAt: T0,
    ...over,
  }
}

type Effect = AttemptOutcome['endpoint']

/** Attempt `n` of a delivery: success, a failure retried (or dead at its last), or 410. */
function outcome(deliveryId: string, n: number, kind: 'success' | 'failure' | 'dead' | 'gone' | 'ping', at: number, reason = 'gone away'): AttemptOutcome {
  const common = { attempt: n, durationMs: 12, updatedAt: at }
  const attempt = {
    id: `wha_${deliveryId}_${n}`,
    deliveryId,
    attempt: n,
    startedAt: at - 12,
    durationMs: 12,
    request: { method: 'POST', url: 'https://example.com/x', headers: { 'content-type': 'application/json' }, body: '{"a":1}' },
    responseStatus: kind === 'success' || kind === 'ping' ? 200 : 500,
    responseHeaders: { server: 'test' },
    responseBody: 'ok',
    responseBodyTruncated: false,
    error: kind === 'success' || kind === 'ping' ? null : 'HTTP 500',
    address: '127.0.0.1',
  }
  const effect: Effect = kind === 'ping' ? null : kind === 'success' ? { kind: 'success' } : kind === 'gone' ? { kind: 'gone', reason } : { kind: 'failure' }
  if (kind === 'success' || kind === 'ping') {
    return {
      attempt,
      delivery: { ...common, status: 'success', responseStatus: 200, deliveredAt: at, nextAttemptAt: null, errorMessage: null },
      endpoint: effect,
      next: null,
    }
  }
  const retry = kind === 'failure'
  return {
    attempt,
    delivery: { ...common, status: retry ? 'failed' : 'dead', responseStatus: 500, nextAttemptAt: retry ? at + 5_000 : null, errorMessage: 'HTTP 500' },
    endpoint: effect,
    next: retry ? { payload: { deliveryId, attempt: n + 1 }, runAt: at + 5_000 } : null,
  }
}

describe('the same answers and rows on both engines', () => {
  test('endpoints: insert, find, list (creation order, byte order of ids on ties), count, update, delete', async () => {
    const answer = await same(async ({ repo }) => {
      const inserted = await repo.insertEndpoint(
        endpoint('whe_b', { name: 'Bee', filters: { match: 'any', events: null, rules: [{ field: 'data.slug', op: 'exists' }] } }),
      )
      await repo.insertEndpoint(endpoint('whe_A', { mode: 'test', transform: { kind: 'template', template: { text: '{{ data.slug }}' } } }))
      await repo.insertEndpoint(endpoint('whe_0', { createdAt: T0 + 1 }))
      await repo.insertEndpoint(endpoint('whe_hook', { kind: 'rest_hook' }))
      await repo.insertEndpoint(endpoint('whe_other', { workspaceId: 'ws_b' }))
      return {
        inserted,
        found: [
          await repo.findEndpoint('ws_a', 'whe_b'),
          await repo.findEndpoint('ws_b', 'whe_b'),
          await repo.endpointById('whe_A'),
          await repo.endpointById('whe_none'),
        ],
        lists: [
          await repo.listEndpoints('ws_a', 'endpoint'),
          await repo.listEndpoints('ws_a', 'endpoint', 'live'),
          await repo.listEndpoints('ws_a', 'rest_hook'),
        ],
        counts: [
          await repo.countEndpoints('ws_a', 'endpoint'),
          await repo.countEndpoints('ws_a', 'rest_hook'),
          await repo.countEndpoints('ws_none', 'endpoint'),
        ],
        updated: [
          await repo.updateEndpoint('whe_b', { isActive: false, disabledReason: 'paused', events: ['link.*'], updatedAt: T0 + 5 }),
          await repo.updateEndpoint('whe_none', { name: 'x' }),
        ],
        deleted: [await repo.deleteEndpoint('whe_A'), await repo.deleteEndpoint('whe_A')],
      }
    })
    expect((answer.lists[0] as { id: string }[]).map((e) => e.id)).toEqual(['whe_A', 'whe_b', 'whe_0'])
    expect(answer.deleted).toEqual([true, false])
  })

  test('removeRestHook: a tombstone once, its waiting deliveries dead, the sent ones kept', async () => {
    const answer = await same(async ({ repo }) => {
      await repo.insertEndpoint(endpoint('whe_hook', { kind: 'rest_hook', previousSecret: 'whsec_old', previousSecretExpiresAt: T0 + 9 }))
      await repo.insertEndpoint(endpoint('whe_plain'))
      await repo.insertDelivery(delivery('dlv_1', 'whe_hook'), { runAt: T0 }, T0)
      await repo.insertDelivery(delivery('dlv_2', 'whe_hook', { status: 'failed', attempt: 1 }), null, T0)
      await repo.insertDelivery(delivery('dlv_3', 'whe_hook', { status: 'success', attempt: 1 }), null, T0)
      return [
        await repo.removeRestHook('whe_hook', 'unsubscribed', T0 + 10),
        await repo.removeRestHook('whe_hook', 'again', T0 + 11),
        await repo.removeRestHook('whe_plain', 'not a hook', T0 + 12),
        await repo.listEndpoints('ws_a', 'rest_hook'),
        await repo.countEndpoints('ws_a', 'rest_hook'),
      ]
    })
    expect(answer.slice(0, 3)).toEqual([true, false, false])
  })

  test('deliveries: insert with and without a job, find, list with every filter, dead replayable, abandon, defer', async () => {
    await same(async ({ repo }) => {
      await repo.insertEndpoint(endpoint('whe_a'))
      await repo.insertEndpoint(endpoint('whe_b'))
      const rows = [
        delivery('dlv_01', 'whe_a'),
        delivery('dlv_02', 'whe_a', { event: 'link.clicked', status: 'dead', createdAt: T0 + 10 }),
        delivery('dlv_03', 'whe_a', { status: 'dead', replayable: false, createdAt: T0 + 10 }),
        delivery('dlv_0A', 'whe_a', { status: 'dead', createdAt: T0 + 10, payload: { needle: 'Hay-Stack' } }),
        delivery('dlv_04', 'whe_a', { status: 'success', createdAt: T0 + 20, eventId: null, payload: null, batchSize: 0, isPing: true }),
        delivery('dlv_05', 'whe_b'),
      ]
      const inserted = []
      for (const [i, row] of rows.entries()) inserted.push(await repo.insertDelivery(row, i % 2 ? { runAt: T0 + i } : null, T0))
      const list = (f: Partial<Parameters<Repo['listDeliveries']>[0]>) => repo.listDeliveries({ endpointId: 'whe_a', limit: 50, ...f })
      const lists = [
        await list({}),
        await list({ limit: 2 }),
        await list({ statuses: ['dead', 'success'] }),
        await list({ event: 'link.clicked' }),
        await list({ from: T0 + 10, to: T0 + 20 }),
        await list({ since: T0 + 10 }),
        await list({ q: 'CLICKED' }),
        await list({ q: 'msg_dlv_01' }),
        await list({ q: 'hay-stack' }),
        await list({ q: 'slug-dlv_01' }),
        await list({ q: '100%' }),
      ]
      const found = [
        await repo.findDelivery('whe_a', 'dlv_01'),
        await repo.findDelivery('whe_b', 'dlv_01'),
        await repo.deliveryById('dlv_05'),
        await repo.deliveryById('dlv_none'),
      ]
      const dead = [await repo.countDeadReplayable('whe_a'), await repo.deadReplayable('whe_a', 1), await repo.deadReplayable('whe_a', 10)]
      await repo.abandon('dlv_01', 'paused', T0 + 30)
      await repo.abandon('dlv_04', 'paused', T0 + 30)
      await repo.defer({ deliveryId: 'dlv_05', attempt: 1 }, T0 + 99, T0 + 30)
      return { inserted, lists: lists.map((l) => l.map((d) => d.id)), first: lists[0], found, dead }
    })
  })

  test('attempts in order, with their requests and answers', async () => {
    await same(async ({ repo }) => {
      await repo.insertEndpoint(endpoint('whe_a'))
      await repo.insertDelivery(delivery('dlv_1', 'whe_a'), null, T0)
      await repo.recordAttempt('dlv_1', 'whe_a', outcome('dlv_1', 1, 'failure', T0 + 1), T0 + 1, AUTO)
      await repo.recordAttempt('dlv_1', 'whe_a', outcome('dlv_1', 2, 'success', T0 + 2), T0 + 2, AUTO)
      return [await repo.attempts('dlv_1'), await repo.attempts('dlv_none')]
    })
  })

  test('replay: originals stop (a retrying one gives up), copies queued, a replayed original is not replayed again', async () => {
    const answer = await same(async ({ repo }) => {
      await repo.insertEndpoint(endpoint('whe_a'))
      await repo.insertDelivery(delivery('dlv_dead', 'whe_a', { status: 'dead', attempt: 3 }), null, T0)
      await repo.insertDelivery(delivery('dlv_fail', 'whe_a', { status: 'failed', attempt: 1 }), null, T0)
      await repo.insertDelivery(delivery('dlv_ok', 'whe_a', { status: 'success', attempt: 1, replayable: false }), null, T0)
      const copy = (originalId: string, id: string) => ({
        originalId,
        row: delivery(id, 'whe_a', { replayOfId: originalId, createdAt: T0 + 5, idempotencyKey: `msg_${id}` }),
      })
      const first = await repo.replay([copy('dlv_dead', 'dlv_r1'), copy('dlv_fail', 'dlv_r2'), copy('dlv_ok', 'dlv_r3'), copy('dlv_none', 'dlv_r4')], T0 + 5)
      const again = await repo.replay([copy('dlv_dead', 'dlv_r5')], T0 + 6)
      return { first, again }
    })
    expect(answer.first.map((d) => d.id)).toEqual(['dlv_r1', 'dlv_r2'])
    expect(answer.again).toEqual([])
  })

  test('recordAttempt: counters, the retry job, auto-disable once, 410 disables, 410 removes a REST hook, pings never count, a gone delivery', async () => {
    const answer = await same(async ({ repo }) => {
      await repo.insertEndpoint(endpoint('whe_a', { failingSince: T0 - 5_000, failureCount: 1 }))
      await repo.insertEndpoint(endpoint('whe_g'))
      await repo.insertEndpoint(endpoint('whe_hook', { kind: 'rest_hook' }))
      for (const id of ['dlv_1', 'dlv_2', 'dlv_3', 'dlv_4']) await repo.insertDelivery(delivery(id, 'whe_a'), null, T0)
      await repo.insertDelivery(delivery('dlv_g', 'whe_g'), null, T0)
      await repo.insertDelivery(delivery('dlv_h', 'whe_hook'), null, T0)
      await repo.insertDelivery(delivery('dlv_h2', 'whe_hook'), null, T0)
      await repo.insertDelivery(delivery('dlv_p', 'whe_g', { isPing: true, maxAttempts: 1 }), null, T0)
      const out = []
      out.push(await repo.recordAttempt('dlv_1', 'whe_a', outcome('dlv_1', 1, 'failure', T0 + 1), T0 + 1, AUTO))
      out.push(await repo.recordAttempt('dlv_2', 'whe_a', outcome('dlv_2', 1, 'dead', T0 + 2), T0 + 2, AUTO))
      out.push(await repo.recordAttempt('dlv_3', 'whe_a', outcome('dlv_3', 1, 'failure', T0 + 3), T0 + 3, AUTO))
      out.push(await repo.recordAttempt('dlv_4', 'whe_a', outcome('dlv_4', 1, 'success', T0 + 4), T0 + 4, AUTO))
      out.push(await repo.recordAttempt('dlv_g', 'whe_g', outcome('dlv_g', 1, 'gone', T0 + 5, 'The endpoint answered 410 Gone'), T0 + 5, AUTO))
      out.push(await repo.recordAttempt('dlv_h', 'whe_hook', outcome('dlv_h', 1, 'gone', T0 + 6, 'The target answered 410 Gone'), T0 + 6, AUTO))
      out.push(await repo.recordAttempt('dlv_p', 'whe_g', outcome('dlv_p', 1, 'ping', T0 + 7), T0 + 7, AUTO))
      out.push(await repo.recordAttempt('dlv_none', 'whe_a', outcome('dlv_none', 1, 'failure', T0 + 8), T0 + 8, AUTO))
      return out
    })
    // The second failure in a row (the first counted before) disables; the third finds it disabled.
    expect(answer).toEqual([false, true, false, false, true, true, false, null])
  })

  test('recordAttempts: in order, successes folded, each job completed with its recording', async () => {
    const answer = await same(async ({ repo, claim }) => {
      await repo.insertEndpoint(endpoint('whe_a', { failingSince: T0 - 5_000 }))
      await repo.insertEndpoint(endpoint('whe_b'))
      for (const id of ['dlv_1', 'dlv_2', 'dlv_3', 'dlv_4']) await repo.insertDelivery(delivery(id, 'whe_a'), { runAt: T0 }, T0)
      await repo.insertDelivery(delivery('dlv_b', 'whe_b'), { runAt: T0 }, T0)
      const jobs = await claim('worker-1', T0)
      const jobOf = (id: string) => {
        const job = jobs.find((j) => (j.payload as { deliveryId: string }).deliveryId === id)!
        return { id: job.id, workerId: 'worker-1' }
      }
      return repo.recordAttempts(
        [
          { deliveryId: 'dlv_1', endpointId: 'whe_a', outcome: outcome('dlv_1', 1, 'success', T0 + 1), now: T0 + 1, job: jobOf('dlv_1') },
          { deliveryId: 'dlv_b', endpointId: 'whe_b', outcome: outcome('dlv_b', 1, 'failure', T0 + 2), now: T0 + 2, job: jobOf('dlv_b') },
          { deliveryId: 'dlv_2', endpointId: 'whe_a', outcome: outcome('dlv_2', 1, 'success', T0 + 3), now: T0 + 3, job: jobOf('dlv_2') },
          {
            deliveryId: 'dlv_3',
            endpointId: 'whe_a',
            outcome: outcome('dlv_3', 1, 'failure', T0 + 4),
            now: T0 + 4,
            job: { id: 'job_someone_else', workerId: 'worker-2' },
          },
          { deliveryId: 'dlv_gone', endpointId: 'whe_a', outcome: outcome('dlv_gone', 1, 'failure', T0 + 5), now: T0 + 5, job: null },
          { deliveryId: 'dlv_4', endpointId: 'whe_a', outcome: outcome('dlv_4', 1, 'success', T0 + 6), now: T0 + 6, job: jobOf('dlv_4') },
        ],
        AUTO,
      )
    })
    expect(answer).toEqual([false, false, false, false, null, false])
  })

  test('batches through the fan-out statements: open, add, close (also through the repo), enqueue, active endpoints', async () => {
    const answer = await same(async ({ repo, fanout }) => {
      await repo.insertEndpoint(endpoint('whe_b', { batchEnabled: true }))
      await repo.insertEndpoint(endpoint('whe_a', { createdAt: T0 + 1 }))
      await repo.insertEndpoint(endpoint('whe_off', { isActive: false }))
      await repo.insertEndpoint(endpoint('whe_t', { mode: 'test' }))
      const env = (n: number) => JSON.stringify({ id: `evt_${n}`, type: 'link.clicked', mode: 'live', data: { n, text: 'Ünïcode' } })
      const before = await fanout(async (st) => {
        const active = (await st.activeEndpoints('ws_a', 'live')).map((e) => e.id)
        const none = await st.openBatch('whe_b')
        await st.insertDelivery({
          id: 'dlv_batch',
          endpointId: 'whe_b',
          workspaceId: 'ws_a',
          event: 'batch',
          eventId: null,
          payloadJson: null,
          maxAttempts: 10,
          batchSize: 0,
          batchOpen: true,
          batchClosesAt: T0 + 60_000,
          nextAttemptAt: T0 + 60_000,
          idempotencyKey: 'msg_batch',
          now: T0,
        })
        await st.addBatchEvent('dlv_batch', 0, env(0), T0)
        await st.enqueueDeliver({ deliveryId: 'dlv_batch', attempt: 1 }, T0 + 60_000, T0)
        await st.insertDelivery({
          id: 'dlv_one',
          endpointId: 'whe_a',
          workspaceId: 'ws_a',
          event: 'link.clicked',
          eventId: 'evt_1',
          payloadJson: env(1),
          maxAttempts: 10,
          batchSize: 1,
          batchOpen: false,
          batchClosesAt: null,
          nextAttemptAt: T0,
          idempotencyKey: 'msg_one',
          now: T0,
        })
        return { active, none }
      })
      const open = await fanout(async (st) => {
        const batch = await st.openBatch('whe_b')
        await st.addBatchEvent(batch!.id, batch!.batchSize, env(2), T0 + 1)
        return batch
      })
      const full = await fanout(async (st) => {
        const batch = await st.openBatch('whe_b')
        await st.addBatchEvent(batch!.id, batch!.batchSize, env(3), T0 + 2)
        await st.closeBatch(batch!.id, T0 + 2)
        return st.openBatch('whe_b')
      })
      await repo.insertDelivery(delivery('dlv_batch2', 'whe_b', { event: 'batch', eventId: null, payload: null, batchOpen: true, batchSize: 0 }), null, T0)
      await fanout((st) => st.addBatchEvent('dlv_batch2', 0, env(4), T0 + 3))
      const closed = [await repo.closeBatch('dlv_batch2', T0 + 4), await repo.closeBatch('dlv_batch2', T0 + 5), await repo.closeBatch('dlv_none', T0 + 5)]
      return { before, open, full, closed, batch: await repo.deliveryById('dlv_batch') }
    })
    expect(answer.before).toEqual({ active: ['whe_b', 'whe_a'], none: null })
    expect(answer.open).toEqual({ id: 'dlv_batch', batchSize: 1 })
    expect(answer.full).toBeNull()
    expect(answer.batch!.payload).toMatchObject({ type: 'batch', count: 3 })
  })

  test('pruneDeliveries: final deliveries before the mark go with their attempts; waiting ones stay', async () => {
    const answer = await same(async ({ repo }) => {
      await repo.insertEndpoint(endpoint('whe_a'))
      await repo.insertEndpoint(endpoint('whe_b'))
      await repo.insertDelivery(delivery('dlv_1', 'whe_a'), null, T0)
      await repo.recordAttempt('dlv_1', 'whe_a', outcome('dlv_1', 1, 'success', T0 + 1), T0 + 1, AUTO)
      await repo.insertDelivery(delivery('dlv_2', 'whe_b', { status: 'dead' }), null, T0)
      await repo.insertDelivery(delivery('dlv_3', 'whe_b', { status: 'failed' }), null, T0)
      await repo.insertDelivery(delivery('dlv_4', 'whe_b', { status: 'dead', createdAt: T0 + 100 }), null, T0)
      return [await repo.pruneDeliveries(T0 + 50), await repo.pruneDeliveries(T0 + 50)]
    })
    expect(answer).toEqual([2, 0])
  })
})

describe('at once on PostgreSQL, on separate connections', () => {
  const repo = () => postgres.repo
  const ROUNDS = 5

  test('one attempt recorded by several nodes at once is written once: one attempt row, one count', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      await reset()
      await repo().insertEndpoint(endpoint('whe_a'))
      await repo().insertDelivery(delivery('dlv_1', 'whe_a'), null, T0)
      const results = await Promise.all(
        Array.from({ length: 4 }, () => repo().recordAttempt('dlv_1', 'whe_a', outcome('dlv_1', 1, 'failure', T0 + 1), T0 + 1, AUTO)),
      )
      expect(results.filter((r) => r === false)).toHaveLength(1)
      expect(results.filter((r) => r === null)).toHaveLength(3)
      const [{ n }] = await engines.sql`SELECT count(*)::int AS n FROM webhook_attempts`
      expect(n).toBe(1)
      expect((await repo().endpointById('whe_a'))!.failureCount).toBe(1)
      const jobs = await engines.sql`SELECT payload FROM jobs`
      expect(jobs).toHaveLength(1)
    }
  })

  test('failures racing on one endpoint: every one counted, and exactly one reports disabling it', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      await reset()
      await repo().insertEndpoint(endpoint('whe_a', { failingSince: T0 - 5_000 }))
      const ids = Array.from({ length: 8 }, (_, i) => `dlv_${i}`)
      for (const id of ids) await repo().insertDelivery(delivery(id, 'whe_a'), null, T0)
      const results = await Promise.all(ids.map((id) => repo().recordAttempt(id, 'whe_a', outcome(id, 1, 'failure', T0 + 1), T0 + 1, AUTO)))
      expect(results.filter((r) => r === true)).toHaveLength(1)
      const ep = (await repo().endpointById('whe_a'))!
      expect([ep.failureCount, ep.isActive, ep.disabledReason]).toEqual([8, false, AUTO.reason])
    }
  })

  test('batches of attempts over two endpoints in opposite orders never deadlock, and count exactly', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      await reset()
      await repo().insertEndpoint(endpoint('whe_a'))
      await repo().insertEndpoint(endpoint('whe_b'))
      const batches = Array.from({ length: 6 }, (_, i) => {
        const a = `dlv_a${i}`
        const b = `dlv_b${i}`
        return {
          a,
          b,
          order:
            i % 2
              ? ([
                  ['whe_a', a],
                  ['whe_b', b],
                ] as const)
              : ([
                  ['whe_b', b],
                  ['whe_a', a],
                ] as const),
        }
      })
      for (const { a, b } of batches) {
        await repo().insertDelivery(delivery(a, 'whe_a'), null, T0)
        await repo().insertDelivery(delivery(b, 'whe_b'), null, T0)
      }
      const results = await Promise.all(
        batches.map(({ order }) =>
          repo().recordAttempts(
            order.map(([endpointId, deliveryId]) => ({ deliveryId, endpointId, outcome: outcome(deliveryId, 1, 'failure', T0 + 1), now: T0 + 1, job: null })),
            { ...AUTO, failures: 1_000 },
          ),
        ),
      )
      expect(results.flat()).toEqual(Array(12).fill(false))
      expect((await repo().endpointById('whe_a'))!.failureCount).toBe(6)
      expect((await repo().endpointById('whe_b'))!.failureCount).toBe(6)
    }
  })

  test('one original replayed by several requests at once gets one copy and one job', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      await reset()
      await repo().insertEndpoint(endpoint('whe_a'))
      await repo().insertDelivery(delivery('dlv_x', 'whe_a', { status: 'failed', attempt: 1 }), null, T0)
      const copies = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          repo().replay([{ originalId: 'dlv_x', row: delivery(`dlv_r${i}`, 'whe_a', { replayOfId: 'dlv_x', idempotencyKey: `msg_r${i}` }) }], T0 + 1),
        ),
      )
      expect(copies.flat()).toHaveLength(1)
      const [{ n }] = await engines.sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE replay_of_id = 'dlv_x'`
      expect(n).toBe(1)
      expect(await engines.sql`SELECT id FROM jobs`).toHaveLength(1)
      expect(await repo().deliveryById('dlv_x')).toMatchObject({
        status: 'dead',
        replayable: false,
        errorMessage: `superseded by replay ${copies.flat()[0]!.id}`,
      })
    }
  })

  test('events joining a batch while it closes are each either in the closed batch or told it is closed, never lost', async () => {
    const st = pgStatements
    const engine = pgEngine(engines.pg)
    for (let round = 0; round < ROUNDS; round++) {
      await reset()
      await repo().insertEndpoint(endpoint('whe_b', { batchEnabled: true }))
      await repo().insertDelivery(delivery('dlv_batch', 'whe_b', { event: 'batch', eventId: null, payload: null, batchOpen: true, batchSize: 0 }), null, T0)
      const add = (n: number) =>
        engine.transaction(function* (tx) {
          const open = yield* st.openBatch(tx, 'whe_b')
          if (!open) return null
          yield* st.addBatchEvent(tx, open.id, open.batchSize, JSON.stringify({ id: `evt_${n}` }), T0)
          return n
        })
      const close = async () => {
        // Lets some adds go first, so the close lands among them.
        await Bun.sleep(round)
        return repo().closeBatch('dlv_batch', T0 + 1)
      }
      const [closed, ...added] = await Promise.all([close(), ...Array.from({ length: 12 }, (_, n) => add(n))])
      const joined = added.filter((n): n is number => n !== null).sort((a, b) => a - b)
      const payload = closed!.payload as { count: number; events: { id: string }[] }
      expect(payload.events.map((e) => Number(e.id.slice(4))).sort((a, b) => a - b)).toEqual(joined)
      expect([payload.count, closed!.batchSize]).toEqual([joined.length, joined.length])
      expect(await engines.sql`SELECT 1 FROM webhook_batch_events`).toHaveLength(0)
    }
  })

  test('rotations of one secret at once chain: each keeps the secret it replaced, none keeps a stale one', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      await reset()
      await pgRepo.insertEndpoint(endpoint('whe_a', { secret: 'whsec_0' }))
      const secrets = Array.from({ length: 6 }, (_, i) => `whsec_${i + 1}`)
      const rows = await Promise.all(secrets.map((s, i) => pgRepo.rotateSecret('whe_a', s, T0 + 1_000, T0 + i)))
      // Each rotation replaced a different secret, the first the original: one chain through all of them.
      const replaced = new Map(rows.map((r) => [r!.previousSecret, r!.secret]))
      expect(replaced.size).toBe(secrets.length)
      let at = 'whsec_0'
      for (let i = 0; i < secrets.length; i++) at = replaced.get(at)!
      expect((await pgRepo.endpointById('whe_a'))!.secret).toBe(at)
      const stopped = await pgRepo.rotateSecret('whe_a', 'whsec_now', null, T0 + 9)
      expect([stopped!.previousSecret, stopped!.previousSecretExpiresAt]).toEqual([null, null])
      expect(await pgRepo.rotateSecret('whe_none', 'x', null, T0)).toBeUndefined()
    }
  })

  test('two nodes taking slots of one endpoint at once never hold more than maxConcurrent; a dead node frees its slots', async () => {
    const nodes = [await createDeliverySlotsPg(engines.sql), await createDeliverySlotsPg(engines.sql)]
    const MAX = 3
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const takes = await Promise.all(Array.from({ length: 8 }, (_, i) => nodes[i % 2]!.take('whe_a', MAX).then((slot) => ({ node: i % 2, slot }))))
        const taken = takes.filter((t) => t.slot !== null)
        expect(taken).toHaveLength(MAX)
        // One holder per slot, across both nodes.
        expect(new Set(taken.map((t) => t.slot)).size).toBe(MAX)
        expect(await nodes[0]!.take('whe_a', MAX)).toBeNull()
        // Another endpoint's slots are its own.
        const other = await nodes[1]!.take('whe_b', 1)
        expect(other).toBe(0)
        await nodes[1]!.release('whe_b', other!)
        const freed = taken[0]!
        await nodes[freed.node]!.release('whe_a', freed.slot!)
        expect(await nodes[1 - freed.node]!.take('whe_a', MAX)).toBe(freed.slot)
        await nodes[1 - freed.node]!.release('whe_a', freed.slot!)
        for (const t of taken.slice(1)) await nodes[t.node]!.release('whe_a', t.slot!)
      }
      // Node 0 takes every slot and dies: its connection ends, and PostgreSQL frees them for node 1.
      for (let i = 0; i < MAX; i++) expect(await nodes[0]!.take('whe_a', MAX)).toBe(i)
      expect(await nodes[1]!.take('whe_a', MAX)).toBeNull()
      // Node 1 holds none now: the one backend holding slot locks is node 0's.
      await engines.sql`
        SELECT pg_terminate_backend(pid) FROM (SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = ${0x6c6e6b77} AND granted) held`
      let slot: number | null = null
      for (let i = 0; i < 200 && slot === null; i++) {
        slot = await nodes[1]!.take('whe_a', MAX)
        if (slot === null) await Bun.sleep(25)
      }
      expect(slot).not.toBeNull()
    } finally {
      await nodes[1]!.close()
      await nodes[0]!.close().catch(() => {})
    }
  })
})
