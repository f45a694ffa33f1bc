// Applies the embedded PostgreSQL migrations (drizzle-pg/, generated from the same table list as SQLite's).
// Each migration is one transaction that first takes a transaction-level advisory lock, so nodes starting
// together queue behind each other and each migration is applied exactly once; the lock goes with the
// commit. Like SQLite's migrator, an applied migration whose text changed stops start-up.
import type { SQL } from 'bun'
import { sha256Hex } from '../../platform/random'
import type { EmbeddedMigration } from '../migrations.generated'
import { splitStatements, type MigrationResult } from '../migrate'
import { EMBEDDED_PG_MIGRATIONS } from './migrations.generated'

/** pg_advisory_xact_lock's key for migrations: any fixed 64-bit number no other lock of lnk uses. */
export const MIGRATION_LOCK = 0x6c6e6b5f6d6967n // "lnk_mig"

export async function migratePostgres(sql: SQL, migrations: EmbeddedMigration[] = EMBEDDED_PG_MIGRATIONS, now = Date.now()): Promise<MigrationResult> {
  const applied: string[] = []
  const ensureTable = `CREATE TABLE IF NOT EXISTS schema_migrations (tag text PRIMARY KEY NOT NULL, hash text NOT NULL, applied_at bigint NOT NULL)`
  for (const m of migrations) {
    const hash = sha256Hex(m.sql)
    const done = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
      // Under the lock: two nodes creating the table at once would collide in the catalogue.
      await tx.unsafe(ensureTable)
      const [row] = await tx`SELECT hash FROM schema_migrations WHERE tag = ${m.tag}`
      if (row) {
        if (row.hash !== hash) throw new Error(`migration ${m.tag} was changed after it was applied (hash differs); restore it`)
        return false
      }
      for (const statement of splitStatements(m.sql)) await tx.unsafe(statement)
      await tx`INSERT INTO schema_migrations (tag, hash, applied_at) VALUES (${m.tag}, ${hash}, ${now})`
      return true
    })
    if (done) applied.push(m.tag)
  }
  const known = new Set(migrations.map((m) => m.tag))
  const rows: { tag: string }[] = migrations.length ? await sql`SELECT tag FROM schema_migrations ORDER BY tag` : []
  const unknown = rows.map((r) => r.tag).filter((tag) => !known.has(tag))
  if (unknown.length) throw new Error(`database has migrations this build does not know (${unknown.join(', ')}); run a newer lnk`)
  return { applied, current: migrations.at(-1)?.tag ?? null }
}
