// Writes src/db/pg/schema.generated.ts: the PostgreSQL tables of lnk, derived from the SQLite schema in
// src/db/schema, so there is one table list and the two engines cannot drift. Types map one-to-one:
// text → text, integer (times are epoch ms, counters) → bigint, boolean → boolean, JSON → jsonb, real →
// double precision, blob → bytea; primary keys, foreign keys, unique and partial indexes keep their names.
// test/db/pg-schema.test.ts fails when the committed file differs from what this writes.
//
// Usage: bun run scripts/generate-pg-schema.ts   (then `bun run db:generate:pg` for the migration)
import { getTableColumns, is, SQL } from 'drizzle-orm'
import { getTableConfig, SQLiteSyncDialect, SQLiteTable, type AnySQLiteColumn } from 'drizzle-orm/sqlite-core'
import { join } from 'node:path'
import * as schema from '../src/db/schema'

export const PG_SCHEMA_FILE = join(import.meta.dir, '../src/db/pg/schema.generated.ts')

const dialect = new SQLiteSyncDialect()

interface TableInfo {
  exportName: string
  table: SQLiteTable
  keys: Map<AnySQLiteColumn, string>
}

function pgColumn(column: AnySQLiteColumn, key: string): string {
  const name = JSON.stringify(column.name)
  let builder: string
  switch (column.columnType) {
    case 'SQLiteText': {
      const values = (column as { enumValues?: string[] }).enumValues
      builder = values?.length ? `text(${name}, { enum: ${JSON.stringify(values)} })` : `text(${name})`
      break
    }
    case 'SQLiteBoolean':
      builder = `boolean(${name})`
      break
    case 'SQLiteInteger':
    case 'SQLiteTimestamp':
      builder = `bigint(${name}, { mode: 'number' })`
      break
    case 'SQLiteReal':
      builder = `doublePrecision(${name})`
      break
    case 'SQLiteBlobBuffer':
      builder = `bytea(${name})`
      break
    case 'SQLiteCustomColumn':
      // The only custom type of the SQLite schema is columns.ts's json (text holding JSON).
      builder = `jsonb(${name})`
      break
    default:
      throw new Error(`column ${column.name} (${key}) has a type this generator does not map: ${column.columnType}`)
  }
  if (column.primary) builder += '.primaryKey()'
  if ((column as { autoIncrement?: boolean }).autoIncrement) builder += '.generatedByDefaultAsIdentity()'
  if (column.notNull && !column.primary) builder += '.notNull()'
  if (column.hasDefault && column.default !== undefined) builder += `.default(${JSON.stringify(column.default)})`
  return `  ${key}: ${builder},`
}

/** A partial index's condition in PostgreSQL's terms: boolean columns compare with true/false, not 1/0. */
function pgWhere(where: SQL, info: TableInfo, tableName: string): string {
  let text = dialect.sqlToQuery(where).sql
  for (const [column] of info.keys) {
    if (column.columnType !== 'SQLiteBoolean') continue
    const ref = `(?:"${tableName}"\\.)?"${column.name}"`
    text = text.replace(new RegExp(`${ref} = 1\\b`, 'g'), `"${column.name}" = true`).replace(new RegExp(`${ref} = 0\\b`, 'g'), `"${column.name}" = false`)
  }
  return text
}

