// Statements of the hottest paths (the redirect's link read on a cache miss, bulk link inserts, the webhook
// fan-out), built with drizzle's query builder like every other statement and run straight on the driver.
// A drizzle prepared query fills its placeholders and maps each row generically on every call, and binds
// constants and LIMITs as parameters, which SQLite answers by planning the statement again at every run
// when they decide the plan (a partial index's condition, a LIMIT): together several times the cost of
// the statement itself. Here constants are written into the statement once, placeholders are bound by
// name, and rows come back as the driver gives them (keyed by column name, values not decoded).
import { is, Param, Placeholder, type SQLWrapper } from 'drizzle-orm'
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core'
import type { Db } from './client'

const dialect = new SQLiteSyncDialect()

type Row = Record<string, unknown>

export interface HotStatement {
  /** The statement's text, constants written in. */
  readonly sql: string
  /** Answers how many rows it changed. */
  run(values?: Row): number
  get(values?: Row): Row | undefined
  all(values?: Row): Row[]
}

/**
 * `query` names its values with sql.placeholder(name); a column's placeholder is encoded like the column
 * (JSON, booleans), one inside a sql`` fragment is bound as it comes. A missing value binds null.
 */
export function hotStatement(db: Db, query: SQLWrapper): HotStatement {
  const { sql, params } = dialect.sqlToQuery(query.getSQL().inlineParams())
  const slots = params.map((p) => {
    if (is(p, Placeholder)) return { name: p.name, encode: null }
    if (is(p, Param) && is(p.value, Placeholder)) return { name: p.value.name, encode: (v: unknown) => p.encoder.mapToDriverValue(v) }
    throw new Error(`hotStatement: a value that is not a placeholder was left in: ${sql}`)
  })
  const stmt = db.$client.prepare<Row, never[]>(sql)
  const bind = (values: Row = {}) => {
    const bound = new Array<unknown>(slots.length)
    for (let i = 0; i < slots.length; i++) {
      const { name, encode } = slots[i]!
      const v = values[name]
      bound[i] = v === null || v === undefined ? null : encode ? encode(v) : v
    }
    return bound as never[]
  }
  return {
    sql,
    run: (values) => stmt.run(...bind(values)).changes,
    get: (values) => stmt.get(...bind(values)) ?? undefined,
    all: (values) => stmt.all(...bind(values)),
  }
}
