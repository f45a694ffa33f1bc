// The test suite's own set-up (test/setup/system-packages.ts, run by bunfig.toml's [test] preload): driven
// with a fake package (a path in a temp dir) and fake apt-get and sudo scripts that record their calls, so
// nothing on the machine is installed or removed.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureSystemPackages, installCommand, missingPackages, SYSTEM_PACKAGES, type EnsureOptions, type SystemPackage } from '../setup/system-packages'
import { ROOT, tempDir } from '../helpers'

const dir = tempDir('lnk-test-setup-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const calls = join(dir, 'calls.log')
const fakeBin = join(dir, 'usr-bin-fakebrowser')
const fakePackage: SystemPackage = { name: 'fakebrowser', paths: [fakeBin], why: 'test' }

/** A shell script at dir/name that appends "name args…" to calls.log, then runs `body`. */
function script(name: string, body: string) {
  const file = join(dir, name)
  writeFileSync(file, `#!/bin/sh\necho "${name} $*" >> '${calls}'\n${body}\n`)
  chmodSync(file, 0o755)
  return file
}

// apt-get: `install` creates the fake package's file (after a pause, so a second process has to wait).
const aptGet = script('apt-get', `[ "$1" = install ] && { sleep 0.3; touch '${fakeBin}'; }\nexit 0`)
const aptGetNoop = script('apt-get-noop', 'exit 0')
const aptGetFailing = script('apt-get-failing', `echo "E: Unable to locate package $3" >&2\n[ "$1" = install ] && exit 100\nexit 0`)
const sudoYes = script('sudo', '[ "$1" = -n ] && shift\n[ "$1" = true ] && exit 0\nexec "$@"')
const sudoNo = script('sudo-refusing', 'echo "sudo: a password is required" >&2\nexit 1')

const recorded = () => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : [])

let said: string[]
function options(extra: EnsureOptions): EnsureOptions {
  return { packages: [fakePackage], lockFile: join(dir, 'lock'), logFile: join(dir, 'apt.log'), say: (line) => said.push(line), ...extra }
}

beforeEach(() => {
  rmSync(calls, { force: true })
  rmSync(fakeBin, { force: true })
  said = []
})

describe('nothing to do', () => {
  test('all present: no apt call, no output', () => {
    writeFileSync(fakeBin, '')
    expect(ensureSystemPackages(options({ aptGet, uid: 1000, sudo: null }))).toEqual({ ok: true, installed: [] })
    expect(recorded()).toEqual([])
    expect(said).toEqual([])
  })

  test('the real list on this machine: present after the preload ran, so nothing is installed', () => {
    expect(missingPackages(SYSTEM_PACKAGES)).toEqual([])
    expect(ensureSystemPackages({ aptGet, say: (line) => said.push(line) })).toEqual({ ok: true, installed: [] })
    expect(recorded()).toEqual([])
  })

  test('the list names chromium, poppler-utils and caddy by the paths the tests use', () => {
    expect(SYSTEM_PACKAGES.map((p) => p.name)).toEqual(['chromium', 'poppler-utils', 'caddy', 'postgresql'])
    expect(SYSTEM_PACKAGES.find((p) => p.name === 'chromium')!.paths).toContain('/usr/bin/chromium')
    expect(SYSTEM_PACKAGES.find((p) => p.name === 'poppler-utils')!.paths).toEqual(['/usr/bin/pdftoppm'])
    expect(SYSTEM_PACKAGES.find((p) => p.name === 'caddy')!.paths).toEqual(['/usr/bin/caddy'])
  })

  test('bunfig.toml preloads the set-up for every bun test run', () => {
    expect(readFileSync(join(ROOT, 'bunfig.toml'), 'utf8')).toMatch(/^preload = \["\.\/test\/setup\/preload\.ts"\]$/m)
  })
})

