// PostgreSQL's schema is SQLite's, table for table: the generated PostgreSQL tables are what the generator
// derives from the SQLite schema today, both engines' migration folders are in step with their schema
// files, and the two migrated databases, read back from their own catalogues, have the same tables, columns
// (with mapped types and nullability) and indexes (columns, uniqueness, partial conditions). The PostgreSQL
// migrator applies each migration once when two nodes start together.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateDrizzleJson, generateMigration, generateSQLiteDrizzleJson, generateSQLiteMigration } from 'drizzle-kit/api'
import { migrate } from '../../src/db/migrate'
import { migratePostgres } from '../../src/db/pg/migrate'
import { EMBEDDED_PG_MIGRATIONS } from '../../src/db/pg/migrations.generated'
import * as pgSchema from '../../src/db/pg/schema.generated'
import * as sqliteSchema from '../../src/db/schema'
import { PG_SCHEMA_FILE, renderPgSchema } from '../../scripts/generate-pg-schema'
import { rmSync } from 'node:fs'
import { ROOT, tempDir } from '../helpers'
import { createTestDatabase, type TestDatabase } from '../setup/postgres'

const lastSnapshot = (folder: string) => {
  const dir = join(ROOT, folder, 'meta')
  const last = readdirSync(dir)
    .filter((f) => f.endsWith('_snapshot.json'))
    .sort()
    .at(-1)!
  return JSON.parse(readFileSync(join(dir, last), 'utf8'))
}

describe('one table list, two engines', () => {
  test('the committed PostgreSQL tables are what scripts/generate-pg-schema.ts derives from the SQLite schema', () => {
    expect(readFileSync(PG_SCHEMA_FILE, 'utf8') === renderPgSchema()).toBe(true)
  })

  test('each migration folder is in step with its schema (run `bun run db:generate` after a schema change)', async () => {
    const pgPrev = lastSnapshot('drizzle-pg')
    const pgNow = generateDrizzleJson(pgSchema, pgPrev.id)
    expect(await generateMigration(pgPrev, pgNow)).toEqual([])
    const litePrev = lastSnapshot('drizzle')
    const liteNow = await generateSQLiteDrizzleJson(sqliteSchema, litePrev.id)
    expect(await generateSQLiteMigration(litePrev, liteNow)).toEqual([])
  })
})

interface Shape {
  tables: Record<
    string,
    { columns: Record<string, { type: string; notNull: boolean }>; indexes: Record<string, { columns: string[]; unique: boolean; partial: boolean }> }
  >
}

/** SQLite's types named as the PostgreSQL migration maps them. */
const SQLITE_TO_PG: Record<string, string> = { text: 'text', integer: 'bigint', real: 'double precision', blob: 'bytea' }

function sqliteShape(db: Database, booleans: Set<string>, jsons: Set<string>): Shape {
  const shape: Shape = { tables: {} }
  const tables = db
    .query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name`)
    .all() as { name: string }[]
  for (const { name } of tables) {
    const columns: Shape['tables'][string]['columns'] = {}
    for (const c of db.query(`SELECT name, type, "notnull" AS nn, pk FROM pragma_table_info(?)`).all(name) as {
      name: string
      type: string
      nn: number
      pk: number
    }[]) {
      const key = `${name}.${c.name}`
      const type = booleans.has(key) ? 'boolean' : jsons.has(key) ? 'jsonb' : (SQLITE_TO_PG[c.type.toLowerCase()] ?? c.type)
      columns[c.name] = { type, notNull: c.nn === 1 || c.pk > 0 }
    }
    const indexes: Shape['tables'][string]['indexes'] = {}
    for (const i of db.query(`SELECT name, "unique" AS u, origin, partial FROM pragma_index_list(?)`).all(name) as {
      name: string
      u: number
      origin: string
      partial: number
    }[]) {
      // Primary keys are compared as columns' NOT NULL plus the pk constraint below, not by their index name.
      if (i.origin === 'pk') continue
      const cols = (db.query(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`).all(i.name) as { name: string }[]).map((r) => r.name)
      indexes[i.name] = { columns: cols, unique: i.u === 1, partial: i.partial === 1 }
    }
    shape.tables[name] = { columns, indexes }
  }
  return shape
}

