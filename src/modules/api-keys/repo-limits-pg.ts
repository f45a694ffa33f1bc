// The limits repo (repo-limits.ts) on a PostgreSQL pool, for redirect/gates.ts until it builds the repo on
// the store's engine like the rest (createLimitsRepo(engineOf(store))).
import { pgEngine } from '../../db/engine/pg'
import type { PgDb } from '../../db/pg/client'
import type { LimitsRepo } from './port-limits'
import { createLimitsRepo } from './repo-limits'

export const createLimitsRepoPg = (db: PgDb): LimitsRepo => createLimitsRepo(pgEngine(db))
