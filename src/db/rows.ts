// Helpers for the plain row types the repo ports declare (modules/*/repo.ts). They import nothing, so a
// port's types never depend on the database engine behind it.

/** A row as it is inserted: columns that may hold null may be left out (they are stored as null). */
export type Insertable<Row> = Flat<
  { [K in keyof Row as null extends Row[K] ? never : K]: Row[K] } & { [K in keyof Row as null extends Row[K] ? K : never]?: Row[K] }
>

type Flat<T> = { [K in keyof T]: T[K] } & {}

/**
 * A port as a PostgreSQL repo implements it: every `fooSync` method (which SQLite answers without awaiting,
 * for the redirect path) becomes `foo` returning a Promise, and is dropped where the port already has an
 * async `foo`. A network database cannot answer synchronously; its callers await on a cache miss.
 */
export type AsyncPort<T> = {
  [K in keyof T as K extends `${infer Base}Sync` ? (Base extends keyof T ? never : Base) : K]: K extends `${string}Sync`
    ? T[K] extends (...args: infer A) => infer R
      ? (...args: A) => Promise<R>
      : T[K]
    : T[K]
}

type SyncKeys<T> = { [K in keyof T]: K extends `${string}Sync` ? K : never }[keyof T]

/**
 * A port as the services use it on either engine: the async methods always, the `fooSync` ones only where
 * the engine answers without awaiting (SQLite). A caller on the redirect path takes `fooSync` when present
 * and awaits `foo` otherwise.
 */
export type Port<T> = AsyncPort<T> & Partial<Pick<T, SyncKeys<T>>>

/** A SQLite repo as a Port: each `fooSync` is also offered as an async `foo` (unless it has one). */
export function withAsync<T extends object>(repo: T): T & AsyncPort<T> {
  const out: Record<string, unknown> = { ...(repo as Record<string, unknown>) }
  for (const [key, value] of Object.entries(repo)) {
    if (!key.endsWith('Sync') || typeof value !== 'function') continue
    const base = key.slice(0, -4)
    if (!(base in repo)) out[base] = async (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(repo, args)
  }
  return out as T & AsyncPort<T>
}
