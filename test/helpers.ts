// Test helpers: a real database per test file (a SQLite file in a temp dir, or a PostgreSQL database:
// ENGINE), the app through app.handle(), and keys made by the same services the CLI uses.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { createApp } from '../src/app'
import type { Clock } from '../src/platform/clock'
import { loadConfig, type Config } from '../src/platform/config'
import { silentLogger, type Logger } from '../src/platform/log'
import { bootstrap, createKey } from '../src/modules/identity/service'
import { createRuntime, openRuntime, type Runtime, type RuntimeOptions } from '../src/runtime'
import { conformance, isLnkApiResponse } from './conformance'
import { createTestDatabase, type TestDatabase } from './setup/postgres'
import { eventsAfter, type StoredEvent } from '../src/events/repo-outbox'
import { publishing, type PublishInput } from '../src/events/outbox'
import { engineOf } from '../src/db/store'
import { enqueuing, type EnqueueInput } from '../src/jobs/queue'

export const ROOT = join(import.meta.dir, '..')

export function tempDir(prefix = 'lnk-test-') {
  return mkdtempSync(join(tmpdir(), prefix))
}

/**
 * The engine the tests' databases are on: PostgreSQL when LNK_TEST_DATABASE_URL names a server (CI's second
 * pass, issue 18), else a SQLite file per test file. Tests of SQLite storage itself skip on PostgreSQL
 * (`describe.skipIf(ON_PG)`) and say so.
 */
export const ENGINE: 'sqlite' | 'pg' = process.env.LNK_TEST_DATABASE_URL ? 'pg' : 'sqlite'
export const ON_PG = ENGINE === 'pg'
/** ORDER BY this for rows in the order they were inserted (tables whose ids are random). */
export const INSERTION_ORDER = ON_PG ? 'ctid' : 'rowid'

export interface TestEnv {
  rt: Runtime
  app: ReturnType<typeof createApp>
  dir: string
  config: Config
  /** Sends a request to the app; `path` is relative to the origin (e.g. /v1/me). */
  request(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>
  /** Closes the runtime's connections and removes what setup made (PostgreSQL: drops the database). */
  cleanup(): Promise<void>
}

type SetupOptions = { env?: Record<string, string>; clock?: Clock; log?: Logger; worker?: RuntimeOptions['worker'] }

/** The app on a database of its own, on the engine the run is for (ENGINE). */
export async function setup(options: SetupOptions = {}): Promise<TestEnv> {
  return ON_PG ? setupPg(options) : setupSqlite(options)
}

/** setup() on SQLite whatever the run's engine: for tests of SQLite storage itself. */
export function setupSqlite(options: SetupOptions = {}): TestEnv {
  const dir = tempDir()
  const config = loadConfig({ LNK_DATA_DIR: dir, LNK_BASE_URL: 'http://localhost:8080', LNK_LOG_LEVEL: 'silent', ...options.env })
  const rt = createRuntime(config, { clock: options.clock, log: options.log ?? silentLogger, worker: options.worker })
  const app = createApp(rt)
  checkResponses(app)
  return {
    rt,
    app,
    dir,
    config,
    request: requester(app),
    async cleanup() {
      // The one thread a test runtime may start (on a question measuring many links' unique visitors).
      await rt.modules.analytics.close()
      for (const handle of [rt.workerDb, rt.db]) {
        try {
          handle.close()
        } catch {
          /* already closed by the test */
        }
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface PgTestEnv extends TestEnv {
  database: TestDatabase
}

/**
 * setup() on PostgreSQL: a database of its own (test/setup/postgres.ts), served by openRuntime. Pass
 * `database` to build a second node on the same database (it is then dropped by the first node's cleanup).
 */
export async function setupPg(options: SetupOptions & { database?: TestDatabase } = {}): Promise<PgTestEnv> {
  const dir = tempDir()
  const database = options.database ?? (await createTestDatabase())
  const config = loadConfig({
    LNK_DATA_DIR: dir,
    LNK_DATABASE_URL: database.url,
    LNK_DATABASE_POOL_SIZE: '4',
    LNK_BASE_URL: 'http://localhost:8080',
    LNK_LOG_LEVEL: 'silent',
    ...options.env,
  })
  const rt = await openRuntime(config, { clock: options.clock, log: options.log ?? silentLogger, worker: options.worker })
  const app = createApp(rt)
  checkResponses(app)
  const owned = options.database === undefined
  return {
    rt,
    app,
    dir,
    config,
    database,
    request: requester(app),
    async cleanup() {
      await closeRawReader(rt)
      await rt.close()
      if (owned) await database.drop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

const rawReaders = new WeakMap<Runtime, SQL>()

async function closeRawReader(rt: Runtime) {
  const reader = rawReaders.get(rt)
  rawReaders.delete(rt)
  await reader?.close()
}

/**
 * Storage itself, raw on purpose, on either engine: for checks of stored rows and columns no port shows
 * (hashes, flags, counters). Write `?` placeholders; on PostgreSQL they become $1, $2…, and values come back
 * as SQLite gives them (integers as numbers, booleans as 0/1, JSON as text), so one assertion serves both.
 */
export async function rawRows<T = any>(env: { rt: Runtime }, query: string, ...params: unknown[]): Promise<T[]> {
  const { store } = env.rt
  if (store.engine === 'sqlite') return store.db.sqlite.query(query).all(...(params as never[])) as T[]
  let reader = rawReaders.get(env.rt)
  if (!reader) {
    // A connection of its own: bigint on, so integers never arrive as strings.
    reader = new SQL(store.url, { max: 1, bigint: true })
    rawReaders.set(env.rt, reader)
  }
  return pgRowsLikeSqlite<T>(reader, query, params)
}

/** A raw read on PostgreSQL as rawRows gives it: `?` placeholders, values as SQLite gives them. Needs a client with `bigint: true`. */
export async function pgRowsLikeSqlite<T>(reader: SQL, query: string, params: unknown[]): Promise<T[]> {
  const rows = (await reader.unsafe(dollarPlaceholders(query), params as never[])) as Record<string, unknown>[]
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, likeSqlite(v)]))) as T[]
}

function likeSqlite(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v)
  if (typeof v === 'boolean') return v ? 1 : 0
  if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array) && !(v instanceof Date)) return JSON.stringify(v)
  return v
}

/** `?` → `$n`, outside quoted strings. */
function dollarPlaceholders(query: string): string {
  let n = 0
  let quoted = false
  let out = ''
  for (const ch of query) {
    if (ch === "'") quoted = !quoted
    out += ch === '?' && !quoted ? `$${++n}` : ch
  }
  return out
}

/** The events stored in the outbox, oldest first, on either engine. */
export async function storedEvents(env: { rt: Runtime }): Promise<StoredEvent[]> {
  const engine = engineOf(env.rt.store)
  return engine.run((db) => eventsAfter(engine, db, 0, Number.MAX_SAFE_INTEGER))
}

/** Publishes an event as a service would, in a transaction of its own, on either engine; answers its id. */
export async function publishEvent(rt: Runtime, input: PublishInput): Promise<string> {
  const engine = engineOf(rt.store)
  const now = rt.clock.now()
  return (await engine.transaction((tx) => publishing(engine, tx, input, now))).id
}

/** Enqueues a job (a periodic task's, say) on either engine; answers its id, or null when its unique key is taken. */
export async function enqueueJob(rt: Runtime, input: EnqueueInput): Promise<string | null> {
  const engine = engineOf(rt.store)
  const now = rt.clock.now()
  return engine.transaction((tx) => enqueuing(engine, tx, input, now))
}

/** Sends a request to the app; `path` is relative to the origin (e.g. /v1/me). */
function requester(app: ReturnType<typeof createApp>): TestEnv['request'] {
  return (path, init = {}) => {
    const headers = new Headers(init.headers)
    if (init.key) headers.set('authorization', `Bearer ${init.key}`)
    let body = init.body
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json')
      body = JSON.stringify(init.json)
    }
    return app.handle(new Request(`http://localhost:8080${path}`, { ...init, headers, body }))
  }
}

