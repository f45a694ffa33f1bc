// The system packages the test suite needs, and the one routine that makes sure they are there.
//
// `bun test` runs it first (bunfig.toml's [test] preload → test/setup/preload.ts), and .ci/run runs it as a
// step of its own (`bun test/setup/system-packages.ts`), so the list and the install command live here only.
//
// When something is missing it is installed with `apt-get update` + `apt-get install -y
// --no-install-recommends …`, as root or through password-less sudo (`sudo -n`); otherwise the run stops
// with one line naming the command to run. A lock file keeps several `bun test` processes that start at
// once from running apt together: the others wait, then look again. When everything is present it costs
// a few existence checks and prints nothing.
//
// Every input (paths, commands, uid, lock file) is a parameter so test/system/test-setup.test.ts can drive
// it with a fake installer instead of uninstalling anything. Only node: built-ins and Bun: it runs before
// `bun install` may have happened.
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface SystemPackage {
  /** The Debian package. */
  name: string
  /** It counts as installed when any of these exists. */
  paths: string[]
  /** What the tests use it for (shown by the CLI). */
  why: string
}

/** Everything the tests need from the system, in one list. */
export const SYSTEM_PACKAGES: SystemPackage[] = [
  { name: 'chromium', paths: ['/usr/bin/chromium', '/usr/bin/chromium-browser'], why: 'pages are tested in headless Chromium (test/browser.ts)' },
  { name: 'poppler-utils', paths: ['/usr/bin/pdftoppm'], why: 'QR code PDFs are rasterised with pdftoppm (test/qr)' },
  // Debian's package may try to start a caddy service on :80; the tests never use that one (their Caddy runs
  // on free loopback ports with its own storage), and without systemd it does not start at all.
  { name: 'caddy', paths: ['/usr/bin/caddy'], why: 'custom domains are served over HTTPS through the real Caddy with deploy/Caddyfile (test/domains)' },
  // Debian's package starts no server without systemd; the tests run their own cluster (test/setup/postgres.ts).
  {
    name: 'postgresql',
    paths: ['/usr/lib/postgresql/17/bin/initdb', '/usr/lib/postgresql/16/bin/initdb', '/usr/lib/postgresql/15/bin/initdb'],
    why: 'the PostgreSQL schema and migrations are checked on a real server (test/db, test/setup/postgres.ts)',
  },
]

export interface EnsureOptions {
  packages?: SystemPackage[]
  exists?: (path: string) => boolean
  /** Path of apt-get; null when the machine has none. Default: found on PATH. */
  aptGet?: string | null
  /** Path of sudo; null when there is none. Default: found on PATH. */
  sudo?: string | null
  /** The current user id (0 = root). Default: process.getuid(). */
  uid?: number
  /** Held while apt runs. Default: $TMPDIR/lnk-test-system-packages.lock. */
  lockFile?: string
  /** apt's output goes here. Default: $TMPDIR/lnk-test-apt-<pid>.log. */
  logFile?: string
  /** How long to wait for another process's install. Default: 20 minutes. */
  lockTimeoutMs?: number
  /** Progress lines (only printed when something is installed). Default: stderr. */
  say?: (line: string) => void
}

export type EnsureResult =
  | { ok: true; installed: string[] }
  /** `message` is one line (apt's failures add the end of its log below it). */
  | { ok: false; message: string }

/** The packages of `packages` none of whose paths exist. */
export function missingPackages(packages: SystemPackage[] = SYSTEM_PACKAGES, exists: (path: string) => boolean = existsSync): SystemPackage[] {
  return packages.filter((pkg) => !pkg.paths.some((path) => exists(path)))
}

/** The commands that install `names`, as a person would type them (with sudo unless root). */
export function installCommand(names: string[], asRoot: boolean): string {
  const sudo = asRoot ? '' : 'sudo '
  return `${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends ${names.join(' ')}`
}

function describeMissing(missing: SystemPackage[]) {
  return `${missing.map((p) => p.name).join(' and ')} (${missing.map((p) => p.paths[0]).join(', ')} missing)`
}

