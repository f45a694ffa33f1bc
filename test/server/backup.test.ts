// `lnk admin backup FILE` while `lnk serve` is taking writes: a consistent, complete copy, and the writers
// never notice. On PostgreSQL it names pg_dump instead, and the server carries on.
import { afterAll, afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ON_PG, tempDir } from '../helpers'
import { dropTestDatabases, onTestEngine, runJson, runLnk, startServe, type ServerProcess } from '../cli/lnk-process'

// A server and several lnk processes per test; a loaded machine makes each slow to start.
setDefaultTimeout(60_000)

const dirs: string[] = []
const servers: ServerProcess[] = []

afterEach(() => {
  for (const s of servers.splice(0)) s.kill()
})

afterAll(async () => {
  await dropTestDatabases()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const MAX_WRITES = 300
const MAX_WRITE_MS = 10_000

// The SQLite file itself, copied; on PostgreSQL: 'admin backup on PostgreSQL names pg_dump …' below.
test.skipIf(ON_PG)('admin backup while the server takes writes: consistent, complete, and never over an existing file', async () => {
  const dir = tempDir('lnk-backup-')
  dirs.push(dir)
  const target = join(dir, 'backup.db')
  const boot = await runJson<{ apiKey: { id: string; key: string } }>(
    ['admin', 'bootstrap', '--email', 'ops@example.com', '--workspace', 'Backups', '--json'],
    { dataDir: dir },
  )
  const server = await startServe(dir, { LNK_LOG_LEVEL: 'warn' })
  servers.push(server)

  // The writer: one POST /v1/api-keys after another, bounded in count and time, until told to stop.
  const acknowledged: { id: string; at: number }[] = []
  const failures: string[] = []
  let sent = 0
  let stop = false
  const writerStarted = Date.now()
  const writer = (async () => {
    while (!stop && sent < MAX_WRITES && Date.now() - writerStarted < MAX_WRITE_MS) {
      const i = sent++
      try {
        const res = await fetch(`${server.url}/v1/api-keys`, {
          method: 'POST',
          headers: { authorization: `Bearer ${boot.apiKey.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `k${i}`, permissions: ['links:read'] }),
          signal: AbortSignal.timeout(15_000),
        })
        const text = await res.text()
        if (res.status !== 201) failures.push(`k${i}: ${res.status} ${text.slice(0, 200)}`)
        else acknowledged.push({ id: (JSON.parse(text) as { data: { id: string } }).data.id, at: Date.now() })
      } catch (err) {
        failures.push(`k${i}: ${(err as Error).message}`)
      }
    }
  })()

  // Let some keys exist first; these must all be in the backup.
  const warmupDeadline = Date.now() + 5_000
  while (acknowledged.length < 20 && failures.length === 0 && Date.now() < warmupDeadline) await Bun.sleep(10)
  expect(failures).toEqual([])
  expect(acknowledged.length).toBeGreaterThanOrEqual(20)
  const existing = acknowledged.map((k) => k.id)
  const backupStarted = Date.now()

  const backup = await runLnk(['admin', 'backup', target, '--json'], { dataDir: dir, timeoutMs: 15_000 })
  const backupEnded = Date.now()
  await Bun.sleep(100)
  stop = true
  await writer

  expect(backup.stderr).toBe('')
  expect(backup.code).toBe(0)
  const lines = backup.stdout.split('\n').filter(Boolean)
  expect(lines).toHaveLength(1)
  const report = JSON.parse(lines[0]!) as { file: string; bytes: number }
  expect(report.file).toBe(target)
  expect(report.bytes).toBe(statSync(target).size)
  expect(report.bytes).toBeGreaterThan(0)

  // The writers never noticed, and kept going while the backup ran.
  expect(failures).toEqual([])
  expect(sent).toBeLessThanOrEqual(MAX_WRITES)
  expect(acknowledged.filter((k) => k.at > backupStarted && k.at < backupEnded).length).toBeGreaterThan(0)

  // The copy is a sound SQLite database on its own (no WAL beside it needed)...
  // Storage itself is what this checks: the backup file, opened on its own.
  const copy = new Database(target, { readonly: true })
  let copyMigrations: string[]
  let copyKeys: Set<string>
  try {
    expect((copy.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check).toBe('ok')
    expect(copy.query('PRAGMA foreign_key_check').all()).toEqual([])
    copyMigrations = (copy.query('SELECT tag FROM schema_migrations ORDER BY tag').all() as { tag: string }[]).map((r) => r.tag)
    copyKeys = new Set((copy.query('SELECT id FROM api_keys').all() as { id: string }[]).map((r) => r.id))
  } finally {
    copy.close()
  }
  // ...holding every key acknowledged before it started, and the bootstrap one.
  expect(copyMigrations.length).toBeGreaterThan(0)
  expect(copyKeys.has(boot.apiKey.id)).toBe(true)
  expect(existing.filter((id) => !copyKeys.has(id))).toEqual([])

  // A second backup to the same file is refused and leaves the first one alone.
  const before = readFileSync(target)
  const again = await runLnk(['admin', 'backup', target, '--json'], { dataDir: dir })
  expect(again.code).toBe(1)
  expect(again.stdout).toBe('')
  const errLines = again.stderr.split('\n').filter(Boolean)
  expect(errLines).toHaveLength(1)
  expect(errLines[0]).toContain('exists')
  expect(readFileSync(target).equals(before)).toBe(true)

  const stopped = await server.stop('SIGTERM')
  expect(stopped).toMatchObject({ code: 0, signal: null })

  // The copy's migrations are the live database's, and everything it holds is in the live database too.
  // Storage itself: the live file, read-only, compared with the copy.
  const live = new Database(join(dir, 'lnk.db'), { readonly: true })
  try {
    expect((live.query('SELECT tag FROM schema_migrations ORDER BY tag').all() as { tag: string }[]).map((r) => r.tag)).toEqual(copyMigrations)
    const liveKeys = new Set((live.query('SELECT id FROM api_keys').all() as { id: string }[]).map((r) => r.id))
    expect([...copyKeys].filter((id) => !liveKeys.has(id))).toEqual([])
    expect(acknowledged.filter((k) => !liveKeys.has(k.id))).toEqual([])
  } finally {
    live.close()
  }
})

// Where the SQLite file is (or is not); PostgreSQL's refusal is the test below.
test.skipIf(ON_PG)('admin backup refuses a missing directory, and a data dir without a database', async () => {
  const dir = tempDir('lnk-backup-')
  dirs.push(dir)
  const noDb = await runLnk(['admin', 'backup', join(dir, 'b.db')], { dataDir: join(dir, 'empty') })
  expect(noDb.code).toBe(1)
  expect(noDb.stderr).toContain('no database')
  await runLnk(['migrate'], { dataDir: dir })
  const noParent = await runLnk(['admin', 'backup', join(dir, 'missing', 'b.db')], { dataDir: dir })
  expect(noParent.code).toBe(1)
  expect(noParent.stderr).toContain('does not exist')
})

test.if(ON_PG)('admin backup on PostgreSQL names pg_dump for the database, writes nothing, and the server carries on', async () => {
  const dir = tempDir('lnk-backup-')
  dirs.push(dir)
  const url = new URL((await onTestEngine(dir))!)
  const target = join(dir, 'backup.dump')
  const boot = await runJson<{ apiKey: { key: string } }>(['admin', 'bootstrap', '--email', 'ops@example.com', '--workspace', 'Backups', '--json'], {
    dataDir: dir,
  })
  const server = await startServe(dir, { LNK_LOG_LEVEL: 'warn' })
  servers.push(server)

  const r = await runLnk(['admin', 'backup', target, '--json'], { dataDir: dir })
  expect(r.code).toBe(1)
  expect(r.stdout).toBe('')
  const lines = r.stderr.split('\n').filter(Boolean)
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain(
    `pg_dump --format=custom --file=${target} --host=${url.hostname} --port=${url.port} --username=${url.username} --dbname=${url.pathname.slice(1)}`,
  )
  expect(lines[0]).toContain(`lnk admin export ${target}`)
  expect(existsSync(target)).toBe(false)
  expect(existsSync(join(dir, 'lnk.db'))).toBe(false)

  const res = await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${boot.apiKey.key}` }, signal: AbortSignal.timeout(15_000) })
  expect(res.status).toBe(200)
  expect(await server.stop('SIGTERM')).toMatchObject({ code: 0, signal: null })
})