async function pgShape(sql: SQL): Promise<Shape> {
  const shape: Shape = { tables: {} }
  const columns: { table_name: string; column_name: string; data_type: string; is_nullable: string }[] = await sql`
    SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name <> 'schema_migrations' ORDER BY table_name, ordinal_position`
  for (const c of columns) {
    shape.tables[c.table_name] ??= { columns: {}, indexes: {} }
    shape.tables[c.table_name]!.columns[c.column_name] = { type: c.data_type, notNull: c.is_nullable === 'NO' }
  }
  const indexes: { table: string; name: string; unique: boolean; primary: boolean; partial: boolean; columns: string[] }[] = await sql`
    SELECT t.relname AS table, i.relname AS name, ix.indisunique AS unique, ix.indisprimary AS primary, ix.indpred IS NOT NULL AS partial,
      array(SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY k(attnum, n) JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns
    FROM pg_index ix JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_namespace ns ON ns.oid = t.relnamespace
    WHERE ns.nspname = 'public' AND t.relname <> 'schema_migrations'`
  for (const i of indexes) {
    if (i.primary) continue
    shape.tables[i.table]!.indexes[i.name] = { columns: [...i.columns], unique: i.unique, partial: i.partial }
  }
  return shape
}

describe('the migrated databases', () => {
  let pg: TestDatabase
  let sql: SQL
  beforeAll(async () => {
    pg = await createTestDatabase()
    sql = new SQL(pg.url, { max: 4 })
  })
  afterAll(async () => {
    await sql.close()
    await pg.drop()
  })

  test('two nodes starting together apply each PostgreSQL migration exactly once', async () => {
    const [a, b] = await Promise.all([migratePostgres(sql), migratePostgres(new SQL(pg.url, { max: 1 }))])
    expect([...a.applied, ...b.applied].sort()).toEqual(EMBEDDED_PG_MIGRATIONS.map((m) => m.tag).sort())
    const rows: { tag: string }[] = await sql`SELECT tag FROM schema_migrations ORDER BY tag`
    expect(rows.map((r) => r.tag)).toEqual(EMBEDDED_PG_MIGRATIONS.map((m) => m.tag))
    expect((await migratePostgres(sql)).applied).toEqual([])
  })

  test('a changed migration stops start-up', async () => {
    const changed = EMBEDDED_PG_MIGRATIONS.map((m, i) => (i === 0 ? { ...m, sql: `${m.sql}\n-- edited` } : m))
    await expect(migratePostgres(sql, changed)).rejects.toThrow(/was changed after it was applied/)
  })

  test('same tables, columns, types, nullability and indexes on both engines', async () => {
    const dir = tempDir()
    const lite = new Database(join(dir, 'lnk.db'), { create: true })
    try {
      migrate(lite)
      const pgNow = await pgShape(sql)
      // Booleans and JSON are integers and text to SQLite: name them from the PostgreSQL side's typed columns.
      const booleans = new Set<string>()
      const jsons = new Set<string>()
      for (const [table, t] of Object.entries(pgNow.tables))
        for (const [column, c] of Object.entries(t.columns)) {
          if (c.type === 'boolean') booleans.add(`${table}.${column}`)
          if (c.type === 'jsonb') jsons.add(`${table}.${column}`)
        }
      const liteNow = sqliteShape(lite, booleans, jsons)
      expect(Object.keys(pgNow.tables).sort()).toEqual(Object.keys(liteNow.tables).sort())
      expect(Object.keys(pgNow.tables).length).toBeGreaterThan(30)
      for (const table of Object.keys(liteNow.tables)) {
        expect({ table, ...pgNow.tables[table] }).toEqual({ table, ...liteNow.tables[table]! })
      }
      // Only booleans and JSON were named from the PostgreSQL side: SQLite must hold them as integer and text.
      for (const key of booleans) {
        const [table, column] = key.split('.')
        expect((lite.query(`SELECT type FROM pragma_table_info(?) WHERE name = ?`).get(table!, column!) as { type: string }).type.toLowerCase()).toBe('integer')
      }
      for (const key of jsons) {
        const [table, column] = key.split('.')
        expect((lite.query(`SELECT type FROM pragma_table_info(?) WHERE name = ?`).get(table!, column!) as { type: string }).type.toLowerCase()).toBe('text')
      }
    } finally {
      lite.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
