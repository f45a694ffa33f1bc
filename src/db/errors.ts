// What the database says when a write breaks a rule, in terms callers can use on any engine: callers name a
// unique index of the schema, never the engine's wording.
import { isTable, tableConfig } from './columns'
import * as schema from './schema'

/** Unique index name -> SQLite's spelling of its columns in a violation message ("links.domain, links.slug"). */
const UNIQUE_COLUMNS = new Map<string, string>()
for (const table of Object.values(schema)) {
  if (!isTable(table)) continue
  const config = tableConfig(table)
  for (const index of config.indexes) {
    if (!index.config.unique) continue
    const columns = index.config.columns.map((c) => `${config.name}.${'name' in c ? c.name : String(c)}`)
    UNIQUE_COLUMNS.set(index.config.name, columns.join(', '))
  }
}

const UNIQUE_CODES = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY'])

/**
 * Whether `err` (or its cause: drizzle may wrap the driver's error) is a unique or primary-key violation;
 * with `constraint`, one of that unique index (its name in db/schema).
 */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const columns = constraint === undefined ? undefined : UNIQUE_COLUMNS.get(constraint)
  if (constraint !== undefined && columns === undefined) throw new Error(`no unique index "${constraint}" in the schema`)
  for (let e = err; e instanceof Error; e = e.cause) {
    // PostgreSQL (Bun's client) names the index itself.
    const pg = e as { errno?: unknown; constraint?: unknown }
    if (pg.errno === '23505') return constraint === undefined || pg.constraint === constraint
    const code = (e as { code?: unknown }).code
    if (typeof code !== 'string' || !UNIQUE_CODES.has(code)) continue
    // SQLite names the columns, not the index: "UNIQUE constraint failed: links.domain, links.slug".
    return columns === undefined || e.message.endsWith(`: ${columns}`)
  }
  return false
}
