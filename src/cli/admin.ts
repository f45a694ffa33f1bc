// `lnk admin …`: bootstrap, keys and backups from the command line, through the same services as HTTP.
import { existsSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { Database } from 'bun:sqlite'
import { iso } from '../clock'
import { DB_FILE, openDatabase } from '../db/client'
import { AppError } from '../http/errors'
import { addMember, bootstrap, createKey, createWorkspace, listKeys, revokeKey } from '../modules/identity/service'
import { createRuntime } from '../runtime'
import { type CommandContext, UsageError } from './command'

export const ADMIN_HELP = `Usage: lnk admin <command> [options]

Commands:
  bootstrap --email E [--name N] --workspace W [--json]
      Create a user, a workspace and a live key with every permission. The key is printed once.
  create-key --workspace ID_OR_SLUG --name N [--mode live|test] [--permissions a,b] [--json]
      Create another key for the workspace's owner. Permissions default to *.
  list-keys [--workspace ID_OR_SLUG] [--json]
      List keys (never their secrets).
  revoke-key ID [--reason R] [--json]
      Revoke a key for good.
  create-workspace --name N --owner EMAIL [--json]
      Create another workspace owned by an existing user.
  add-member --workspace ID_OR_SLUG --email E [--name N] [--role member|owner] [--json]
      Add a user (created if new) to a workspace; their keys can act in it with X-Workspace-Id.
  backup FILE [--json]
      Write a consistent copy of the database to FILE (safe while the server runs).

Every command also takes --data-dir (LNK_DATA_DIR, default ./data). Run 'lnk admin <command> --help' for details.`

export const ADMIN_COMMANDS: Record<string, { help: string; options: Record<string, { type: 'string' | 'boolean' }>; positionals: number }> = {
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

function required(values: Record<string, unknown>, name: string): string {
  const v = values[name]
  if (typeof v !== 'string' || !v.trim()) throw new UsageError(`--${name} is required`)
  return v
}

export async function runAdmin(command: string, cmd: CommandContext): Promise<number> {
  const { values, positionals, config, out } = cmd
  const json = values.json === true

  if (command === 'backup') {
    const target = resolve(positionals[0]!)
    const source = resolve(config.dataDir, DB_FILE)
    if (!existsSync(source)) throw new AppError('not_found', `no database at ${source}; check --data-dir / LNK_DATA_DIR`)
    if (existsSync(target)) throw new AppError('conflict', `${target} already exists; choose a new file name`)
    if (!existsSync(dirname(target))) throw new AppError('not_found', `directory ${dirname(target)} does not exist`)
    const db = openDatabase(source)
    try {
      db.sqlite.query('VACUUM INTO ?').run(target)
    } finally {
      db.sqlite.close()
    }
    const copy = new Database(target, { readonly: true })
    const check = (copy.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check
    copy.close()
    if (check !== 'ok') throw new Error(`the backup at ${target} failed its integrity check: ${check}`)
    const bytes = statSync(target).size
    out(json ? JSON.stringify({ file: target, bytes, createdAt: iso(Date.now()) }) : `Backup written to ${target} (${bytes} bytes)`)
    return 0
  }

  const rt = createRuntime(config, { log: cmd.log })
  try {
    switch (command) {
      case 'bootstrap': {
        const result = await bootstrap(rt, {
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
        const key = await createKey(rt, {
          workspace: required(values, 'workspace'),
          name: required(values, 'name'),
          mode,
          permissions: typeof values.permissions === 'string' ? values.permissions : undefined,
        })
        out(json ? JSON.stringify(key) : `Created ${key.mode} key ${key.id} with ${key.permissions.join(', ')}.\nKey (shown once):\n\n  ${key.key}\n`)
        return 0
      }
      case 'create-workspace': {
        const ws = await createWorkspace(rt, { name: required(values, 'name'), ownerEmail: required(values, 'owner') })
        out(json ? JSON.stringify(ws) : `Created workspace "${ws.name}" (${ws.id}, slug ${ws.slug}).`)
        return 0
      }
      case 'add-member': {
        const role = values.role === undefined ? 'member' : values.role
        if (role !== 'member' && role !== 'owner') throw new UsageError('--role must be member or owner')
        const result = await addMember(rt, {
          workspace: required(values, 'workspace'),
          email: required(values, 'email'),
          name: typeof values.name === 'string' ? values.name : undefined,
          role,
        })
        out(json ? JSON.stringify(result) : `${result.user.email} is now ${role} of "${result.workspace.name}" (${result.workspace.id}).`)
        return 0
      }
      case 'list-keys': {
        const keys = await listKeys(rt, typeof values.workspace === 'string' ? values.workspace : undefined)
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
        const key = await revokeKey(rt, positionals[0]!, typeof values.reason === 'string' ? values.reason : undefined)
        out(json ? JSON.stringify(key) : `Revoked ${key.id} (${key.keyPrefix}…) at ${key.revokedAt}.`)
        return 0
      }
      default:
        throw new UsageError(`unknown admin command "${command}"`)
    }
  } finally {
    await rt.lastUsed.flush()
    rt.workerDb.sqlite.close()
    rt.db.close()
  }
}
