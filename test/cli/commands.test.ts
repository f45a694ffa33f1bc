// The command line as an operator meets it: `bun run src/main.ts …` in a subprocess, its own data dir,
// exit codes 0 ok / 1 error / 2 usage, --json output that is exactly one JSON object, errors on stderr.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ON_PG, tempDir } from '../helpers'
import { dropTestDatabases, freePort, onTestEngine, runJson, runLnk, storedRows } from './lnk-process'

// Each test runs lnk processes; a loaded machine makes each slow to start.
setDefaultTimeout(30_000)

const dirs: string[] = []
function dataDir() {
  const dir = tempDir('lnk-cli-')
  dirs.push(dir)
  return dir
}

afterAll(async () => {
  await dropTestDatabases()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const SECRET = /lnk_(live|test)_[0-9A-Za-z]{32}/

/** Everything the commands on `dir` stored, as text: the SQLite file's bytes, or every row of every PostgreSQL table. */
async function storedText(dir: string): Promise<string> {
  if (!ON_PG) {
    expect(existsSync(join(dir, 'lnk.db'))).toBe(true)
    return readFileSync(join(dir, 'lnk.db')).toString('latin1')
  }
  const tables = await storedRows<{ name: string }>(dir, "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'")
  expect(tables.map((t) => t.name)).toContain('api_keys')
  const parts: string[] = []
  for (const { name } of tables) parts.push(JSON.stringify(await storedRows(dir, `SELECT * FROM "${name}"`)))
  return parts.join('\n')
}

/** stderr of a failed command: exactly one line, starting "lnk: ". */
function oneLine(stderr: string) {
  const lines = stderr.split('\n').filter((l) => l !== '')
  expect(lines).toHaveLength(1)
  expect(lines[0]!.startsWith('lnk: ')).toBe(true)
  return lines[0]!
}

describe('admin commands with --json', () => {
  const dir = dataDir()
  const email = 'owner@example.com'
  let bootstrapKey: { id: string; key: string; keyPrefix: string; mode: string }
  let ciKey: { id: string; key: string; keyPrefix: string; mode: string; permissions: string[] }
  beforeAll(() => onTestEngine(dir))

  test('bootstrap prints one JSON object with the user, the workspace and a live key shown once', async () => {
    const r = await runLnk(['admin', 'bootstrap', '--email', email, '--workspace', 'Acme Inc', '--json'], { dataDir: dir })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    // Exactly one line, and that line is one JSON object.
    expect(r.stdout.endsWith('\n')).toBe(true)
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(1)
    const out = JSON.parse(r.stdout)
    expect(typeof out).toBe('object')
    expect(Array.isArray(out)).toBe(false)

    expect(out.user.id).toEqual(expect.any(String))
    expect(out.user.email).toBe(email)
    expect(out.workspace.id).toEqual(expect.any(String))
    expect(out.workspace.slug).toBe('acme-inc')
    expect(out.workspace.name).toBe('Acme Inc')
    expect(Object.keys(out.apiKey).sort()).toEqual(['id', 'key', 'keyPrefix', 'mode'])
    expect(out.apiKey.key).toMatch(/^lnk_live_[0-9A-Za-z]{32}$/)
    expect(out.apiKey.keyPrefix).toBe(out.apiKey.key.slice(0, 12))
    expect(out.apiKey.mode).toBe('live')
    bootstrapKey = out.apiKey

    // Only the hash is stored: the secret appears nowhere in the database.
    const stored = await storedText(dir)
    expect(stored).toContain(bootstrapKey.id)
    expect(stored.includes(bootstrapKey.key)).toBe(false)
  })

  test('create-key makes a test key with the permissions asked for', async () => {
    const out = await runJson(
      ['admin', 'create-key', '--workspace', 'acme-inc', '--name', 'ci', '--mode', 'test', '--permissions', 'links:read,links:write', '--json'],
      { dataDir: dir },
    )
    expect(Object.keys(out).sort()).toEqual(['id', 'key', 'keyPrefix', 'mode', 'permissions'])
    expect(out.key).toMatch(/^lnk_test_[0-9A-Za-z]{32}$/)
    expect(out.keyPrefix).toBe(out.key.slice(0, 12))
    expect(out.mode).toBe('test')
    expect(out.permissions).toEqual(['links:read', 'links:write'])
    expect(out.id).not.toBe(bootstrapKey.id)
    ciKey = out
  })

  test('list-keys lists both keys and never a secret', async () => {
    const r = await runLnk(['admin', 'list-keys', '--json'], { dataDir: dir })
    expect(r.code).toBe(0)
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(1)
    const keys = JSON.parse(r.stdout) as Record<string, unknown>[]
    expect(Array.isArray(keys)).toBe(true)
    expect(keys.map((k) => k.id).sort()).toEqual([bootstrapKey.id, ciKey.id].sort())
    for (const k of keys) {
      expect('key' in k).toBe(false)
      expect(Object.keys(k).some((name) => /hash/i.test(name))).toBe(false)
    }
    const ci = keys.find((k) => k.id === ciKey.id)!
    expect(ci).toMatchObject({ name: 'ci', mode: 'test', keyPrefix: ciKey.keyPrefix, permissions: ['links:read', 'links:write'], revokedAt: null })
    // No secret, and no hash of one, anywhere in the output.
    expect(r.stdout).not.toMatch(SECRET)
    expect(r.stdout).not.toMatch(/[0-9A-Za-z]{32}/)
    expect(r.stdout.includes(bootstrapKey.key.slice(12))).toBe(false)
    expect(r.stdout.includes(ciKey.key.slice(12))).toBe(false)

    // Filtered by workspace, same two; the text form also keeps secrets out.
    const filtered = await runJson<{ id: string }[]>(['admin', 'list-keys', '--workspace', 'acme-inc', '--json'], { dataDir: dir })
    expect(filtered.map((k) => k.id).sort()).toEqual([bootstrapKey.id, ciKey.id].sort())
    const text = await runLnk(['admin', 'list-keys'], { dataDir: dir })
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(ciKey.id)
    expect(text.stdout).not.toMatch(SECRET)
  })

  test('revoke-key sets revokedAt, and list-keys shows it', async () => {
    const before = Date.now()
    const out = await runJson(['admin', 'revoke-key', ciKey.id, '--reason', 'leaked', '--json'], { dataDir: dir })
    expect(out.id).toBe(ciKey.id)
    expect(out.revokedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(Date.parse(out.revokedAt)).toBeGreaterThanOrEqual(before - 1000)
    expect(Date.parse(out.revokedAt)).toBeLessThanOrEqual(Date.now() + 1000)
    expect(out.revokedReason).toBe('leaked')
    expect('key' in out).toBe(false)

    const keys = await runJson<{ id: string; revokedAt: string | null }[]>(['admin', 'list-keys', '--json'], { dataDir: dir })
    expect(keys.find((k) => k.id === ciKey.id)!.revokedAt).toBe(out.revokedAt)
    expect(keys.find((k) => k.id === bootstrapKey.id)!.revokedAt).toBeNull()
  })

  test('revoke-key of an unknown id exits 1', async () => {
    const r = await runLnk(['admin', 'revoke-key', 'key_doesnotexist', '--json'], { dataDir: dir })
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(oneLine(r.stderr)).toContain('key_doesnotexist')
  })

  test('create-workspace and add-member', async () => {
    const ws = await runJson(['admin', 'create-workspace', '--name', 'Other', '--owner', email, '--json'], { dataDir: dir })
    expect(ws).toMatchObject({ slug: 'other', name: 'Other' })
    expect(ws.id).toEqual(expect.any(String))

    const member = await runJson(['admin', 'add-member', '--workspace', 'other', '--email', 'b@example.com', '--json'], { dataDir: dir })
    expect(member.user.email).toBe('b@example.com')
    expect(member.user.id).toEqual(expect.any(String))
    expect(member.workspace.id).toBe(ws.id)
    expect(member.workspace.slug).toBe('other')
    expect(member.role).toBe('member')

    // The new workspace is usable by the other commands, by slug.
    const key = await runJson(['admin', 'create-key', '--workspace', 'other', '--name', 'other key', '--json'], { dataDir: dir })
    expect(key.key).toMatch(/^lnk_live_[0-9A-Za-z]{32}$/)
    const keys = await runJson<{ id: string; workspaceId: string }[]>(['admin', 'list-keys', '--workspace', 'other', '--json'], { dataDir: dir })
    expect(keys.map((k) => [k.id, k.workspaceId])).toEqual([[key.id, ws.id]])
  })

  test('create-workspace with a slug already taken, or an unknown owner, exits 1', async () => {
    const taken = await runLnk(['admin', 'create-workspace', '--name', 'ACME inc', '--owner', email, '--json'], { dataDir: dir })
    expect(taken.code).toBe(1)
    expect(oneLine(taken.stderr)).toContain('acme-inc')
    const unknown = await runLnk(['admin', 'create-workspace', '--name', 'Third', '--owner', 'nobody@example.com'], { dataDir: dir })
    expect(unknown.code).toBe(1)
    expect(oneLine(unknown.stderr)).toContain('nobody@example.com')
  })

  test('create-key --permissions bogus exits 1 naming the permission, and creates nothing', async () => {
    const before = await runJson<unknown[]>(['admin', 'list-keys', '--json'], { dataDir: dir })
    const r = await runLnk(['admin', 'create-key', '--workspace', 'acme-inc', '--name', 'x', '--permissions', 'links:read,bogus', '--json'], { dataDir: dir })
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(oneLine(r.stderr)).toContain('"bogus"')
    const after = await runJson<unknown[]>(['admin', 'list-keys', '--json'], { dataDir: dir })
    expect(after).toHaveLength(before.length)
  })

  test('create-key for an unknown workspace exits 1', async () => {
    const r = await runLnk(['admin', 'create-key', '--workspace', 'nope', '--name', 'x'], { dataDir: dir })
    expect(r.code).toBe(1)
    expect(oneLine(r.stderr)).toContain('nope')
  })
})

// The SQLite file under the data directory; `lnk migrate` on PostgreSQL: test/cli/database-url.test.ts.
describe.skipIf(ON_PG)('migrate', () => {
  test('applies the migrations, then has nothing to apply', async () => {
    const dir = dataDir()
    const first = await runLnk(['migrate'], { dataDir: dir })
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(/^Applied \d+ migration\(s\)/)
    expect(existsSync(join(dir, 'lnk.db'))).toBe(true)
    const second = await runLnk(['migrate'], { dataDir: dir })
    expect(second.code).toBe(0)
    expect(second.stderr).toBe('')
    expect(second.stdout).toMatch(/^Nothing to apply/)
    // --data-dir works as well as the variable.
    const viaFlag = await runLnk(['migrate', '--data-dir', dir], { dataDir: join(dir, 'unused') })
    expect(viaFlag.code).toBe(0)
    expect(viaFlag.stdout).toMatch(/^Nothing to apply/)
    expect(existsSync(join(dir, 'unused'))).toBe(false)
  })
})

describe('usage errors exit 2 with help on stderr', () => {
  const dir = dataDir()
  const cases: [string, string[], RegExp, string][] = [
    ['admin bootstrap without --email', ['admin', 'bootstrap', '--workspace', 'W'], /--email/, 'Usage: lnk admin bootstrap'],
    ['an unknown command', ['frobnicate'], /frobnicate/, 'Usage: lnk [command]'],
    ['an unknown admin command', ['admin', 'frobnicate'], /frobnicate/, 'Usage: lnk admin <command>'],
    ['admin without a command', ['admin'], /./, 'Usage: lnk admin <command>'],
    ['an unknown flag', ['admin', 'list-keys', '--bogus'], /--bogus/, 'Usage: lnk admin list-keys'],
    ['an unknown flag on serve', ['serve', '--bogus'], /--bogus/, 'Usage: lnk serve'],
    ['admin revoke-key without ID', ['admin', 'revoke-key'], /argument/, 'Usage: lnk admin revoke-key'],
    ['admin backup without FILE', ['admin', 'backup'], /argument/, 'Usage: lnk admin backup'],
    ['an extra argument', ['migrate', 'now'], /now/, 'Usage: lnk migrate'],
    ['--mode bogus', ['admin', 'create-key', '--workspace', 'acme-inc', '--name', 'x', '--mode', 'bogus'], /--mode/, 'Usage: lnk admin create-key'],
    [
      '--role bogus',
      ['admin', 'add-member', '--workspace', 'acme-inc', '--email', 'c@example.com', '--role', 'bogus'],
      /--role/,
      'Usage: lnk admin add-member',
    ],
  ]
  for (const [name, args, message, help] of cases) {
    test(name, async () => {
      const r = await runLnk(args, { dataDir: dir, env: { LNK_PORT: String(freePort()), LNK_HOST: '127.0.0.1' } })
      expect(r.code).toBe(2)
      expect(r.stdout).toBe('')
      const [first, ...rest] = r.stderr.split('\n')
      expect(first).toMatch(/^lnk: /)
      expect(first).toMatch(message)
      expect(rest.join('\n')).toContain(help)
    })
  }
})

describe('--help exits 0 and touches nothing', () => {
  const cases: [string[], string][] = [
    [['--help'], 'Usage: lnk [command]'],
    [['-h'], 'Usage: lnk [command]'],
    [['serve', '--help'], 'Usage: lnk serve'],
    [['migrate', '--help'], 'Usage: lnk migrate'],
    [['admin', '--help'], 'Usage: lnk admin <command>'],
    [['admin', 'bootstrap', '--help'], 'Usage: lnk admin bootstrap'],
    [['admin', 'create-key', '--help'], 'Usage: lnk admin create-key'],
    [['admin', 'list-keys', '--help'], 'Usage: lnk admin list-keys'],
    [['admin', 'revoke-key', '--help'], 'Usage: lnk admin revoke-key'],
    [['admin', 'create-workspace', '--help'], 'Usage: lnk admin create-workspace'],
    [['admin', 'add-member', '--help'], 'Usage: lnk admin add-member'],
    [['admin', 'backup', '--help'], 'Usage: lnk admin backup'],
    [['admin', 'revoke-key', '-h'], 'Usage: lnk admin revoke-key'],
  ]
  test.each(cases)('lnk %p', async (args, usage) => {
    const parent = dataDir()
    const dir = join(parent, 'never-created')
    // Bad settings too: help must not read configuration, open the database or listen.
    const r = await runLnk(args, { dataDir: dir, env: { LNK_PORT: 'not-a-port' } })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(usage)
    expect(existsSync(dir)).toBe(false)
  })

  test('serve --help lists every setting with its variable', async () => {
    const r = await runLnk(['serve', '--help'], { dataDir: dataDir() })
    for (const name of [
      'LNK_PORT',
      'LNK_HOST',
      'LNK_DATA_DIR',
      'LNK_BASE_URL',
      'LNK_SHORT_DOMAINS',
      'LNK_TRUST_PROXY',
      'LNK_WEBHOOK_ALLOWED_CIDRS',
      'LNK_WEBHOOK_ALLOW_HTTP',
    ]) {
      expect(r.stdout).toContain(name)
    }
  })
})

describe('bad configuration exits 1 with one line naming the setting', () => {
  const cases: [string, string[], Record<string, string>, string][] = [
    ['LNK_PORT=abc', ['serve'], { LNK_PORT: 'abc' }, 'LNK_PORT'],
    ['LNK_PORT=70000', ['serve'], { LNK_PORT: '70000' }, 'LNK_PORT'],
    ['LNK_BASE_URL=ftp://x', ['serve'], { LNK_BASE_URL: 'ftp://x' }, 'LNK_BASE_URL'],
    ['LNK_BASE_URL with a path', ['serve'], { LNK_BASE_URL: 'https://lnk.example.com/api' }, 'LNK_BASE_URL'],
    ['LNK_HOST=not-an-address', ['serve'], { LNK_HOST: 'not-an-address' }, 'LNK_HOST'],
    ['LNK_LOG_LEVEL=loud', ['serve'], { LNK_LOG_LEVEL: 'loud' }, 'LNK_LOG_LEVEL'],
    ['LNK_WEBHOOK_ALLOWED_CIDRS=10.0.0.0/99', ['serve'], { LNK_WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/99' }, 'LNK_WEBHOOK_ALLOWED_CIDRS'],
    ['serve --port abc', ['serve', '--port', 'abc'], {}, '--port'],
  ]
  for (const [name, args, env, variable] of cases) {
    test(name, async () => {
      const parent = dataDir()
      const dir = join(parent, 'data')
      // A valid loopback listener and free port, so a wrongly accepted setting would start a server that
      // never exits (and the bounded run would fail), not bind 0.0.0.0:8080.
      const r = await runLnk(args, { dataDir: dir, env: { LNK_HOST: '127.0.0.1', LNK_PORT: String(freePort()), ...env }, timeoutMs: 20_000 })
      expect(r.code).toBe(1)
      expect(r.stdout).toBe('')
      expect(oneLine(r.stderr)).toContain(variable)
      // Refused before touching the data directory.
      expect(existsSync(dir)).toBe(false)
    })
  }
})

// Where the SQLite file would go, which PostgreSQL never uses (its unreachable URL: test/cli/database-url.test.ts).
describe.skipIf(ON_PG)('a data directory that cannot be created exits 1 naming LNK_DATA_DIR', () => {
  for (const args of [['serve'], ['migrate'], ['admin', 'list-keys', '--json'], ['admin', 'bootstrap', '--email', 'a@example.com', '--workspace', 'W']]) {
    test(args.join(' '), async () => {
      const parent = dataDir()
      const file = join(parent, 'a-file')
      writeFileSync(file, 'not a directory')
      const r = await runLnk(args, { dataDir: join(file, 'data'), env: { LNK_HOST: '127.0.0.1', LNK_PORT: String(freePort()) }, timeoutMs: 20_000 })
      expect(r.code).toBe(1)
      expect(r.stdout).toBe('')
      expect(oneLine(r.stderr)).toContain('LNK_DATA_DIR')
      expect(readFileSync(file, 'utf8')).toBe('not a directory')
    })
  }
})
