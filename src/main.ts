#!/usr/bin/env bun
// The one entry point: `lnk [serve]`, `lnk migrate`, `lnk admin …`. Exit codes: 0 ok, 1 error, 2 usage.
import { parseArgs } from 'node:util'
import { ADMIN_COMMANDS, ADMIN_HELP, runAdmin } from './cli/admin'
import { UsageError } from './cli/command'
import { ConfigError, loadConfig, settingFlags, settingsHelp } from './platform/config'
import { openDatabase, prepareDataDir } from './db/client'
import { migrate } from './db/migrate'
import { AppError } from './platform/errors'
import { createLogger } from './platform/log'
import { createRuntime } from './runtime'
import { startServer } from './server'

const VERSION = '0.1.0'

const MAIN_HELP = `lnk ${VERSION}: self-hosted link shortening in one executable.

Usage: lnk [command] [options]

Commands:
  serve      Migrate the database, then serve the API, redirects and pages (the default)
  migrate    Apply database migrations and exit
  admin      bootstrap | create-key | list-keys | update-key | pause-key | resume-key | rotate-key |
             revoke-key | create-workspace | add-member | backup (see 'lnk admin --help')

Options:
  -h, --help     Show help for a command
  -v, --version  Print the version

Run 'lnk <command> --help' for a command's options.`

const SERVE_HELP = `Usage: lnk serve [options]

Applies pending migrations, then serves the API (/v1), redirects, pages, /healthz, /readyz and /metrics
on one listener. SIGTERM or SIGINT stops it gracefully. Every option is also an environment variable:

${settingsHelp()}`

const MIGRATE_HELP = `Usage: lnk migrate [--data-dir DIR]

Applies the migrations embedded in this executable to <data dir>/lnk.db and exits.`

const stdout = (line: string) => process.stdout.write(line + '\n')

function parse(args: string[], options: Record<string, { type: 'string' | 'boolean' }>, positionals: number) {
  let parsed
  try {
    parsed = parseArgs({ args, options: { ...settingFlags(), ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]!)
  }
  if (parsed.values.help) return { help: true as const, values: parsed.values, positionals: parsed.positionals }
  if (parsed.positionals.length !== positionals) {
    throw new UsageError(positionals === 0 ? `unexpected argument "${parsed.positionals[0]}"` : parsed.positionals.length < positionals ? 'missing argument' : `unexpected argument "${parsed.positionals[positionals]}"`)
  }
  return { help: false as const, values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals }
}

async function serve(args: string[]) {
  const { help, values } = parse(args, {}, 0)
  if (help) return stdout(SERVE_HELP), 0
  const config = loadConfig(process.env, values)
  const rt = createRuntime(config, { clickWriter: 'thread' })
  const server = startServer(rt)
  const done = new Promise<number>((resolveExit) => {
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
  return done
}

async function run(argv: string[]): Promise<number> {
  const [first, ...rest] = argv
  if (first === '-v' || first === '--version') return stdout(VERSION), 0
  if (first === '-h' || first === '--help' || first === 'help') return stdout(MAIN_HELP), 0
  const usage = { help: MAIN_HELP }
  if (first === undefined || first === 'serve' || first.startsWith('-')) usage.help = SERVE_HELP
  try {
    if (first === undefined || first === 'serve') return await serve(first === undefined ? [] : rest)
    if (first.startsWith('-')) return await serve(argv)
    if (first === 'migrate') {
      usage.help = MIGRATE_HELP
      const { help, values } = parse(rest, {}, 0)
      if (help) return stdout(MIGRATE_HELP), 0
      const config = loadConfig(process.env, values)
      const db = openDatabase(prepareDataDir(config.dataDir))
      try {
        const { applied, current } = migrate(db.sqlite)
        stdout(applied.length ? `Applied ${applied.length} migration(s); schema is at ${current}.` : `Nothing to apply; schema is at ${current}.`)
      } finally {
        db.close()
      }
      return 0
    }
    if (first === 'admin') {
      usage.help = ADMIN_HELP
      const [sub, ...subArgs] = rest
      if (sub === undefined) throw new UsageError('missing admin command')
      if (sub === '--help' || sub === '-h') return stdout(ADMIN_HELP), 0
      const spec = ADMIN_COMMANDS[sub]
      if (!spec) throw new UsageError(`unknown admin command "${sub}"`)
      usage.help = spec.help
      const { help, values, positionals } = parse(subArgs, spec.options, spec.positionals)
      if (help) return stdout(spec.help), 0
      const config = loadConfig(process.env, values)
      // Logs go to stderr so --json output on stdout stays one parseable object.
      const log = createLogger(config.logLevel === 'debug' ? 'debug' : 'warn', (line) => process.stderr.write(line + '\n'))
      return await runAdmin(sub, { values, positionals, config, log, out: stdout })
    }
    throw new UsageError(`unknown command "${first}"`)
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`lnk: ${err.message}\n\n${usage.help}\n`)
      return 2
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`lnk: ${err.message}\n`)
      return 1
    }
    if (err instanceof AppError) {
      process.stderr.write(`lnk: ${err.message}\n`)
      return 1
    }
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
