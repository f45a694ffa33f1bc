// Reads one service of a compose file the way `docker compose` would hand it to the engine, for
// scripts/image/ci.sh: CI has no compose, so it runs the image itself with what the file configures, and a
// compose file naming a wrong variable, command, port or volume fails there.
//
//   bun scripts/image/compose.ts FILE SERVICE FIELD [OVERRIDE_FILE]
//
// FIELD is one of:
//   environment   KEY=VALUE entries               command      the command's arguments
//   entrypoint    the entrypoint's arguments       volumes      SOURCE:TARGET entries (named volumes and binds)
//   ports         container ports published        user         the user, if set
//   build         the build context, resolved to an absolute directory
//   stop-grace    stop_grace_period in seconds (empty when unset)
//   network-mode  network_mode, if set             upstreams    HOST:PORT after each `--to` of the command
//   subnets       the subnets the file pins for its default network
// List fields print one entry per NUL-terminated record (values may hold any character but NUL).
// Variables are substituted from this process's environment only (${VAR}, ${VAR:-default}, ${VAR-default},
// ${VAR:?message}, ${VAR?message}, $$), as compose does; an unset required variable is an error. An
// OVERRIDE_FILE is merged over FILE as `docker compose -f FILE -f OVERRIDE_FILE` merges it: mappings key by
// key, ports and volumes appended, command, entrypoint and scalars replaced.
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

type Yaml = null | string | number | boolean | Yaml[] | { [key: string]: Yaml }
type Service = { [key: string]: Yaml }

const [file, service, field, overrideFile] = process.argv.slice(2)
if (!file || !service || !field) fail('usage: bun scripts/image/compose.ts FILE SERVICE FIELD [OVERRIDE_FILE]')

function fail(message: string): never {
  console.error(`compose: ${message}`)
  process.exit(2)
}

function interpolate(text: string, where: string): string {
  return text.replace(
    /\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])((?:[^{}]|\{[^{}]*\})*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (whole, dollar, name, colon, op, arg, bare) => {
      if (dollar === '$') return '$'
      if (bare) return process.env[bare] ?? ''
      const value = process.env[name]
      const missing = value === undefined || (colon === ':' && value === '')
      if (!op) return value ?? ''
      if (op === '-') return missing ? interpolate(arg, where) : value!
      if (missing) fail(`${where}: required variable ${name} is not set${arg ? ` (${arg})` : ''}`)
      return value!
    },
  )
}

function substitute(value: Yaml, where: string): Yaml {
  if (typeof value === 'string') return interpolate(value, where)
  if (Array.isArray(value)) return value.map((v) => substitute(v, where))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, `${where}.${k}`)]))
  }
  return value
}

function load(path: string): { [key: string]: Yaml } {
  let parsed: unknown
  try {
    parsed = Bun.YAML.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    fail(`${path}: ${(error as Error).message}`)
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) fail(`${path}: not a mapping`)
  return parsed as { [key: string]: Yaml }
}

function serviceOf(doc: { [key: string]: Yaml }, path: string, required: boolean): Service | undefined {
  const services = doc.services as { [key: string]: Yaml } | undefined
  const found = services?.[service!]
  if (!found || typeof found !== 'object' || Array.isArray(found)) {
    if (required) fail(`${path}: no service ${service}`)
    return undefined
  }
  return substitute(found, `${path}: services.${service}`) as Service
}

// environment: either a mapping or a list of KEY=VALUE (a bare KEY takes the value from the environment).
function environmentOf(s: Service | undefined): Map<string, string> {
  const out = new Map<string, string>()
  const env = s?.environment
  if (Array.isArray(env)) {
    for (const entry of env) {
      const text = String(entry)
      const eq = text.indexOf('=')
      if (eq < 0) {
        if (process.env[text] !== undefined) out.set(text, process.env[text]!)
      } else out.set(text.slice(0, eq), text.slice(eq + 1))
    }
  } else if (env && typeof env === 'object') {
    for (const [k, v] of Object.entries(env)) if (v !== null) out.set(k, String(v))
  }
  return out
}

