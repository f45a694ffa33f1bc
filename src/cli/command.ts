import type { Config } from '../platform/config'
import type { Logger } from '../platform/log'

/** Wrong words on the command line: exit 2 with a short help. */
export class UsageError extends Error {}

export interface CommandContext {
  values: Record<string, string | boolean | undefined>
  positionals: string[]
  config: Config
  log: Logger
  out: (line: string) => void
}