describe('missing and installable', () => {
  test('as root: apt-get update, then install -y --no-install-recommends the missing package', () => {
    const result = ensureSystemPackages(options({ aptGet, uid: 0, sudo: null }))
    expect(result).toEqual({ ok: true, installed: ['fakebrowser'] })
    expect(recorded()).toEqual(['apt-get update -q', 'apt-get install -y -q --no-install-recommends fakebrowser'])
    expect(existsSync(fakeBin)).toBe(true)
    expect(said[0]).toContain('installing fakebrowser with apt-get')
    expect(existsSync(join(dir, 'lock'))).toBe(false)
  })

  test('not root, password-less sudo: the same through sudo -n', () => {
    const result = ensureSystemPackages(options({ aptGet, uid: 1000, sudo: sudoYes }))
    expect(result).toEqual({ ok: true, installed: ['fakebrowser'] })
    expect(recorded()).toEqual([
      'sudo -n true',
      `sudo -n ${aptGet} update -q`,
      'apt-get update -q',
      `sudo -n ${aptGet} install -y -q --no-install-recommends fakebrowser`,
      'apt-get install -y -q --no-install-recommends fakebrowser',
    ])
  })

  test('only the missing packages are installed', () => {
    const present: SystemPackage = { name: 'present-pkg', paths: [calls], why: 'test' }
    writeFileSync(calls, '')
    const result = ensureSystemPackages(options({ packages: [present, fakePackage], aptGet, uid: 0 }))
    expect(result).toEqual({ ok: true, installed: ['fakebrowser'] })
    expect(recorded()).toEqual(['apt-get update -q', 'apt-get install -y -q --no-install-recommends fakebrowser'])
  })

  test('several processes at once: one runs apt, the others wait for its lock and then find everything there', async () => {
    const runner = join(dir, 'runner.ts')
    const lockFile = join(dir, 'lock-concurrent')
    writeFileSync(
      runner,
      `import { appendFileSync } from 'node:fs'
import { ensureSystemPackages } from ${JSON.stringify(join(ROOT, 'test/setup/system-packages.ts'))}
const r = ensureSystemPackages({ packages: [${JSON.stringify(fakePackage)}], aptGet: ${JSON.stringify(aptGet)}, uid: 0,
  lockFile: ${JSON.stringify(lockFile)}, logFile: process.argv[2] + '.apt', say: (line) => appendFileSync(process.argv[2], line + '\\n') })
console.log(JSON.stringify(r))`,
    )
    // The test holds the lock until all three are waiting for it, so they really do start together.
    writeFileSync(lockFile, String(process.pid))
    const saidBy = (i: number) => (existsSync(join(dir, `said-${i}`)) ? readFileSync(join(dir, `said-${i}`), 'utf8') : '')
    const procs = [1, 2, 3].map((i) => Bun.spawn([process.execPath, runner, join(dir, `said-${i}`)], { stdout: 'pipe', stderr: 'pipe' }))
    try {
      const deadline = Date.now() + 15_000
      while (![1, 2, 3].every((i) => saidBy(i).includes('waiting for process')) && Date.now() < deadline) await Bun.sleep(20)
      expect([1, 2, 3].map((i) => saidBy(i).includes(`waiting for process ${process.pid}`))).toEqual([true, true, true])
    } finally {
      rmSync(lockFile, { force: true })
    }
    const outputs = await Promise.all(
      procs.map(async (p) => ({ out: await new Response(p.stdout).text(), err: await new Response(p.stderr).text(), code: await p.exited })),
    )
    for (const o of outputs) expect({ code: o.code, err: o.err }).toEqual({ code: 0, err: '' })
    const results = outputs.map((o) => JSON.parse(o.out))
    expect(results.every((r) => r.ok)).toBe(true)
    expect(results.filter((r) => r.installed.length === 1)).toHaveLength(1)
    expect(recorded()).toEqual(['apt-get update -q', 'apt-get install -y -q --no-install-recommends fakebrowser'])
    expect(existsSync(lockFile)).toBe(false)
  })

  test('a lock left by a process that died is taken over', () => {
    const dead = Bun.spawnSync(['true'])
    writeFileSync(join(dir, 'lock'), String(dead.pid))
    const result = ensureSystemPackages(options({ aptGet, uid: 0, lockTimeoutMs: 2_000 }))
    expect(result).toEqual({ ok: true, installed: ['fakebrowser'] })
  })

  test('a lock held by a live process that never lets go: gives up after the timeout with one line', () => {
    writeFileSync(join(dir, 'lock'), String(process.ppid))
    try {
      const result = ensureSystemPackages(options({ aptGet, uid: 0, lockTimeoutMs: 300 }))
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.message).toContain(`waiting for process ${process.ppid}`)
      expect(recorded()).toEqual([])
    } finally {
      rmSync(join(dir, 'lock'), { force: true })
    }
  })
})

