// What a command of `lnk` declares: its own flags, the server settings it also takes as flags (none unless it
// says so, so a flag never borrows the server's meaning by accident), its positional arguments, its help and
// what it does. main.ts holds the table of commands.
import { parseArgs } from 'node:util'
import { type Config, settingFlags } from '../platform/config'
import type { Logger } from '../platform/log'

/** Wrong words on the command line: exit 2 with a short help. */
export class UsageError extends Error {}

/** parseArgs' option table: `short` is a one-letter alias, `multiple` makes a flag repeatable (a list). */
export type Options = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>
export type Values = Record<string, string | boolean | string[] | boolean[] | undefined>

/** A command line as its command receives it. */
export interface Invocation {
  /** The command's own flags. */
  values: Values
  positionals: string[]
  /** The server settings given as flags (for loadConfig), only those the command accepts; never repeatable. */
  settings: Record<string, string | boolean | undefined>
}

export interface Command {
  help: string
  options: Options
  /** Settings of platform/config.ts accepted as flags: all of them, or those named. */
  settings?: 'all' | readonly string[]
  positionals: number
  run(invocation: Invocation, out: (line: string) => void): Promise<number>
}

/** A command made of subcommands (`lnk admin create-key …`), each with its own flags. */
export interface CommandGroup {
  help: string
  commands: Record<string, Command>
}

/** What an admin command's body receives. */
export interface CommandContext {
  values: Values
  positionals: string[]
  config: Config
  log: Logger
  out: (line: string) => void
}

function settingOptions(accepted: Command['settings'], own: Options): Options {
  if (!accepted) return {}
  const all = settingFlags()
  const names = accepted === 'all' ? Object.keys(all) : accepted
  const table: Options = {}
  for (const name of names) {
    // Programming errors, not usage errors: caught by the CLI tests.
    if (!Object.hasOwn(all, name)) throw new Error(`"${name}" is not a setting`)
    if (Object.hasOwn(own, name)) throw new Error(`--${name} is both a setting and a flag of the command`)
    table[name] = all[name]!
  }
  return table
}

/** The command's flags and arguments, or null when --help was asked for. */
export function parseCommandLine(args: string[], command: Pick<Command, 'options' | 'settings' | 'positionals'>): Invocation | null {
  const settings = settingOptions(command.settings, command.options)
  let parsed
  try {
    parsed = parseArgs({ args, options: { ...settings, ...command.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]!)
  }
  if (parsed.values.help) return null
  const { positionals } = parsed
  const want = command.positionals
  if (positionals.length !== want) {
    throw new UsageError(
      want === 0 ? `unexpected argument "${positionals[0]}"` : positionals.length < want ? 'missing argument' : `unexpected argument "${positionals[want]}"`,
    )
  }
  const values: Values = {}
  const given: Invocation['settings'] = {}
  for (const [name, value] of Object.entries(parsed.values as Values)) {
    if (name === 'help') continue
    if (Object.hasOwn(settings, name)) given[name] = value as string | boolean | undefined
    else values[name] = value
  }
  return { values, positionals, settings: given }
}
