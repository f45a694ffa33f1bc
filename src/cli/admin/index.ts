// `lnk admin …`: bootstrap, keys, custom domains, backups and exports/imports between engines from the command
// line, through the same services as HTTP. One file per command; this is their table, and 'lnk admin --help'
// and the line of 'lnk --help' are made from it.
import { loadConfig } from '../../platform/config'
import { createLogger } from '../../platform/log'
import type { Command, CommandGroup } from '../command'
import { addDomain } from './add-domain'
import { addMember } from './add-member'
import { backup } from './backup'
import { bootstrap } from './bootstrap'
import { createKey } from './create-key'
import { createWorkspace } from './create-workspace'
import { exportData } from './export'
import { importData } from './import'
import { listDomains } from './list-domains'
import { listKeys } from './list-keys'
import { pauseKey } from './pause-key'
import { resumeKey } from './resume-key'
import { revokeKey } from './revoke-key'
import { rotateKey } from './rotate-key'
import { type AdminCommand, wrap } from './shared'
import { updateKey } from './update-key'
import { verifyDomain } from './verify-domain'

/** In the order 'lnk admin --help' lists them. */
const COMMANDS: readonly AdminCommand[] = [
  bootstrap,
  createKey,
  listKeys,
  revokeKey,
  pauseKey,
  resumeKey,
  rotateKey,
  updateKey,
  createWorkspace,
  addMember,
  addDomain,
  verifyDomain,
  listDomains,
  backup,
  exportData,
  importData,
]

/** The server settings admin commands read: which database (either engine), the origin their examples show, how much to log. */
const ADMIN_SETTINGS = ['data-dir', 'database-url', 'base-url', 'log-level']

const WIDTH = 120

const helpOf = (c: AdminCommand) => `${wrap(`Usage: lnk admin ${c.name}`, c.usage, WIDTH)}\n\n${c.details}`

const ADMIN_HELP = `Usage: lnk admin <command> [options]

Commands:
${COMMANDS.map((c) => `${wrap(`  ${c.name}`, c.usage, WIDTH)}\n      ${c.summary}`).join('\n')}

Every command also takes --data-dir (LNK_DATA_DIR, default ./data) or --database-url (LNK_DATABASE_URL, a
PostgreSQL database), --base-url (LNK_BASE_URL, the origin shown in examples) and --log-level (LNK_LOG_LEVEL).
Run 'lnk admin <command> --help' for details.`

/** The command as main.ts runs it: the settings read, a logger, then the command's own work. */
function asCommand(c: AdminCommand): Command {
  return {
    help: helpOf(c),
    options: c.options,
    positionals: c.positionals,
    settings: ADMIN_SETTINGS,
    async run({ values, positionals, settings }, out) {
      const config = loadConfig(process.env, settings)
      // Logs go to stderr so --json output on stdout stays one parseable object.
      const log = createLogger(config.logLevel === 'debug' ? 'debug' : 'warn', (line) => process.stderr.write(line + '\n'))
      return c.run({ values, positionals, config, log, out })
    },
  }
}

export const admin: CommandGroup = {
  help: ADMIN_HELP,
  commands: Object.fromEntries(COMMANDS.map((c) => [c.name, asCommand(c)])),
}

/** The names of the commands for the line of 'lnk --help', in lines of at most `width` columns. */
export function adminSummary(width: number): string {
  const names = `${COMMANDS.map((c) => c.name).join(' | ')} (see 'lnk admin --help')`
  return wrap('', names, width + 1)
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
}