// A string command is split the way compose splits it (shell words, no expansion).
function words(value: Yaml | undefined): string[] {
  if (value === undefined || value === null) return []
  if (Array.isArray(value)) return value.map(String)
  const out: string[] = []
  for (const m of String(value).matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) out.push(m[1]?.replace(/\\(.)/g, '$1') ?? m[2] ?? m[3]!)
  return out
}

function mountsOf(s: Service | undefined, composeDir: string): string[] {
  const out: string[] = []
  for (const v of (s?.volumes as Yaml[] | undefined) ?? []) {
    if (typeof v === 'string') {
      const [source, target] = v.split(':')
      if (!target) continue // an anonymous volume
      out.push(`${/^[./~]/.test(source!) ? resolve(composeDir, source!) : source}:${target}`)
    } else if (v && typeof v === 'object' && !Array.isArray(v) && v.source && v.target) {
      const source = String(v.source)
      out.push(`${v.type === 'bind' ? resolve(composeDir, source) : source}:${v.target}`)
    }
  }
  return out
}

function portsOf(s: Service | undefined): string[] {
  const out: string[] = []
  for (const p of (s?.ports as Yaml[] | undefined) ?? []) {
    if (p && typeof p === 'object' && !Array.isArray(p)) out.push(String(p.target))
    else out.push(String(p).split(':').pop()!.split('/')[0]!)
  }
  return out
}

function seconds(value: Yaml | undefined): string {
  if (value === undefined || value === null) return ''
  const text = String(value)
  let total = 0
  let rest = text
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)) {
    total += Number(m[1]) * { h: 3600, m: 60, s: 1, ms: 0.001 }[m[2] as 'h' | 'm' | 's' | 'ms']
    rest = rest.replace(m[0], '')
  }
  if (rest.trim() !== '') fail(`stop_grace_period ${text} is not a duration`)
  return String(total)
}

const composeDir = dirname(resolve(file!))
const base = serviceOf(load(file!), file!, true)!
const over = overrideFile ? serviceOf(load(overrideFile), overrideFile, false) : undefined
const merged: Service = { ...base, ...over }
let list: string[] | undefined
let text = ''

switch (field) {
  case 'environment': {
    const env = environmentOf(base)
    for (const [k, v] of environmentOf(over)) env.set(k, v)
    list = [...env].map(([k, v]) => `${k}=${v}`)
    break
  }
  case 'command':
    list = words(merged.command)
    break
  case 'entrypoint':
    list = words(merged.entrypoint)
    break
  case 'volumes':
    list = [...mountsOf(base, composeDir), ...(overrideFile ? mountsOf(over, dirname(resolve(overrideFile))) : [])]
    break
  case 'ports':
    list = [...portsOf(base), ...portsOf(over)]
    break
  case 'upstreams': {
    const args = words(merged.command)
    list = args.flatMap((a, i) => (a === '--to' && args[i + 1] ? [args[i + 1]!] : []))
    break
  }
  case 'subnets': {
    const networks = (load(file!).networks ?? {}) as { [key: string]: Yaml }
    const ipam = (networks.default as { [key: string]: Yaml } | undefined)?.ipam as { [key: string]: Yaml } | undefined
    list = ((ipam?.config as Yaml[] | undefined) ?? []).flatMap((c) => {
      const subnet = c && typeof c === 'object' && !Array.isArray(c) ? c.subnet : undefined
      return subnet ? [interpolate(String(subnet), `${file}: networks.default`)] : []
    })
    break
  }
  case 'user':
    text = merged.user == null ? '' : String(merged.user)
    break
  case 'network-mode':
    text = merged.network_mode == null ? '' : String(merged.network_mode)
    break
  case 'stop-grace':
    text = seconds(merged.stop_grace_period)
    break
  case 'build': {
    const build = base.build
    const context = typeof build === 'string' ? build : build && typeof build === 'object' && !Array.isArray(build) ? String(build.context ?? '.') : ''
    text = context ? resolve(composeDir, context) : ''
    break
  }
  default:
    fail(`unknown field ${field}`)
}

if (list) process.stdout.write(list.map((entry) => `${entry}\0`).join(''))
else process.stdout.write(text)
