// `lnk admin …`: bootstrap, keys, custom domains, backups and exports/imports between engines from the command
// line, through the same services as HTTP.
import { existsSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { iso } from '../platform/clock'
import { backupDatabase } from '../db/backup'
import { DB_FILE } from '../db/client'
import { openPostgres } from '../db/pg/connect'
import { pgSource, pgTarget } from '../db/pg/transfer'
import { exportDatabase, importDatabase, type TransferSummary } from '../db/transfer'
import { usePgDump } from '../db/transfer-errors'
import { sqliteSource, sqliteTarget } from '../db/transfer-sqlite'
import type { Config } from '../platform/config'
import { AppError } from '../platform/errors'
import { pauseApiKey, resumeApiKey, revokeApiKey, rotateApiKey, updateApiKey, type KeySettings } from '../modules/api-keys'
import { addDomain, listDomains, toDomain, verifyDomain, type Who, domainNotFound } from '../modules/domains'
import type { DomainView } from '../modules/domains/model'
import { workspaceNotFound, parseGrants, type IdentityRepo, type WorkspaceRow, addMember, bootstrap, createKey, createWorkspace, listKeys } from '../modules/identity'
import { openRuntime } from '../runtime'
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
  add-domain --workspace ID_OR_SLUG --domain D [--root-redirect-url U] [--not-found-url U] [--expired-url U] [--json]
      Add a custom domain; prints its id and the DNS records to create.
  verify-domain ID [--json]
      Check the domain's DNS now; prints its statuses and each record expected and seen.
  list-domains [--workspace ID_OR_SLUG] [--json]
      List custom domains with their verification, DNS and TLS status.
  backup FILE [--json]
      Write a consistent copy of the SQLite database to FILE (safe while the server runs).
  export FILE [--database-url URL] [--json]
      Write every table to FILE (NDJSON, gzip if FILE ends in .gz) from one snapshot, SQLite or PostgreSQL.
  import FILE [--database-url URL] [--json]
      Load an export into an empty database (SQLite under --data-dir, or PostgreSQL), in one transaction.

Every command also takes --data-dir (LNK_DATA_DIR, default ./data) or --database-url (LNK_DATABASE_URL, a
PostgreSQL database), --base-url (LNK_BASE_URL, the origin shown in examples) and --log-level (LNK_LOG_LEVEL).
Run 'lnk admin <command> --help' for details.`

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
  'add-domain': {
    help: `Usage: lnk admin add-domain --workspace ID_OR_SLUG --domain D [--root-redirect-url U] [--not-found-url U]
                            [--expired-url U] [--json]

Adds the custom domain D (e.g. go.example.com; lower-cased, an internationalised name converted to punycode;
no port, no IP address) to the workspace, as POST /v1/domains does, and prints its id and the DNS records to
create: the TXT record _lnk-challenge.D that proves control, and a CNAME to LNK_DOMAIN_CNAME_TARGET
(subdomain) or A/AAAA records for LNK_DOMAIN_IPS (apex). The domain is checked 1, 5 and 15 minutes later,
then hourly to 72 hours and 6-hourly to 7 days; 'lnk admin verify-domain ID' checks at once.
  --root-redirect-url U     where / on the domain goes (301)
  --not-found-url U         where an unknown slug goes (302)
  --expired-url U           where an expired or used-up link goes (302)
                            ({DOMAIN} and {ORIGINAL_PATH} are filled in)
With --json prints the domain object (the fields of GET /v1/domains/{id}).`,
    options: {
      workspace: { type: 'string' },
      domain: { type: 'string' },
      'root-redirect-url': { type: 'string' },
      'not-found-url': { type: 'string' },
      'expired-url': { type: 'string' },
      json: { type: 'boolean' },
    },
    positionals: 0,
  },
  'verify-domain': {
    help: `Usage: lnk admin verify-domain ID [--json]

Looks at the domain's DNS now, as POST /v1/domains/{id}/verify does, and prints its verification, DNS and
TLS status and each record expected and seen. At most one check per 10 seconds per domain. DNS is asked
through LNK_DNS_SERVERS (host:port, comma-separated; default: the system's resolvers).
With --json prints the domain object.`,
    options: { json: { type: 'boolean' } },
    positionals: 1,
  },
  'list-domains': {
    help: `Usage: lnk admin list-domains [--workspace ID_OR_SLUG] [--json]

Lists custom domains, oldest first (of every workspace unless --workspace is given): id, domain, workspace,
verification, DNS and TLS status, and whether short links answer on it now.
With --json prints an array of domain objects (the fields of GET /v1/domains), each with its workspaceId.`,
    options: { workspace: { type: 'string' }, json: { type: 'boolean' } },
    positionals: 0,
  },
  backup: {
    help: `Usage: lnk admin backup FILE [--json]

Writes a consistent copy of the database to FILE with VACUUM INTO. Safe while the server runs: readers
and writers carry on. FILE must not exist yet. Restore by stopping lnk and putting FILE in place of
<data dir>/lnk.db (remove lnk.db-wal and lnk.db-shm beside it). With a PostgreSQL database
(--database-url / LNK_DATABASE_URL) it refuses and prints the pg_dump command to run instead.`,
    options: { json: { type: 'boolean' } },
    positionals: 1,
  },
  export: {
    help: `Usage: lnk admin export FILE [--database-url URL] [--json]

Writes every table of the database to FILE, a new file: the SQLite database under --data-dir, or the
PostgreSQL database of --database-url (LNK_DATABASE_URL). It reads one snapshot (a read transaction on
SQLite, REPEATABLE READ on PostgreSQL), so the server may keep running. The database must be at this lnk's
latest migration.
FILE is NDJSON, gzip-compressed when its name ends in .gz: a header line with the schema and each table's
row count, then one line per row. 'lnk admin import FILE' loads it into either engine.
With --json prints {"file","schema","tables":{name:rows},"rows"}.`,
    options: { json: { type: 'boolean' } },
    positionals: 1,
  },
  import: {
    help: `Usage: lnk admin import FILE [--database-url URL] [--json]

Loads an export of 'lnk admin export' into the SQLite database under --data-dir (created if missing), or
the PostgreSQL database of --database-url (LNK_DATABASE_URL). The target is migrated first and must hold
no data; FILE must come from the same lnk version (its schema is checked). Every row goes in within one
transaction: if anything fails, nothing is imported. Row counts are checked against the file's header.
A refusal (a target with data, another schema) is one line and exit 1. Stop the servers using the target meanwhile.
With --json prints {"file","schema","tables":{name:rows},"rows"}.`,
    options: { json: { type: 'boolean' } },
    positionals: 1,
  },
}

/** The server settings admin commands read: which database (either engine), the origin their examples show, how much to log. */
const ADMIN_SETTINGS = ['data-dir', 'database-url', 'base-url', 'log-level']

export const admin: CommandGroup = {
  help: ADMIN_HELP,
  commands: Object.fromEntries(
    Object.entries(ADMIN_COMMANDS).map(([name, spec]): [string, Command] => [
      name,
      { ...spec, settings: ADMIN_SETTINGS, run: (invocation, out) => runFromCommandLine(name, invocation, out) },
    ]),
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

/** The operator acting in a workspace: a live caller whom no key's scope filters bind. */
const operatorIn = (workspace: WorkspaceRow): Who => ({ workspace, mode: 'live', key: { scopeFilters: null } })

async function workspaceOf(identity: IdentityRepo, ref: string): Promise<WorkspaceRow> {
  const workspace = await identity.findWorkspace(ref)
  if (!workspace) throw workspaceNotFound(ref)
  return workspace
}

const FLAG_OF: Record<string, string> = { domain: '--domain', rootRedirectUrl: '--root-redirect-url', notFoundUrl: '--not-found-url', expiredUrl: '--expired-url' }

/** A refused body, its problems named by the flags that carried them (the service names the fields of the HTTP body). */
function asFlags(err: unknown): unknown {
  if (!(err instanceof AppError) || err.code !== 'validation_failed') return err
  const issues = (err.details?.issues ?? []) as { path: string; message: string }[]
  return new AppError(err.code, `Invalid options: ${issues.map((i) => `${FLAG_OF[i.path] ?? i.path}: ${i.message}`).join('; ')}`, err.details)
}

const named = (d: DomainView) => (d.unicodeDomain === d.domain ? d.domain : `${d.unicodeDomain} (${d.domain})`)

/** Rows of cells as aligned columns. */
function table(rows: string[][], indent = '  '): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows.map((r) => `${indent}${r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}`.trimEnd())
}

/** What the check saw at the record's name, and whether the value was among it. */
function seenText(r: DomainView['records'][number]): [string, string] {
  if (r.seen === null) return ['(lookup failed)', '-']
  return [r.seen.length ? r.seen.join(', ') : '(none)', r.ok ? 'ok' : r.seen.length ? 'differs' : 'missing']
}

function domainReport(d: DomainView): string[] {
  const lines = [`${named(d)} (${d.id}): verification ${d.verificationStatus}, dns ${d.dnsStatus}, ssl ${d.sslStatus}, ${d.served ? 'served' : 'not served'}`]
  lines.push(...table([['TYPE', 'NAME', 'EXPECTED', 'SEEN', ''], ...d.records.map((r) => [r.type, r.name, r.value, ...seenText(r)])]))
  if (d.httpCheck) lines.push(`HTTP check ${d.httpCheck.url}: ${d.httpCheck.reached ? 'reached this instance' : 'not reached'} (${d.httpCheck.detail})`)
  if (d.failureReason) lines.push(`Failed: ${d.failureReason}`)
  lines.push(d.nextCheckAt ? `Next scheduled check: ${d.nextCheckAt}` : 'No further checks are scheduled.')
  return lines
}

function required(values: Record<string, unknown>, name: string): string {
  const v = values[name]
  if (typeof v !== 'string' || !v.trim()) throw new UsageError(`--${name} is required`)
  return v
}

/** export / import on the engine the settings select: PostgreSQL when a URL is given, else SQLite under the data dir. */
async function transfer(command: 'export' | 'import', file: string, config: Config, json: boolean, out: (line: string) => void): Promise<number> {
  const url = config.databaseUrl
  let summary: TransferSummary
  let where: string
  if (command === 'export') {
    const source = url ? pgSource(await openPostgres(url, { max: 1 }), url) : sqliteSource(join(config.dataDir, DB_FILE))
    where = source.label
    try {
      summary = await exportDatabase(source, file)
    } finally {
      await source.close()
    }
  } else {
    where = ''
    summary = await importDatabase(file, async () => {
      const target = url ? pgTarget(await openPostgres(url, { max: 1 }), url) : sqliteTarget(config.dataDir)
      where = target.label
      return target
    })
  }
  if (json) {
    out(JSON.stringify(summary))
    return 0
  }
  out(command === 'export' ? `Exported ${summary.rows} row(s) of ${where} to ${file} (${statSync(file).size} bytes, schema ${summary.schema}):` : `Imported ${summary.rows} row(s) from ${file} into ${where} (schema ${summary.schema}):`)
  for (const line of table(Object.entries(summary.tables).map(([name, rows]) => [name, String(rows)]))) out(line)
  return 0
}

async function runAdmin(command: string, cmd: CommandContext): Promise<number> {
  const { values, positionals, config, out } = cmd
  const json = values.json === true

  if (command === 'export' || command === 'import') return transfer(command, resolve(positionals[0]!), config, json, out)

  if (command === 'backup') {
    if (config.databaseUrl) throw usePgDump(config.databaseUrl, resolve(positionals[0]!))
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

  const rt = await openRuntime(config, { log: cmd.log })
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
      case 'add-domain': {
        const workspace = await workspaceOf(rt.modules.identity.ctx.identity, required(values, 'workspace'))
        const input = {
          domain: required(values, 'domain'),
          rootRedirectUrl: str(values['root-redirect-url']),
          notFoundUrl: str(values['not-found-url']),
          expiredUrl: str(values['expired-url']),
        }
        let domain: DomainView
        try {
          domain = await addDomain(rt.modules.domains.ctx, operatorIn(workspace), input)
        } catch (err) {
          throw asFlags(err)
        }
        if (json) out(JSON.stringify(domain))
        else {
          out(`Added ${named(domain)} (${domain.id}) to "${workspace.name}". Create these DNS records, then run 'lnk admin verify-domain ${domain.id}':\n`)
          for (const line of table([['TYPE', 'NAME', 'VALUE'], ...domain.records.map((r) => [r.type, r.name, r.value])])) out(line)
          if (domain.records.length === 1) out(`\nPoint ${domain.domain} at this server too (LNK_DOMAIN_CNAME_TARGET or LNK_DOMAIN_IPS would name the record).`)
        }
        return 0
      }
      case 'verify-domain': {
        const ctx = rt.modules.domains.ctx
        // The id alone names the domain, as a key's id does for the key commands: act in its own workspace.
        const row = await ctx.domains.findAnyById(positionals[0]!)
        if (!row) throw domainNotFound(positionals[0]!)
        const domain = await verifyDomain(ctx, operatorIn(await workspaceOf(rt.modules.identity.ctx.identity, row.workspaceId)), row.id)
        if (json) out(JSON.stringify(domain))
        else for (const line of domainReport(domain)) out(line)
        return 0
      }
      case 'list-domains': {
        const ctx = rt.modules.domains.ctx
        const ref = str(values.workspace)
        let domains: (DomainView & { workspaceId: string })[]
        if (ref) {
          const workspace = await workspaceOf(rt.modules.identity.ctx.identity, ref)
          domains = (await listDomains(ctx, operatorIn(workspace))).map((d) => ({ ...d, workspaceId: workspace.id }))
        } else {
          domains = (await ctx.domains.list()).map((row) => ({ ...toDomain(ctx, row), workspaceId: row.workspaceId }))
        }
        if (json) out(JSON.stringify(domains))
        else if (!domains.length) out('No domains.')
        else {
          const rows = domains.map((d) => [d.id, named(d), d.workspaceId, d.verificationStatus, `dns ${d.dnsStatus}`, `ssl ${d.sslStatus}`, d.served ? 'served' : 'not served'])
          for (const line of table(rows, '')) out(line)
        }
        return 0
      }
      default:
        throw new UsageError(`unknown admin command "${command}"`)
    }
  } finally {
    await rt.close()
  }
}
