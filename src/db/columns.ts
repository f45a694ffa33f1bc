// Column helpers shared by every table. JSON goes through one helper (text holding JSON) and times are
// integer epoch milliseconds, so the schema maps one-to-one onto PostgreSQL later.
import { customType, integer } from 'drizzle-orm/sqlite-core'

export const json = <T>(name: string) =>
  customType<{ data: T; driverData: string }>({
    dataType: () => 'text',
    toDriver: (value) => JSON.stringify(value),
    fromDriver: (value) => JSON.parse(value) as T,
  })(name)

/** Epoch milliseconds. */
export const time = (name: string) => integer(name)

export const bool = (name: string) => integer(name, { mode: 'boolean' })
