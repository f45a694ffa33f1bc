// What every service, route, job and command receives: the database, configuration, clock and logger.
import type { Clock } from './platform/clock'
import type { Config } from './platform/config'
import type { DbHandle } from './db/client'
import type { Logger } from './platform/log'

export interface Deps {
  config: Config
  db: DbHandle
  clock: Clock
  log: Logger
}