function tableSource(info: TableInfo, byTable: Map<SQLiteTable, TableInfo>): string {
  const config = getTableConfig(info.table)
  const columns = Object.entries(getTableColumns(info.table)).map(([key, column]) => pgColumn(column as AnySQLiteColumn, key))
  const keyOf = (column: AnySQLiteColumn) => {
    const key = info.keys.get(column)
    if (!key) throw new Error(`${config.name}: column ${column.name} not found`)
    return `t.${key}`
  }
  const extras: string[] = []
  for (const pk of config.primaryKeys) extras.push(`primaryKey({ columns: [${pk.columns.map((c) => keyOf(c as AnySQLiteColumn)).join(', ')}] })`)
  for (const fk of config.foreignKeys) {
    const ref = fk.reference()
    const target = byTable.get(ref.foreignTable)
    if (!target) throw new Error(`${config.name}: a foreign key names a table outside the schema`)
    const foreign = ref.foreignColumns.map((c) => {
      const key = target.keys.get(c as AnySQLiteColumn)
      if (!key) throw new Error(`${config.name}: foreign column ${c.name} not found`)
      return `${target.exportName}.${key}`
    })
    let source = `foreignKey({ columns: [${ref.columns.map((c) => keyOf(c as AnySQLiteColumn)).join(', ')}], foreignColumns: [${foreign.join(', ')}] })`
    if (fk.onDelete && fk.onDelete !== 'no action') source += `.onDelete(${JSON.stringify(fk.onDelete)})`
    if (fk.onUpdate && fk.onUpdate !== 'no action') source += `.onUpdate(${JSON.stringify(fk.onUpdate)})`
    extras.push(source)
  }
  for (const index of config.indexes) {
    const c = index.config
    const on = c.columns.map((col) => {
      if (is(col, SQL)) throw new Error(`${config.name}: index ${c.name} on an expression is not mapped`)
      return keyOf(col as AnySQLiteColumn)
    })
    let source = `${c.unique ? 'uniqueIndex' : 'index'}(${JSON.stringify(c.name)}).on(${on.join(', ')})`
    if (c.where) source += `.where(sql.raw(${JSON.stringify(pgWhere(c.where, info, config.name))}))`
    extras.push(source)
  }
  const body = `{\n${columns.join('\n')}\n}`
  return extras.length
    ? `export const ${info.exportName} = pgTable(${JSON.stringify(config.name)}, ${body}, (t) => [\n  ${extras.join(',\n  ')},\n])\n`
    : `export const ${info.exportName} = pgTable(${JSON.stringify(config.name)}, ${body})\n`
}

export function renderPgSchema(): string {
  const infos: TableInfo[] = []
  for (const [exportName, value] of Object.entries(schema)) {
    if (!is(value, SQLiteTable)) continue
    const keys = new Map<AnySQLiteColumn, string>()
    for (const [key, column] of Object.entries(getTableColumns(value))) keys.set(column as AnySQLiteColumn, key)
    infos.push({ exportName, table: value, keys })
  }
  const byTable = new Map(infos.map((i) => [i.table, i]))
  // Referenced tables first, so each foreign key names a table defined above it.
  const ordered: TableInfo[] = []
  const visiting = new Set<TableInfo>()
  const visit = (info: TableInfo) => {
    if (ordered.includes(info) || visiting.has(info)) return
    visiting.add(info)
    for (const fk of getTableConfig(info.table).foreignKeys) {
      const target = byTable.get(fk.reference().foreignTable)
      if (target && target !== info) visit(target)
    }
    ordered.push(info)
  }
  for (const info of infos.sort((a, b) => a.exportName.localeCompare(b.exportName))) visit(info)
  return `// Generated by scripts/generate-pg-schema.ts from src/db/schema (the SQLite tables): do not edit.
import { sql } from 'drizzle-orm'
import { bigint, boolean, customType, doublePrecision, foreignKey, index, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' })
// Bun's client encodes an object or array parameter as JSON itself; drizzle's own jsonb would hand it a
// string, which PostgreSQL stores as a JSON string rather than the value. A number, string or boolean (a job's
// payload may be one) goes as its JSON text, read as JSON through text.
const jsonb = customType<{ data: unknown; driverData: unknown }>({
  dataType: () => 'jsonb',
  toDriver: (value) => (typeof value === 'object' ? value : sql\`\${JSON.stringify(value)}::text::jsonb\`),
})

${ordered.map((info) => tableSource(info, byTable)).join('\n')}`
}

if (import.meta.main) {
  await Bun.write(PG_SCHEMA_FILE, renderPgSchema())
  console.log(`wrote ${PG_SCHEMA_FILE}`)
}