/** The command prefix that runs apt as root: [] as root, [sudo, -n] with password-less sudo, null otherwise. */
export function rootPrefix(uid: number, sudo: string | null): string[] | null {
  if (uid === 0) return []
  if (!sudo) return null
  const probe = Bun.spawnSync([sudo, '-n', 'true'], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' })
  return probe.exitCode === 0 ? [sudo, '-n'] : null
}

/** Installs what is missing (see the file comment). Synchronous: it runs before any test file. */
export function ensureSystemPackages(options: EnsureOptions = {}): EnsureResult {
  const packages = options.packages ?? SYSTEM_PACKAGES
  const exists = options.exists ?? existsSync
  let missing = missingPackages(packages, exists)
  if (missing.length === 0) return { ok: true, installed: [] }

  const names = missing.map((p) => p.name)
  const aptGet = options.aptGet === undefined ? Bun.which('apt-get') : options.aptGet
  if (!aptGet) {
    return {
      ok: false,
      message:
        `bun test needs ${describeMissing(missing)} and this machine has no apt-get: install ${missing.length > 1 ? 'them' : 'it'} with its ` +
        `package manager (Debian: ${installCommand(names, false)}), then run bun test again`,
    }
  }
  const uid = options.uid ?? process.getuid?.() ?? -1
  const sudo = options.sudo === undefined ? Bun.which('sudo') : options.sudo
  const prefix = rootPrefix(uid, sudo)
  if (!prefix) {
    return {
      ok: false,
      message:
        `bun test needs ${describeMissing(missing)} and cannot install ${missing.length > 1 ? 'them' : 'it'} (not root, no password-less sudo): ` +
        `run \`${installCommand(names, false)}\`, then run bun test again`,
    }
  }

  const say = options.say ?? ((line: string) => process.stderr.write(`${line}\n`))
  const lockFile = options.lockFile ?? join(tmpdir(), 'lnk-test-system-packages.lock')
  const lock = acquireLock(lockFile, options.lockTimeoutMs ?? 20 * 60_000, say)
  if (!lock.ok) return lock
  try {
    // Another process may have installed them while this one waited.
    missing = missingPackages(packages, exists)
    if (missing.length === 0) return { ok: true, installed: [] }
    const toInstall = missing.map((p) => p.name)
    const logFile = options.logFile ?? join(tmpdir(), `lnk-test-apt-${process.pid}.log`)
    say(`bun test: installing ${toInstall.join(' ')} with apt-get${prefix.length ? ' (sudo)' : ''} (log: ${logFile})`)
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    const log = openSync(logFile, 'w')
    try {
      for (const args of [
        ['update', '-q'],
        ['install', '-y', '-q', '--no-install-recommends', ...toInstall],
      ]) {
        const cmd = [...prefix, aptGet, ...args]
        writeSync(log, `$ ${cmd.join(' ')}\n`)
        const run = Bun.spawnSync(cmd, { env, stdin: 'ignore', stdout: log, stderr: log })
        if (run.exitCode !== 0) {
          return { ok: false, message: `bun test: \`${cmd.join(' ')}\` failed (exit ${run.exitCode}); log: ${logFile}\n${tail(logFile)}` }
        }
      }
    } finally {
      closeSync(log)
    }
    const still = missingPackages(packages, exists)
    const missingNow = still.map((p) => p.paths.join(' or ')).join(', ')
    if (still.length) {
      return {
        ok: false,
        message: `bun test: apt-get installed ${toInstall.join(' ')} but ${missingNow} is still missing; log: ${logFile}`,
      }
    }
    say(`bun test: installed ${toInstall.join(' ')}`)
    return { ok: true, installed: toInstall }
  } finally {
    lock.release()
  }
}

function tail(file: string, lines = 15) {
  try {
    return readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .map((l) => `  ${l}`)
      .join('\n')
  } catch {
    return ''
  }
}

/** True when `file` was last written more than `ms` ago (a lock whose owner died before writing its pid). */
function olderThan(file: string, ms: number) {
  try {
    return Date.now() - statSync(file).mtimeMs > ms
  } catch {
    return false
  }
}

function alive(pid: number) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * An exclusive lock file holding the owner's pid. A lock whose owner is gone (killed mid-install) is
 * taken over; a live one is waited for, at most `timeoutMs`.
 */
export function acquireLock(file: string, timeoutMs: number, say: (line: string) => void): { ok: true; release(): void } | { ok: false; message: string } {
  const deadline = Date.now() + timeoutMs
  let announced = false
  for (;;) {
    try {
      const fd = openSync(file, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return { ok: true, release: () => rmSync(file, { force: true }) }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        return { ok: false, message: `bun test: cannot create the lock file ${file}: ${(err as Error).message}` }
      }
    }
    let owner = NaN
    try {
      owner = Number.parseInt(readFileSync(file, 'utf8'), 10)
    } catch {
      continue // released between our open and read: try again at once
    }
    const ownerGone = Number.isInteger(owner) && owner > 0 ? owner !== process.pid && !alive(owner) : olderThan(file, 10_000)
    if (ownerGone) {
      rmSync(file, { force: true })
      continue
    }
    if (Date.now() > deadline) {
      return {
        ok: false,
        message: `bun test: gave up after ${Math.round(timeoutMs / 1000)} s waiting for process ${owner} to finish installing system packages (lock ${file})`,
      }
    }
    if (!announced) {
      say(`bun test: waiting for process ${Number.isNaN(owner) ? '?' : owner} to finish installing system packages (lock ${file})`)
      announced = true
    }
    Bun.sleepSync(200)
  }
}

// `bun test/setup/system-packages.ts`: the same check and install as a command (.ci/run's step). Exit 1
// with the one line when something is missing and cannot be installed.
if (import.meta.main) {
  const result = ensureSystemPackages()
  if (!result.ok) {
    console.error(result.message)
    process.exit(1)
  }
  for (const pkg of SYSTEM_PACKAGES) {
    const found = pkg.paths.find((p) => existsSync(p))
    console.log(`${pkg.name}: ${found}${result.installed.includes(pkg.name) ? ' (installed now)' : ''} — ${pkg.why}`)
  }
}
