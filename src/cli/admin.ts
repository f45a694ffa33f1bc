// `lnk admin …`: bootstrap, keys and backups from the command line, through the same services as HTTP.
import { existsSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { iso } from '../platform/clock'
import { backupDatabase } from '../db/backup'
import { DB_FILE } from '../db/client'
import { AppError } from '../platform/errors'
import { pauseApiKey, resumeApiKey, revokeApiKey, rotateApiKey, updateApiKey, type KeySettings } from '../modules/api-keys/service'
import { parseGrants } from '../modules/identity/permissions'
import { addMember, bootstrap, createKey, createWorkspace, listKeys } from '../modules/identity/service'
import { createRuntime } from '../runtime'
import { loadConfig } from '../platform/config'
import { createLogger } from '../platform/log'
import { type Command, type CommandContext, type CommandGroup, type Invocation, UsageError } from './command'

const ADMIN_HELP = `Usage: lnk admin <command> [options]

Commands:
  bootstrap --email E [--name N] --workspace W [--json]
      Create a user, a workspace and a live key with every permission. The key is printed once.
  create-key --workspace ID_OR_SLUG --name N [--mode live|test] [--permissions a,b] [--json]
      Create another key for the workspace's owner. Permissions default to *.
  list-keys [--workspace ID_OR_SLUG] [--json]
      List keys (never their secrets).
  revoke-key ID [--reason R] [--json]
      Revoke a key for good.
  pause-key ID [--reason R] [--json] / resume-key ID [--json]
      Pause a key (403 key_paused) until it is resumed.
  rotate-key ID [--grace-hours N] [--json]
      New secret (printed once); the old one works for N hours (default 24; 0 stops it at once).
  update-key ID [--name N] [--permissions a,b] [--allowed-ips ip,cidr] [--scope-domains d] [--scope-tags t]
             [--schedule JSON] [--monthly-call-cap N] [--rate-limit N] [--expires-at ISO] [--json]
      Change a key's settings; "none" clears a setting.
  create-workspace --name N --owner EMAIL [--json]
      Create another workspace owned by an existing user.
  add-member --workspace ID_OR_SLUG --email E [--name N] [--role member|owner] [--json]
      Add a user (created if new) to a workspace; their keys can act in it with X-Workspace-Id.
  backup FILE [--json]
      Write a consistent copy of the database to FILE (safe while the server runs).

Every command also takes --data-dir (LNK_DATA_DIR, default ./data), --base-url (LNK_BASE_URL, the origin shown in
examples) and --log-level (LNK_LOG_LEVEL). Run 'lnk admin <command> --help' for details.`

const ADMIN_COMMANDS: Record<string, Pick<Command, 'help' | 'options' | 'positionals'>> = {
  bootstrap: {
    help: `Usage: lnk admin bootstrap --email E [--name N] --workspace W [--json]

Creates the user (or reuses one with that email), a workspace named W (slug derived from it), an owner
membership, and a live API key with every permission (*). The key is shown once: store it now.
With --json prints {"user":{…},"workspace":{…},"apiKey":{"id","key","keyPrefix","mode"}}.`,
    options: { email: { type: 'string' }, name: { type: 'string' }, workspace: { type: 'string' }, json: { type: 'boolean' } },
    positionals: 0,
  },
  'create-key': {
    help: `Usage: lnk admin create-key --workspace ID_OR_SLUG --name N [--mode live|test] [--permissions a,b] [--json]

Creates an API key for the workspace's owner. --mode test makes a sandbox key (lnk_test_…).
--permissions is a comma-separated list (links:read, links:write, analytics:read, domains:read,
domains:write, webhooks:read, webhooks:write, api_keys:read, api_keys:write, pages:read, pages:write,
automations:read, automations:write) or * for all (the default).
With --json prints {"id","key","keyPrefix","mode","permissions"}.`,
    options: { workspace: { type: 'string' }, name: { type: 'string' }, mode: { type: 'string' }, permissions: { type: 'string' }, json: { type: 'boolean' } },
    positionals: 0,
  },
  'list-keys': {
    help: `Usage: lnk admin list-keys [--workspace ID_OR_SLUG] [--json]

Lists API keys, newest last: id, prefix, mode, name, state and permissions. Secrets are never shown.
With --json prints an array of API key objects (the fields of GET /v1/api-keys).`,
    options: { workspace: { type: 'string' }, json: { type: 'boolean' } },
    positionals: 0,
  },
  'revoke-key': {
    help: `Usage: lnk admin revoke-key ID [--reason R] [--json]

Revokes the key: every request with it is refused with 401 from now on. This cannot be undone.`,
    options: { reason: { type: 'string' }, json: { type: 'boolean' } },
    positionals: 1,
  },
  'pause-key': {
    help: `Usage: lnk admin pause-key ID [--reason R] [--json]

Pauses the key: requests with it get 403 key_paused until 'lnk admin resume-key ID'.`,
    options: { reason: { type: 'string' }, json: { type: 'boolean' } },
    positionals: 1,
  },
  'resume-key': {
    help: `Usage: lnk admin resume-key ID [--json]

Resumes a paused key.`,
    options: { json: { type: 'boolean' } },
    positionals: 1,
  },
  'rotate-key': {
    help: `Usage: lnk admin rotate-key ID [--grace-hours N] [--json]

Gives the key a new secret, printed once. The old secret keeps working for N hours (default 24, at
most 720); 0 stops it at once. With --json prints the key object with the new secret in "key".`,
    options: { 'grace-hours': { type: 'string' }, json: { type: 'boolean' } },
    positionals: 1,
  },
  'update-key': {
    help: `Usage: lnk admin update-key ID [options] [--json]

Changes a key's settings (spec 2.7). Lists are comma-separated; "none" clears a setting.
  --name N                  a new name
  --permissions a,b         permission names or *
  --allowed-ips ip,cidr     IPv4/IPv6 addresses or CIDRs ("none": any address)
  --scope-domains d1,d2     scope filter: only links on these domains
  --scope-tags t1,t2        scope filter: only links carrying one of these tags
                            (give both to require both; "none" on both clears the scope)
  --schedule JSON           e.g. '{"timezone":"Europe/Berlin","days":[1,2,3,4,5],"startMinute":480,"endMinute":1080}'
  --monthly-call-cap N      calls per UTC month
  --rate-limit N            requests per minute (replaces the default 600)
  --expires-at ISO          e.g. 2027-01-01T00:00:00Z`,
    options: {
      name: { type: 'string' },
      permissions: { type: 'string' },
      'allowed-ips': { type: 'string' },
      'scope-domains': { type: 'string' },
      'scope-tags': { type: 'string' },
      schedule: { type: 'string' },
      'monthly-call-cap': { type: 'string' },
      'rate-limit': { type: 'string' },
      'expires-at': { type: 'string' },
      json: { type: 'boolean' },
    },
    positionals: 1,
  },
  'create-workspace': {
    help: `Usage: lnk admin create-workspace --name N --owner EMAIL [--json]

Creates a workspace (slug derived from N) owned by the existing user EMAIL. Keys of that user act in it
by sending X-Workspace-Id: <id or slug>. With --json prints the workspace object.`,
    options: { name: { type: 'string' }, owner: { type: 'string' }, json: { type: 'boolean' } },
    positionals: 0,
  },
  'add-member': {
    help: `Usage: lnk admin add-member --workspace ID_OR_SLUG --email E [--name N] [--role member|owner] [--json]

Adds the user E (created if there is none) to the workspace with the role (default member). Running it
again changes the role. With --json prints {"user","workspace","role"}.`,
    options: { workspace: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean' } },
    positionals: 0,
  },
  backup: {
    help: `Usage: lnk admin backup FILE [--json]

Writes a consistent copy of the database to FILE with VACUUM INTO. Safe while the server runs: readers
and writers carry on. FILE must not exist yet. Restore by stopping lnk and putting FILE in place of
<data dir>/lnk.db (remove lnk.db-wal and lnk.db-shm beside it).`,
    options: { json: { type: 'boolean' } },
    positionals: 1,
  },
}

/** The server settings admin commands read: which database, the origin their examples show, how much to log. */
const ADMIN_SETTINGS = ['data-dir', 'base-url', 'log-level']

export const admin: CommandGroup = {
  help: ADMIN_HELP,
  commands: Object.fromEntries(
    Object.entries(ADMIN_COMMANDS).map(([name, spec]): [string, Command] => [name, { ...spec, settings: ADMIN_SETTINGS, run: (invocation, out) => runFromCommandLine(name, invocation, out) }]),
  ),
}

async function runFromCommandLine(command: string, { values, positionals, settings }: Invocation, out: (line: string) => void): Promise<number> {
  const config = loadConfig(process.env, settings)
  // Logs go to stderr so --json output on stdout stays one parseable object.
  const log = createLogger(config.logLevel === 'debug' ? 'debug' : 'warn', (line) => process.stderr.write(line + '\n'))
  return runAdmin(command, { values, positionals, config, log, out })
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined)

function wholeNumber(flag: string, raw: unknown, min: number, max: number): number {
  const v = String(raw)
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}`)
  return Number(v)
}

const list = (raw: string) => raw.split(',').map((s) => s.trim()).filter(Boolean)

/** update-key's flags as the settings the API takes; "none" clears. */
function keySettingsFromFlags(values: Record<string, unknown>): KeySettings {
  const out: KeySettings = {}
  const none = (v: unknown) => v === 'none'
  if (str(values.name) !== undefined) out.name = str(values.name)
  if (str(values.permissions) !== undefined) {
    try {
      out.permissions = parseGrants(str(values.permissions)!)
    } catch (err) {
      throw new UsageError((err as Error).message)
    }
  }
  if (str(values['allowed-ips']) !== undefined) out.allowedIps = none(values['allowed-ips']) ? [] : list(str(values['allowed-ips'])!)
  const domains = str(values['scope-domains'])
  const tags = str(values['scope-tags'])
  if (domains !== undefined || tags !== undefined) {
    const d = domains && !none(domains) ? list(domains) : undefined
    const t = tags && !none(tags) ? list(tags) : undefined
    out.scopeFilters = d || t ? { ...(d ? { domains: d } : {}), ...(t ? { tags: t } : {}) } : null
  }
  if (str(values.schedule) !== undefined) {
    if (none(values.schedule)) out.schedule = null
    else {
      try {
        const s = JSON.parse(str(values.schedule)!)
        const ok = s && typeof s.timezone === 'string' && Array.isArray(s.days) && s.days.every((d: unknown) => Number.isInteger(d) && (d as number) >= 0 && (d as number) <= 6) && Number.isInteger(s.startMinute) && Number.isInteger(s.endMinute) && s.startMinute >= 0 && s.startMinute <= 1439 && s.endMinute >= 0 && s.endMinute <= 1440
        if (!ok) throw new Error('shape')
        out.schedule = { timezone: s.timezone, days: s.days, startMinute: s.startMinute, endMinute: s.endMinute }
      } catch {
        throw new UsageError('--schedule must be JSON like {"timezone":"Europe/Berlin","days":[1,2,3,4,5],"startMinute":480,"endMinute":1080}')
      }
    }
  }
  if (values['monthly-call-cap'] !== undefined) out.monthlyCallCap = none(values['monthly-call-cap']) ? null : wholeNumber('monthly-call-cap', values['monthly-call-cap'], 1, 1_000_000_000)
  if (values['rate-limit'] !== undefined) out.rateLimitOverride = none(values['rate-limit']) ? null : wholeNumber('rate-limit', values['rate-limit'], 1, 100_000)
  if (values['expires-at'] !== undefined) {
    if (none(values['expires-at'])) out.expiresAt = null
    else if (!Number.isFinite(Date.parse(str(values['expires-at'])!))) throw new UsageError('--expires-at must be an ISO 8601 timestamp')
    else out.expiresAt = new Date(Date.parse(str(values['expires-at'])!)).toISOString()
  }
  if (!Object.keys(out).length) throw new UsageError('name at least one setting to change')
  return out
}

function required(values: Record<string, unknown>, name: string): string {
  const v = values[name]
  if (typeof v !== 'string' || !v.trim()) throw new UsageError(`--${name} is required`)
  return v
}

async function runAdmin(command: string, cmd: CommandContext): Promise<number> {
  const { values, positionals, config, out } = cmd
  const json = values.json === true

  if (command === 'backup') {
    const target = resolve(positionals[0]!)
    const source = resolve(config.dataDir, DB_FILE)
    if (!existsSync(source)) throw new AppError('not_found', `no database at ${source}; check --data-dir / LNK_DATA_DIR`)
    if (existsSync(target)) throw new AppError('conflict', `${target} already exists; choose a new file name`)
    if (!existsSync(dirname(target))) throw new AppError('not_found', `directory ${dirname(target)} does not exist`)
    backupDatabase(source, target)
    const bytes = statSync(target).size
    out(json ? JSON.stringify({ file: target, bytes, createdAt: iso(Date.now()) }) : `Backup written to ${target} (${bytes} bytes)`)
    return 0
  }

  const rt = createRuntime(config, { log: cmd.log })
  try {
    switch (command) {
      case 'bootstrap': {
        const result = await bootstrap(rt.modules.identity.ctx, {
          email: required(values, 'email'),
          workspace: required(values, 'workspace'),
          name: typeof values.name === 'string' ? values.name : undefined,
        })
        if (json) out(JSON.stringify(result))
        else {
          out(`Created user ${result.user.email} (${result.user.id}) and workspace "${result.workspace.name}" (${result.workspace.id}, slug ${result.workspace.slug}).`)
          out(`API key (shown once, store it now):\n\n  ${result.apiKey.key}\n`)
          out(`Try it: curl -H "Authorization: Bearer ${result.apiKey.key}" ${config.baseUrl}/v1/me`)
        }
        return 0
      }
      case 'create-key': {
        const mode = values.mode === undefined ? 'live' : values.mode
        if (mode !== 'live' && mode !== 'test') throw new UsageError('--mode must be live or test')
        const key = await createKey(rt.modules.identity.ctx, {
          workspace: required(values, 'workspace'),
          name: required(values, 'name'),
          mode,
          permissions: typeof values.permissions === 'string' ? values.permissions : undefined,
        })
        out(json ? JSON.stringify(key) : `Created ${key.mode} key ${key.id} with ${key.permissions.join(', ')}.\nKey (shown once):\n\n  ${key.key}\n`)
        return 0
      }
      case 'create-workspace': {
        const ws = await createWorkspace(rt.modules.identity.ctx, { name: required(values, 'name'), ownerEmail: required(values, 'owner') })
        out(json ? JSON.stringify(ws) : `Created workspace "${ws.name}" (${ws.id}, slug ${ws.slug}).`)
        return 0
      }
      case 'add-member': {
        const role = values.role === undefined ? 'member' : values.role
        if (role !== 'member' && role !== 'owner') throw new UsageError('--role must be member or owner')
        const result = await addMember(rt.modules.identity.ctx, {
          workspace: required(values, 'workspace'),
          email: required(values, 'email'),
          name: typeof values.name === 'string' ? values.name : undefined,
          role,
        })
        out(json ? JSON.stringify(result) : `${result.user.email} is now ${role} of "${result.workspace.name}" (${result.workspace.id}).`)
        return 0
      }
      case 'list-keys': {
        const keys = await listKeys(rt.modules.identity.ctx, typeof values.workspace === 'string' ? values.workspace : undefined)
        if (json) out(JSON.stringify(keys))
        else if (!keys.length) out('No API keys.')
        else {
          for (const k of keys) {
            const state = k.revokedAt ? 'revoked' : k.pausedAt ? 'paused' : k.expiresAt && Date.parse(k.expiresAt) <= Date.now() ? 'expired' : 'active'
            out(`${k.id}  ${k.keyPrefix}…  ${k.mode}  ${state.padEnd(7)}  ${k.name}  [${k.permissions.join(',')}]`)
          }
        }
        return 0
      }
      case 'revoke-key': {
        const key = await revokeApiKey(rt.modules.apiKeys.ctx, null, positionals[0]!, str(values.reason))
        out(json ? JSON.stringify(key) : `Revoked ${key.id} (${key.keyPrefix}…) at ${key.revokedAt}.`)
        return 0
      }
      case 'pause-key': {
        const key = await pauseApiKey(rt.modules.apiKeys.ctx, null, positionals[0]!, str(values.reason))
        out(json ? JSON.stringify(key) : `Paused ${key.id} (${key.keyPrefix}…) at ${key.pausedAt}.`)
        return 0
      }
      case 'resume-key': {
        const key = await resumeApiKey(rt.modules.apiKeys.ctx, null, positionals[0]!)
        out(json ? JSON.stringify(key) : `Resumed ${key.id} (${key.keyPrefix}…).`)
        return 0
      }
      case 'rotate-key': {
        const grace = values['grace-hours'] === undefined ? undefined : wholeNumber('grace-hours', values['grace-hours'], 0, 720)
        const key = await rotateApiKey(rt.modules.apiKeys.ctx, null, positionals[0]!, grace)
        out(json ? JSON.stringify(key) : `Rotated ${key.id}. New key (shown once):\n\n  ${key.key}\n\nThe old secret works for ${key.graceHoursRemaining} more hour(s).`)
        return 0
      }
      case 'update-key': {
        const key = await updateApiKey(rt.modules.apiKeys.ctx, null, positionals[0]!, keySettingsFromFlags(values))
        out(json ? JSON.stringify(key) : `Updated ${key.id} (${key.keyPrefix}…).`)
        return 0
      }
      default:
        throw new UsageError(`unknown admin command "${command}"`)
    }
  } finally {
    await rt.close()
  }
}
