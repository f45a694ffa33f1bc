#!/usr/bin/env bun
// The one entry point: a table of commands, each declaring its own flags (cli/command.ts). Every server
// setting is a flag of `serve` and `migrate`; `admin` takes four (ADMIN_SETTINGS). Exit codes: 0 ok, 1 error, 2 usage.
import { admin, adminSummary } from './cli/admin'
import { type Command, type CommandGroup, parseCommandLine, UsageError } from './cli/command'
import { listen } from './cli/listen'
import { openDatabase, prepareDataDir } from './db/client'
import { migrate as applyMigrations } from './db/migrate'
import { openPostgres } from './db/pg/connect'
import { migratePostgres } from './db/pg/migrate'
import { loadConfig, settingsHelp } from './platform/config'
import { openRuntime } from './runtime'
import { startServer } from './server'

const VERSION = '0.1.0'

const serve: Command = {
  help: `Usage: lnk serve [options]

Applies pending migrations, then serves the API (/v1), redirects, pages, /healthz, /readyz and /metrics
on one listener. SIGTERM or SIGINT stops it gracefully. Every option is also an environment variable:

${settingsHelp()}`,
  options: {},
  settings: 'all',
  positionals: 0,
  async run({ settings }) {
    const config = loadConfig(process.env, settings)
    const rt = await openRuntime(config, { clickWriter: 'thread' })
    const server = startServer(rt)
    return new Promise<number>((resolveExit) => {
      const stop = (signal: string) => {
        server.shutdown(signal).then(
          () => resolveExit(0),
          (err) => {
            rt.log.error('shutdown failed', { error: (err as Error).message })
            resolveExit(1)
          },
        )
      }
      // `on`, not `once`: a second signal must wait for the same graceful shutdown, not kill the process.
      process.on('SIGTERM', () => stop('SIGTERM'))
      process.on('SIGINT', () => stop('SIGINT'))
    })
  },
}

const migrate: Command = {
  help: `Usage: lnk migrate [--data-dir DIR | --database-url postgres://…]

Applies the migrations embedded in this executable to <data dir>/lnk.db, or to the PostgreSQL database of
--database-url (LNK_DATABASE_URL), and exits. On PostgreSQL an advisory lock makes nodes that start together
apply each migration once.`,
  options: {},
  settings: 'all',
  positionals: 0,
  async run({ settings }, out) {
    const config = loadConfig(process.env, settings)
    if (config.databaseUrl) {
      const sql = await openPostgres(config.databaseUrl, { max: 1 })
      try {
        const { applied, current } = await migratePostgres(sql)
        out(
          applied.length
            ? `Applied ${applied.length} PostgreSQL migration(s); schema is at ${current}.`
            : `Nothing to apply; PostgreSQL schema is at ${current}.`,
        )
      } finally {
        await sql.close()
      }
      return 0
    }
    const db = openDatabase(prepareDataDir(config.dataDir))
    try {
      const { applied, current } = applyMigrations(db.sqlite)
      out(applied.length ? `Applied ${applied.length} migration(s); schema is at ${current}.` : `Nothing to apply; schema is at ${current}.`)
    } finally {
      db.close()
    }
    return 0
  },
}

/** Every command, with the line `lnk --help` shows for it (continuation lines are indented there). */
const COMMANDS: Record<string, { summary: string; command: Command | CommandGroup }> = {
  serve: { summary: 'Migrate the database, then serve the API, redirects and pages (the default)', command: serve },
  migrate: { summary: 'Apply database migrations and exit', command: migrate },
  admin: {
    summary: adminSummary(100),
    command: admin,
  },
  listen: { summary: "Forward the workspace's events to an app on this machine (outbound only)", command: listen },
}

const MAIN_HELP = `lnk ${VERSION}: self-hosted link shortening in one executable.

Usage: lnk [command] [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(11)}${summary.replaceAll('\n', `\n${' '.repeat(13)}`)}`)
  .join('\n')}

Options:
  -h, --help     Show help for a command
  -v, --version  Print the version

Run 'lnk <command> --help' for a command's options.`

const stdout = (line: string) => process.stdout.write(line + '\n')

const lookup = <T>(table: Record<string, T>, name: string): T | undefined => (Object.hasOwn(table, name) ? table[name] : undefined)

async function invoke(command: Command, args: string[]): Promise<number> {
  const invocation = parseCommandLine(args, command)
  if (!invocation) return (stdout(command.help), 0)
  return command.run(invocation, stdout)
}

async function run(argv: string[]): Promise<number> {
  const [first, ...rest] = argv
  if (first === '-v' || first === '--version') return (stdout(VERSION), 0)
  if (first === '-h' || first === '--help' || first === 'help') return (stdout(MAIN_HELP), 0)
  // No command, or options first: serve.
  const [name, args] = first === undefined || first.startsWith('-') ? ['serve', argv] : [first, rest]
  // The help shown with a usage error: that of the deepest command named so far.
  let help = MAIN_HELP
  try {
    const entry = lookup(COMMANDS, name)?.command
    if (!entry) throw new UsageError(`unknown command "${name}"`)
    help = entry.help
    if (!('commands' in entry)) return await invoke(entry, args)
    const [sub, ...subArgs] = args
    if (sub === undefined) throw new UsageError(`missing ${name} command`)
    if (sub === '--help' || sub === '-h') return (stdout(entry.help), 0)
    const command = lookup(entry.commands, sub)
    if (!command) throw new UsageError(`unknown ${name} command "${sub}"`)
    help = command.help
    return await invoke(command, subArgs)
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`lnk: ${err.message}\n\n${help}\n`)
      return 2
    }
    // Bad settings (ConfigError), refusals (AppError) and anything else: one line, exit 1.
    process.stderr.write(`lnk: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
}

if (import.meta.main) {
  const code = await run(process.argv.slice(2))
  await new Promise((settle) => setImmediate(settle)) // let Elysia's afterResponse hooks (request log lines) of the last answers run
  process.exit(code)
}

export { run }
