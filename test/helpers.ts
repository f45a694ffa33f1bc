// Test helpers: a real SQLite file per test file (temp dir), the app through app.handle(), and keys made
// by the same services the CLI uses.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app'
import type { Clock } from '../src/platform/clock'
import { loadConfig, type Config } from '../src/platform/config'
import { silentLogger, type Logger } from '../src/platform/log'
import { bootstrap, createKey } from '../src/modules/identity/service'
import { createRuntime, openRuntime, type Runtime, type RuntimeOptions } from '../src/runtime'
import { conformance, isLnkApiResponse } from './conformance'
import { createTestDatabase, type TestDatabase } from './setup/postgres'

export const ROOT = join(import.meta.dir, '..')

export function tempDir(prefix = 'lnk-test-') {
  return mkdtempSync(join(tmpdir(), prefix))
}

export interface TestEnv {
  rt: Runtime
  app: ReturnType<typeof createApp>
  dir: string
  config: Config
  /** Sends a request to the app; `path` is relative to the origin (e.g. /v1/me). */
  request(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>
  cleanup(): void
}

export function setup(options: { env?: Record<string, string>; clock?: Clock; log?: Logger; worker?: RuntimeOptions['worker'] } = {}): TestEnv {
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
    cleanup() {
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

export interface PgTestEnv extends Omit<TestEnv, 'cleanup'> {
  database: TestDatabase
  /** Closes the runtime and drops the database. */
  cleanup(): Promise<void>
}

/**
 * setup() on PostgreSQL: a database of its own (test/setup/postgres.ts), served by openRuntime. Pass
 * `database` to build a second node on the same database (it is then dropped by the first node's cleanup).
 */
export async function setupPg(options: { env?: Record<string, string>; clock?: Clock; log?: Logger; worker?: RuntimeOptions['worker']; database?: TestDatabase } = {}): Promise<PgTestEnv> {
  const dir = tempDir()
  const database = options.database ?? (await createTestDatabase())
  const config = loadConfig({ LNK_DATA_DIR: dir, LNK_DATABASE_URL: database.url, LNK_DATABASE_POOL_SIZE: '4', LNK_BASE_URL: 'http://localhost:8080', LNK_LOG_LEVEL: 'silent', ...options.env })
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
      await rt.close()
      if (owned) await database.drop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
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
