// Test helpers: a real SQLite file per test file (temp dir), the app through app.handle(), and keys made
// by the same services the CLI uses.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app'
import type { Clock } from '../src/clock'
import { loadConfig, type Config } from '../src/config'
import { silentLogger, type Logger } from '../src/log'
import { bootstrap, createKey } from '../src/modules/identity/service'
import { createRuntime, type Runtime, type RuntimeOptions } from '../src/runtime'

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
  return {
    rt,
    app,
    dir,
    config,
    request(path, init = {}) {
      const headers = new Headers(init.headers)
      if (init.key) headers.set('authorization', `Bearer ${init.key}`)
      let body = init.body
      if (init.json !== undefined) {
        headers.set('content-type', 'application/json')
        body = JSON.stringify(init.json)
      }
      return app.handle(new Request(`http://localhost:8080${path}`, { ...init, headers, body }))
    },
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

let counter = 0

/** A user, workspace and live key with every permission. */
export async function bootstrapAccount(rt: Runtime, name = `Workspace ${++counter}`) {
  return bootstrap(rt, { email: `owner${counter}-${Math.random().toString(36).slice(2, 8)}@example.com`, workspace: name })
}

export async function makeKey(rt: Runtime, workspace: string, permissions = '*', mode: 'live' | 'test' = 'live') {
  return createKey(rt, { workspace, name: `key ${++counter}`, permissions, mode })
}

export async function body<T = any>(res: Response): Promise<T> {
  return (await res.json()) as T
}
