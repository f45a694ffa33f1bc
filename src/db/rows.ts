// Helpers for the plain row types the repo ports declare (modules/*/port.ts). They import nothing, so a
// port's types never depend on the database engine behind it.

/** A row as it is inserted: columns that may hold null may be left out (they are stored as null). */
export type Insertable<Row> = Flat<
  { [K in keyof Row as null extends Row[K] ? never : K]: Row[K] } & { [K in keyof Row as null extends Row[K] ? K : never]?: Row[K] }
>

type Flat<T> = { [K in keyof T]: T[K] } & {}
