import type { Db } from './client'

/** A drizzle transaction, or the database itself: what code that must join the caller's transaction takes. */
export type Tx = Db | Parameters<Parameters<Db['transaction']>[0]>[0]
