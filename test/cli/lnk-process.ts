// Runs the real entry point (`bun run src/main.ts …`) as a subprocess, each bounded in time, with a clean
// environment (no LNK_* leaking in from the shell) and its own data directory. On the PostgreSQL pass a data
// directory given to onTestEngine() also gets a database of its own, which its processes are pointed at.
// Used by test/cli and test/server; not a test file itself.
import { Database } from 'bun:sqlite'
import { SQL, type Subprocess } from 'bun'
import { join } from 'node:path'
import { ON_PG, pgRowsLikeSqlite, ROOT } from '../helpers'
import { createTestDatabase, type TestDatabase } from '../setup/postgres'

const databases = new Map<string, TestDatabase>()

/**
 * The engine of the run for the processes on `dataDir`: on the PostgreSQL pass (ON_PG) a fresh database,
 * handed to every runLnk/startServe on that directory as LNK_DATABASE_URL (returned); on SQLite nothing
 * (null), so they keep <dataDir>/lnk.db. dropTestDatabases() drops what this made.
 */
export async function onTestEngine(dataDir: string): Promise<string | null> {
  if (!ON_PG) return null
  let database = databases.get(dataDir)
  if (!database) {
    database = await createTestDatabase()
    databases.set(dataDir, database)
  }
  return database.url
}

/** Drops every database onTestEngine made (a test file's afterAll). */
export async function dropTestDatabases() {
  const all = [...databases.values()]
  databases.clear()
  for (const database of all) await database.drop()
}

/**
 * Storage itself, read-only, where the processes on `dataDir` keep it: its PostgreSQL database when
 * onTestEngine gave it one, else <dataDir>/lnk.db (opened read-only: opening it as lnk does would write).
 * `?` placeholders; values come back as SQLite gives them on both engines (helpers.ts rawRows).
 */
export async function storedRows<T = Record<string, unknown>>(dataDir: string, query: string, ...params: (string | number | null)[]): Promise<T[]> {
  const database = databases.get(dataDir)
  if (!database) {
    const db = new Database(join(dataDir, 'lnk.db'), { readonly: true })
    try {
      return db.query(query).all(...params) as T[]
    } finally {
      db.close()
    }
  }
  const sql = new SQL(database.url, { max: 1, bigint: true })
  try {
    return await pgRowsLikeSqlite<T>(sql, query, params)
  } finally {
    await sql.close()
  }
}

export interface RunResult {
  code: number
  stdout: string
  stderr: string
}

/** process.env without any LNK_* variable, plus LNK_DATA_DIR, the directory's database (onTestEngine) and the extras given. */
export function lnkEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LNK_')) env[k] = v
  const database = databases.get(dataDir)
  return { ...env, LNK_DATA_DIR: dataDir, ...(database ? { LNK_DATABASE_URL: database.url } : {}), ...extra }
}

/** A port nobody listens on right now (port 0 cannot be handed to a subprocess). */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port
  probe.stop(true)
  if (!port) throw new Error('could not find a free port')
  return port
}

function describe(args: string[], r: { code: number | null; stdout: string; stderr: string }) {
  return `lnk ${args.join(' ')} (exit ${r.code})\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`
}

/** Runs `lnk ARGS` to completion; throws if it is still running after timeoutMs (and kills it). */
export async function runLnk(args: string[], opts: { dataDir: string; env?: Record<string, string>; timeoutMs?: number }): Promise<RunResult> {
  const timeoutMs = opts.timeoutMs ?? 20_000
  const proc = Bun.spawn(['bun', 'run', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: lnkEnv(opts.dataDir, opts.env),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    proc.kill('SIGKILL')
  }, timeoutMs)
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  clearTimeout(timer)
  if (timedOut) throw new Error(`did not finish within ${timeoutMs} ms: ${describe(args, { code: null, stdout, stderr })}`)
  return { code, stdout, stderr }
}

/** Runs `lnk ARGS --json`-style commands that must succeed, and parses their one line of JSON. */
export async function runJson<T = any>(args: string[], opts: { dataDir: string; env?: Record<string, string>; timeoutMs?: number }): Promise<T> {
  const r = await runLnk(args, opts)
  if (r.code !== 0) throw new Error(`expected exit 0: ${describe(args, r)}`)
  const lines = r.stdout.split('\n').filter((l) => l !== '')
  if (lines.length !== 1) throw new Error(`expected exactly one line of JSON on stdout: ${describe(args, r)}`)
  return JSON.parse(lines[0]!) as T
}

