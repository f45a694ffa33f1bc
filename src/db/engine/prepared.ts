// What both engines' prepared statements (Engine.prepare) share: the statement's text compiled once from a
// drizzle query, its placeholders bound by name at each run, and its rows decoded as drizzle decodes them.
// Drizzle's own prepared query does the same generically at every call, and binds constants and LIMITs as
// parameters; here constants are written into the text once (SQLite plans a statement again at every run
// when a bound value decides the plan: a partial index's condition, a LIMIT), and each row is decoded by a
// list made once.
import { Column, is, Param, Placeholder, SQL, type SQLWrapper } from 'drizzle-orm'

type Values = Record<string, unknown>

/** A value's place in the text: its placeholder's name and the column's encoding, if it is a column's. */
interface Slot {
  name: string
  encoder: { mapToDriverValue(v: unknown): unknown } | null
}

/** A field of the rows answered: its key and how its driver value becomes the value drizzle answers. */
interface Field {
  key: string
  decode: ((v: unknown) => unknown) | null
}

export interface Compiled {
  /** The statement's text, constants written in, placeholders in the engine's form (? or $n). */
  readonly text: string
  readonly slots: readonly Slot[]
  /** The fields of the rows it answers (a select, or a statement with RETURNING), in the text's order. */
  readonly fields: readonly Field[] | null
}

type Dialect = { sqlToQuery(sql: SQL): { sql: string; params: unknown[] } }

// Kept off drizzle's typings, which mark it internal: what sql``.mapWith() set.
const sqlDecoder = (s: SQL) => (s as unknown as { decoder: { mapFromDriverValue(v: unknown): unknown } }).decoder

function decoderOf(field: unknown): Field['decode'] {
  if (is(field, Column)) return (v) => field.mapFromDriverValue(v)
  if (is(field, SQL)) return (v) => sqlDecoder(field).mapFromDriverValue(v)
  if (is(field, SQL.Aliased)) return (v) => sqlDecoder(field.sql).mapFromDriverValue(v)
  throw new Error('a prepared statement answers flat rows: a field is neither a column nor SQL')
}

/** The fields of `query`'s rows: RETURNING's, or a select's (drizzle keeps both in its config). */
function fieldsOf(query: SQLWrapper): Field[] | null {
  const config = (query as unknown as { config?: { returning?: { path: string[]; field: unknown }[]; fields?: Record<string, unknown> } }).config
  if (config?.returning) return config.returning.map(({ path, field }) => ({ key: path.join('.'), decode: decoderOf(field) }))
  if (config?.fields && !('set' in config) && !('values' in config))
    return Object.entries(config.fields).map(([key, field]) => ({ key, decode: decoderOf(field) }))
  return null
}

/**
 * `query` compiled by `dialect`. It names its values with sql.placeholder(name): a column's placeholder is
 * encoded like the column (JSON, booleans), one inside a sql`` fragment is bound as it comes.
 */
export function compile(dialect: Dialect, query: SQLWrapper): Compiled {
  const { sql, params } = dialect.sqlToQuery(query.getSQL().inlineParams())
  const slots = params.map((p): Slot => {
    if (is(p, Placeholder)) return { name: p.name, encoder: null }
    if (is(p, Param) && is(p.value, Placeholder)) return { name: p.value.name, encoder: p.encoder }
    throw new Error(`a prepared statement holds a value that is not a placeholder: ${sql}`)
  })
  return { text: sql, slots, fields: fieldsOf(query) }
}

/** The statement's parameters for `values`, in order. A missing value binds null. */
export function bind(slots: readonly Slot[], values: Values = {}): unknown[] {
  const bound = new Array<unknown>(slots.length)
  for (let i = 0; i < slots.length; i++) {
    const { name, encoder } = slots[i]!
    const v = values[name]
    bound[i] = v === null || v === undefined ? null : encoder ? encoder.mapToDriverValue(v) : v
  }
  return bound
}

/** A row the driver answered as an array, in `fields`' order, as drizzle would answer it. */
export function decode(fields: readonly Field[], raw: readonly unknown[]): Values {
  const row: Values = {}
  for (let i = 0; i < fields.length; i++) {
    const { key, decode } = fields[i]!
    const v = raw[i]
    row[key] = v === null || v === undefined ? null : decode ? decode(v) : v
  }
  return row
}
