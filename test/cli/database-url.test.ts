// LNK_DATABASE_URL / --database-url through the real entry point: `lnk migrate` prepares a PostgreSQL
// database (once, however often it runs), a malformed or unreachable URL stops with one line naming the
// setting and never the password, and `lnk serve` serves from it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { EMBEDDED_PG_MIGRATIONS } from '../../src/db/pg/migrations.generated'
import { tempDir } from '../helpers'
import { createTestDatabase, type TestDatabase } from '../setup/postgres'
import { redactUrl } from '../../src/platform/config'
import { freePort, logFields, runLnk, startServe } from './lnk-process'

let pg: TestDatabase
const dataDir = tempDir()
beforeAll(async () => {
  pg = await createTestDatabase()
})
afterAll(async () => {
  await pg.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('lnk admin on PostgreSQL', () => {
  test('--database-url is taken by every admin command, not only export and import', async () => {
    const own = await createTestDatabase()
    try {
      await adminOn(own)
    } finally {
      await own.drop()
    }
  })
})

/** Bootstrap, then list keys, each with --database-url alone. */
async function adminOn(pg: TestDatabase) {
  const boot = await runLnk(['admin', 'bootstrap', '--email', 'flag@example.com', '--workspace', 'Flag', '--json', '--database-url', pg.url], {
    dataDir,
    timeoutMs: 30_000,
  })
  expect(boot.code).toBe(0)
  const { workspace } = JSON.parse(boot.stdout) as { workspace: { slug: string } }
  const listed = await runLnk(['admin', 'list-keys', '--workspace', workspace.slug, '--json', '--database-url', pg.url], { dataDir, timeoutMs: 30_000 })
  expect(listed.code).toBe(0)
  expect(JSON.stringify(JSON.parse(listed.stdout))).toContain('Bootstrap key')
  // The rows are in PostgreSQL, and no SQLite file was made in the data directory.
  const sql = new SQL(pg.url, { max: 1 })
  try {
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM users WHERE email = 'flag@example.com'`
    expect(n).toBe(1)
  } finally {
    await sql.close()
  }
  expect(existsSync(join(dataDir, 'lnk.db'))).toBe(false)
}

describe('lnk migrate on PostgreSQL', () => {
  test('applies the embedded migrations once, then has nothing to apply', async () => {
    const first = await runLnk(['migrate', '--database-url', pg.url], { dataDir, timeoutMs: 30_000 })
    expect(first).toMatchObject({ code: 0 })
    expect(first.stdout).toContain(`Applied ${EMBEDDED_PG_MIGRATIONS.length} PostgreSQL migration(s)`)
    const again = await runLnk(['migrate'], { dataDir, env: { LNK_DATABASE_URL: pg.url }, timeoutMs: 30_000 })
    expect(again.code).toBe(0)
    expect(again.stdout).toContain('Nothing to apply; PostgreSQL schema is at')
    const sql = new SQL(pg.url, { max: 1 })
    try {
      const [{ n }] = await sql`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`
      expect(n).toBeGreaterThan(30)
    } finally {
      await sql.close()
    }
  })

  test('a malformed URL names the setting and hides the password', async () => {
    for (const [args, env, names] of [
      [['migrate', '--database-url', 'mysql://lnk:hunter2@db/lnk'], {}, '--database-url'],
      [['migrate'], { LNK_DATABASE_URL: 'postgres://lnk:hunter2@db.internal' }, 'LNK_DATABASE_URL'],
    ] as const) {
      const r = await runLnk([...args], { dataDir, env })
      expect(r.code).toBe(1)
      expect(r.stderr).toContain(names)
      expect(r.stderr).not.toContain('hunter2')
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
    }
  })

  test('an unreachable server stops with one line naming LNK_DATABASE_URL, password redacted', async () => {
    const r = await runLnk(['migrate'], { dataDir, env: { LNK_DATABASE_URL: `postgres://lnk:hunter2@127.0.0.1:${freePort()}/lnk` }, timeoutMs: 30_000 })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('LNK_DATABASE_URL')
    expect(r.stderr).toContain('lnk:***@127.0.0.1')
    expect(r.stderr).not.toContain('hunter2')
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
  })

  test('lnk serve serves from PostgreSQL and names it (password hidden) in its start line', async () => {
    const url = new URL(pg.url)
    const server = await startServe(dataDir, { LNK_DATABASE_URL: pg.url }, 30_000)
    try {
      const ready = await fetch(`${server.url}/readyz`)
      expect(ready.status).toBe(200)
      const line = await server.waitForLine(/lnk listening/)
      expect(logFields(line).database).toBe(redactUrl(pg.url))
      if (url.password) expect(server.stdout()).not.toContain(url.password)
    } finally {
      await server.stop('SIGTERM')
    }
  }, 60_000)
})