export interface ServerProcess {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  port: number
  url: string
  stdout(): string
  stderr(): string
  /** Resolves with the first stdout line matching `re`; throws after timeoutMs. */
  waitForLine(re: RegExp, timeoutMs?: number): Promise<string>
  /** Sends the signal and waits for the exit; throws (after SIGKILL) if it takes longer than timeoutMs. */
  stop(signal: 'SIGTERM' | 'SIGINT', timeoutMs?: number): Promise<{ code: number | null; signal: string | null; ms: number }>
  /** Waits for an exit already under way (signal sent earlier); throws (after SIGKILL) after timeoutMs. */
  exited(timeoutMs?: number): Promise<{ code: number | null; signal: string | null; ms: number }>
  /** SIGKILL if still running (cleanup after a failed test). */
  kill(): void
}

async function collect(stream: ReadableStream<Uint8Array>, sink: { text: string }) {
  const decoder = new TextDecoder()
  for await (const chunk of stream) sink.text += decoder.decode(chunk, { stream: true })
  sink.text += decoder.decode()
}

/**
 * Starts `lnk serve` on 127.0.0.1 and a free port, and waits (bounded) until /readyz answers 200.
 * Retries with another port if the first one was taken between probing and binding.
 */
export async function startServe(dataDir: string, env: Record<string, string> = {}, readyTimeoutMs = 20_000): Promise<ServerProcess> {
  let lastFailure = ''
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = freePort()
    const proc = Bun.spawn(['bun', 'run', 'src/main.ts', 'serve'], {
      cwd: ROOT,
      env: lnkEnv(dataDir, { LNK_HOST: '127.0.0.1', LNK_PORT: String(port), LNK_LOG_LEVEL: 'info', ...env }),
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const out = { text: '' }
    const err = { text: '' }
    const collected = Promise.all([collect(proc.stdout, out), collect(proc.stderr, err)])
    const url = `http://127.0.0.1:${port}`
    const server: ServerProcess = {
      proc,
      port,
      url,
      stdout: () => out.text,
      stderr: () => err.text,
      async waitForLine(re, timeoutMs = 10_000) {
        const deadline = Date.now() + timeoutMs
        for (;;) {
          const line = out.text.split('\n').find((l) => re.test(l))
          if (line !== undefined) return line
          if (Date.now() > deadline) throw new Error(`no stdout line matching ${re} within ${timeoutMs} ms; stdout:\n${out.text}\nstderr:\n${err.text}`)
          await Bun.sleep(20)
        }
      },
      async stop(signal, timeoutMs = 15_000) {
        proc.kill(signal)
        return server.exited(timeoutMs)
      },
      async exited(timeoutMs = 15_000) {
        const started = performance.now()
        let timer: ReturnType<typeof setTimeout> | undefined
        const timedOut = new Promise<'timeout'>((resolveTimeout) => (timer = setTimeout(() => resolveTimeout('timeout'), timeoutMs)))
        const outcome = await Promise.race([proc.exited, timedOut])
        clearTimeout(timer)
        if (outcome === 'timeout') {
          proc.kill('SIGKILL')
          await proc.exited
          throw new Error(`lnk serve did not exit within ${timeoutMs} ms; stdout:\n${out.text}\nstderr:\n${err.text}`)
        }
        await collected
        return { code: proc.exitCode, signal: proc.signalCode === null ? null : String(proc.signalCode), ms: performance.now() - started }
      },
      kill() {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
      },
    }
    const deadline = Date.now() + readyTimeoutMs
    let ready = false
    while (Date.now() < deadline && proc.exitCode === null && proc.signalCode === null) {
      try {
        const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1_000) })
        if (res.status === 200) {
          ready = true
          break
        }
      } catch {
        /* not listening yet */
      }
      await Bun.sleep(50)
    }
    if (ready) return server
    server.kill()
    await proc.exited
    await collected
    lastFailure =
      `lnk serve on port ${port} was not ready within ${readyTimeoutMs} ms (exit ${proc.exitCode}, signal ` +
      `${proc.signalCode});\nstdout:\n${out.text}\nstderr:\n${err.text}`
    // Only a lost race for the port is worth another try.
    if (!/EADDRINUSE|address already in use|port .* in use/i.test(err.text + out.text)) break
  }
  throw new Error(lastFailure)
}

/** Parses the key=value fields of one log line (`time level msg k=v …`, values possibly JSON-quoted). */
export function logFields(line: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const m of line.matchAll(/ ([a-z_]+)=("(?:[^"\\]|\\.)*"|\S+)/g)) fields[m[1]!] = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!
  return fields
}
