// What every service, route, job and command receives: configuration, clock and logger (data comes through
// each area's repo).
import type { Clock } from './platform/clock'
import type { Config } from './platform/config'
import type { Logger } from './platform/log'

export interface Deps {
  config: Config
  clock: Clock
  log: Logger
}