describe('missing and not installable: one line with the command to run', () => {
  const command = 'sudo apt-get update && sudo apt-get install -y --no-install-recommends fakebrowser'

  test('not root and sudo wants a password', () => {
    const result = ensureSystemPackages(options({ aptGet, uid: 1000, sudo: sudoNo }))
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.message.split('\n')).toHaveLength(1)
    expect(result.message).toContain(`run \`${command}\``)
    expect(result.message).toContain(fakeBin)
    expect(recorded()).toEqual(['sudo-refusing -n true'])
    expect(existsSync(fakeBin)).toBe(false)
  })

  test('not root and no sudo at all', () => {
    const result = ensureSystemPackages(options({ aptGet, uid: 1000, sudo: null }))
    expect(result).toEqual({
      ok: false,
      message:
        `bun test needs fakebrowser (${fakeBin} missing) and cannot install it (not root, no password-less sudo): run \`${command}\`, then run ` +
        `bun test again`,
    })
    expect(recorded()).toEqual([])
  })

  test('no apt-get on this machine (not Debian): says what is missing', () => {
    const result = ensureSystemPackages(options({ aptGet: null, uid: 0 }))
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.message.split('\n')).toHaveLength(1)
    expect(result.message).toContain('no apt-get')
    expect(result.message).toContain(`fakebrowser (${fakeBin} missing)`)
  })

  test('apt-get fails: the failing command, its log, and the end of it', () => {
    const result = ensureSystemPackages(options({ aptGet: aptGetFailing, uid: 0 }))
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.message.split('\n')[0]).toBe(
      `bun test: \`${aptGetFailing} install -y -q --no-install-recommends fakebrowser\` failed (exit 100); log: ${join(dir, 'apt.log')}`,
    )
    expect(result.message).toContain('E: Unable to locate package')
    expect(existsSync(join(dir, 'lock'))).toBe(false)
  })

  test('apt-get succeeds but the file is still not there', () => {
    const result = ensureSystemPackages(options({ aptGet: aptGetNoop, uid: 0 }))
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.message).toContain(`${fakeBin} is still missing`)
  })

  test('the instruction for people is the same command the installer runs', () => {
    expect(installCommand(['chromium', 'poppler-utils'], false)).toBe(
      'sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium poppler-utils',
    )
    expect(installCommand(['chromium'], true)).toBe('apt-get update && apt-get install -y --no-install-recommends chromium')
  })
})

test('the command form (.ci/run runs it) lists every package and exits 0 when all are present', () => {
  const run = Bun.spawnSync([process.execPath, join(ROOT, 'test/setup/system-packages.ts')], { stdout: 'pipe', stderr: 'pipe' })
  expect({ code: run.exitCode, stderr: run.stderr.toString() }).toEqual({ code: 0, stderr: '' })
  const lines = run.stdout.toString().trim().split('\n')
  expect(lines.map((l) => l.split(':')[0])).toEqual(SYSTEM_PACKAGES.map((p) => p.name))
})