/**
 * Every response the app gives a test (through env.request or env.app.handle) is checked against the served
 * OpenAPI document (test/conformance.ts); a mismatch fails the test that received it.
 */
function checkResponses(app: ReturnType<typeof createApp>) {
  const handle = app.handle.bind(app)
  app.handle = async (request: Request) => {
    const method = request.method
    const url = request.url
    const response = await handle(request)
    if (isLnkApiResponse(response)) await conformance().check(method, url, response)
    return response
  }
}

/**
 * The same for responses from real listeners (startServer, a spawned binary): any fetch whose answer carries
 * lnk's Service-Version header is checked. Test receivers and other servers never send that header.
 */
const CHECKED = Symbol.for('lnk.test.checkedFetch')
if (!(globalThis.fetch as unknown as Record<symbol, boolean>)[CHECKED]) {
  const plain = globalThis.fetch
  const checked = async (input: string | URL | Request, init?: RequestInit) => {
    // Read before sending: a Request's body may be consumed by the call.
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET')
    const url = input instanceof Request ? input.url : String(input)
    const response = await plain(input, init)
    if (isLnkApiResponse(response)) await conformance().check(method, url, response)
    return response
  }
  globalThis.fetch = Object.assign(checked, plain, { [CHECKED]: true }) as typeof fetch
}

let counter = 0

/** A user, workspace and live key with every permission. */
export async function bootstrapAccount(rt: Runtime, name = `Workspace ${++counter}`) {
  return bootstrap(rt.modules.identity.ctx, { email: `owner${counter}-${Math.random().toString(36).slice(2, 8)}@example.com`, workspace: name })
}

export async function makeKey(rt: Runtime, workspace: string, permissions = '*', mode: 'live' | 'test' = 'live') {
  return createKey(rt.modules.identity.ctx, { workspace, name: `key ${++counter}`, permissions, mode })
}

/** Polls `read` until it gives `want` or a second has gone by (a change on another node); answers the last value read. */
export async function within1s<T>(read: () => Promise<T>, want: T): Promise<T> {
  const deadline = Date.now() + 1000
  let got = await read()
  while (got !== want && Date.now() < deadline) {
    await Bun.sleep(20)
    got = await read()
  }
  return got
}

export async function body<T = any>(res: Response): Promise<T> {
  return (await res.json()) as T
}
