// What every service, route, job and command receives: the database, configuration, clock and logger.
import type { Clock } from './clock'
import type { Config } from './config'
import type { DbHandle } from './db/client'
import type { Logger } from './log'

export interface Deps {
  config: Config
  db: DbHandle
  clock: Clock
  log: Logger
}
