// Migrations: embedded list = drizzle's journal, applied once, guarded by hashes and foreign_key_check.
import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/client'
import { migrate, splitStatements } from '../../src/db/migrate'
import { EMBEDDED_MIGRATIONS } from '../../src/db/migrations.generated'
import { ROOT, tempDir } from '../helpers'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

function freshDb() {
  const dir = tempDir()
  dirs.push(dir)
  return openDatabase(join(dir, 'lnk.db'))
}

describe('embedded migrations', () => {
  test('the embedded list equals drizzle-kit journal, in order, with the same SQL', () => {
    const journal = JSON.parse(readFileSync(join(ROOT, 'drizzle/meta/_journal.json'), 'utf8')) as { entries: { idx: number; tag: string; when: number }[] }
    expect(EMBEDDED_MIGRATIONS.map((m) => m.tag)).toEqual(journal.entries.map((e) => e.tag))
    expect(EMBEDDED_MIGRATIONS.map((m) => m.when)).toEqual(journal.entries.map((e) => e.when))
    for (const m of EMBEDDED_MIGRATIONS) expect(m.sql).toBe(readFileSync(join(ROOT, 'drizzle', `${m.tag}.sql`), 'utf8'))
  })

  test('a fresh database gets every table, once', () => {
    const db = freshDb()
    const first = migrate(db.sqlite)
    expect(first.applied).toEqual(EMBEDDED_MIGRATIONS.map((m) => m.tag))
    // Storage itself: the schema the migrations made.
    const tables = db.sqlite
      .query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((r: any) => r.name)
    for (const t of ['users', 'workspaces', 'memberships', 'api_keys', 'api_key_usage', 'outbox', 'jobs', 'idempotency_records', 'schema_migrations'])
      expect(tables).toContain(t)
    expect(migrate(db.sqlite).applied).toEqual([])
    db.close()
  })

  test('the connection runs in WAL with the pragmas lnk relies on', () => {
    const db = freshDb()
    // Storage itself: the connection's own settings.
    const one = (sql: string) => Object.values(db.sqlite.query(sql).get() as object)[0]
    expect(one('PRAGMA journal_mode')).toBe('wal')
    expect(one('PRAGMA synchronous')).toBe(1) // NORMAL
    expect(one('PRAGMA foreign_keys')).toBe(1)
    expect(one('PRAGMA busy_timeout')).toBe(5000)
    migrate(db.sqlite)
    expect(one('PRAGMA foreign_keys')).toBe(1)
    db.close()
  })

  test('an applied migration whose text changed stops start-up', () => {
    const db = freshDb()
    migrate(db.sqlite)
    const tampered = EMBEDDED_MIGRATIONS.map((m, i) => (i === 0 ? { ...m, sql: m.sql + '\n-- edited' } : m))
    expect(() => migrate(db.sqlite, tampered)).toThrow(/changed after it was applied/)
    db.close()
  })

  test('a database newer than this build is refused', () => {
    const db = freshDb()
    migrate(db.sqlite, [...EMBEDDED_MIGRATIONS, { tag: '9999_future', when: 1, sql: 'CREATE TABLE future (id TEXT)' }])
    expect(() => migrate(db.sqlite)).toThrow(/9999_future/)
    db.close()
  })

  test('runs with foreign keys off, and a violation left behind rolls the migration back', () => {
    const db = freshDb()
    migrate(db.sqlite)
    const bad = {
      tag: '9000_orphan',
      when: 2,
      // Valid only with foreign keys off; foreign_key_check must catch the orphan.
      sql: "INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ('ws_missing', 'usr_missing', 'owner', 0);",
    }
    expect(() => migrate(db.sqlite, [...EMBEDDED_MIGRATIONS, bad])).toThrow(/foreign key violation/)
    // Storage itself: what the rolled-back migration left (nothing) and the connection's settings.
    expect(db.sqlite.query('SELECT count(*) AS n FROM memberships').get()).toEqual({ n: 0 })
    expect(db.sqlite.query("SELECT count(*) AS n FROM schema_migrations WHERE tag = '9000_orphan'").get()).toEqual({ n: 0 })
    expect(Object.values(db.sqlite.query('PRAGMA foreign_keys').get() as object)[0]).toBe(1)
    db.close()
  })

  test('statements are split on drizzle breakpoints', () => {
    expect(splitStatements('CREATE TABLE a (x);\n--> statement-breakpoint\nCREATE INDEX b ON a (x);')).toEqual([
      'CREATE TABLE a (x);',
      'CREATE INDEX b ON a (x);',
    ])
  })
})
