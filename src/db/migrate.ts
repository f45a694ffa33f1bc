// Applies the migrations embedded in the executable. Each runs in its own transaction with foreign keys
// off (table rebuilds need that) and a foreign_key_check before commit; an applied migration whose text
// changed afterwards stops start-up rather than leaving the schema in doubt.
import type { Database } from 'bun:sqlite'
import { sha256Hex } from '../platform/random'
import { EMBEDDED_MIGRATIONS, type EmbeddedMigration } from './migrations.generated'

export interface MigrationResult {
  applied: string[]
  current: string | null
}

export function splitStatements(sql: string): string[] {
  return sql
    .split('--> statement-breakpoint')
    .map((s) => s.trim())
    .filter(Boolean)
}

export function migrate(sqlite: Database, migrations: EmbeddedMigration[] = EMBEDDED_MIGRATIONS, now = Date.now()): MigrationResult {
  sqlite.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    tag TEXT PRIMARY KEY NOT NULL,
    hash TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`)
  const applied: string[] = []
  sqlite.exec('PRAGMA foreign_keys = OFF')
  try {
    for (const m of migrations) {
      const hash = sha256Hex(m.sql)
      // IMMEDIATE takes the write lock up front, so two processes starting together apply each migration once.
      sqlite.exec('BEGIN IMMEDIATE')
      try {
        const row = sqlite.query('SELECT hash FROM schema_migrations WHERE tag = ?').get(m.tag) as { hash: string } | null
        if (row) {
          if (row.hash !== hash) throw new Error(`migration ${m.tag} was changed after it was applied (hash differs); restore it`)
          sqlite.exec('COMMIT')
          continue
        }
        for (const statement of splitStatements(m.sql)) sqlite.exec(statement)
        const violations = sqlite.query('PRAGMA foreign_key_check').all()
        if (violations.length)
          throw new Error(`migration ${m.tag} leaves ${violations.length} foreign key violation(s): ${JSON.stringify(violations.slice(0, 3))}`)
        sqlite.query('INSERT INTO schema_migrations (tag, hash, applied_at) VALUES (?, ?, ?)').run(m.tag, hash, now)
        sqlite.exec('COMMIT')
        applied.push(m.tag)
      } catch (err) {
        if (sqlite.inTransaction) sqlite.exec('ROLLBACK')
        throw err
      }
    }
  } finally {
    sqlite.exec('PRAGMA foreign_keys = ON')
  }
  const unknown = appliedTags(sqlite).filter((tag) => !migrations.some((m) => m.tag === tag))
  if (unknown.length) throw new Error(`database has migrations this build does not know (${unknown.join(', ')}); run a newer lnk`)
  return { applied, current: migrations.at(-1)?.tag ?? null }
}

/** The tags of the migrations applied to the database, in order; none when migrate() never ran on it. */
export function appliedTags(sqlite: Database): string[] {
  if (!sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get()) return []
  return (sqlite.query('SELECT tag FROM schema_migrations ORDER BY tag').all() as { tag: string }[]).map((r) => r.tag)
}
