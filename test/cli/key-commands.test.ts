// Key management from the command line: update-key, pause-key, resume-key, rotate-key (the operator is
// bound by no key's restrictions), checked against the API the keys are used on.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../helpers'
import { dropTestDatabases, onTestEngine, runJson, runLnk } from './lnk-process'

// Each test runs several lnk processes one after another; a loaded machine makes each slow to start.
setDefaultTimeout(60_000)

const dir = tempDir('lnk-cli-keys-')
let key: { id: string; key: string }
afterAll(async () => {
  await dropTestDatabases()
  rmSync(dir, { recursive: true, force: true })
})
beforeAll(async () => {
  await onTestEngine(dir)
  key = (await runJson(['admin', 'bootstrap', '--email', 'ops@example.com', '--workspace', 'Ops', '--json'], { dataDir: dir })).apiKey
})

test('update-key sets every restriction and "none" clears them', async () => {
  const schedule = { timezone: 'America/New_York', days: [1, 2, 3, 4, 5], startMinute: 540, endMinute: 1020 }
  const out = await runJson(
    [
      'admin',
      'update-key',
      key.id,
      '--name',
      'ops key',
      '--permissions',
      'links:read,analytics:read',
      '--allowed-ips',
      '192.0.2.0/24,2001:db8::/32',
      '--scope-domains',
      'go.example',
      '--scope-tags',
      'a,b',
      '--scope-folders',
      'fld_a1',
      '--schedule',
      JSON.stringify(schedule),
      '--monthly-call-cap',
      '1000',
      '--rate-limit',
      '60',
      '--expires-at',
      '2099-01-01T00:00:00Z',
      '--json',
    ],
    { dataDir: dir },
  )
  expect(out).toMatchObject({
    id: key.id,
    name: 'ops key',
    permissions: ['links:read', 'analytics:read'],
    allowedIps: ['192.0.2.0/24', '2001:db8::/32'],
    scopeFilters: { domains: ['go.example'], tags: ['a', 'b'], folders: ['fld_a1'] },
    schedule,
    monthlyCallCap: 1000,
    rateLimitOverride: 60,
    expiresAt: '2099-01-01T00:00:00.000Z',
  })
  const cleared = await runJson(
    [
      'admin',
      'update-key',
      key.id,
      '--permissions',
      '*',
      '--allowed-ips',
      'none',
      '--scope-domains',
      'none',
      '--scope-tags',
      'none',
      '--schedule',
      'none',
      '--monthly-call-cap',
      'none',
      '--rate-limit',
      'none',
      '--expires-at',
      'none',
      '--json',
    ],
    { dataDir: dir },
  )
  expect(cleared).toMatchObject({
    permissions: ['*'],
    allowedIps: [],
    scopeFilters: null,
    schedule: null,
    monthlyCallCap: null,
    rateLimitOverride: null,
    expiresAt: null,
  })
})

test('pause-key and resume-key', async () => {
  const paused = await runJson(['admin', 'pause-key', key.id, '--reason', 'audit', '--json'], { dataDir: dir })
  expect(paused.pausedAt).toEqual(expect.any(String))
  expect(paused.pausedReason).toBe('audit')
  const resumed = await runJson(['admin', 'resume-key', key.id, '--json'], { dataDir: dir })
  expect(resumed.pausedAt).toBeNull()
})

test('rotate-key prints a new secret once and keeps the old one for the grace', async () => {
  const out = await runJson(['admin', 'rotate-key', key.id, '--grace-hours', '2', '--json'], { dataDir: dir })
  expect(out.key).toMatch(/^lnk_live_[0-9A-Za-z]{32}$/)
  expect(out.key).not.toBe(key.key)
  expect(out).toMatchObject({ id: key.id, rotating: true, graceHoursRemaining: 2, keyPrefix: out.key.slice(0, 12) })
  const now = await runJson(['admin', 'rotate-key', key.id, '--grace-hours', '0', '--json'], { dataDir: dir })
  expect(now).toMatchObject({ rotating: false, graceHoursRemaining: 0 })
})

test('bad values are usage errors (exit 2) or refused settings (exit 1), each naming the problem', async () => {
  const nothing = await runLnk(['admin', 'update-key', key.id], { dataDir: dir })
  expect(nothing.code).toBe(2)
  expect(nothing.stderr).toContain('name at least one setting')
  const rate = await runLnk(['admin', 'update-key', key.id, '--rate-limit', '0'], { dataDir: dir })
  expect(rate.code).toBe(2)
  expect(rate.stderr).toContain('--rate-limit')
  const schedule = await runLnk(['admin', 'update-key', key.id, '--schedule', '{"timezone":"UTC"}'], { dataDir: dir })
  expect(schedule.code).toBe(2)
  const ip = await runLnk(['admin', 'update-key', key.id, '--allowed-ips', 'bogus'], { dataDir: dir })
  expect(ip.code).toBe(1)
  expect(ip.stderr).toContain('"bogus" is not an IPv4/IPv6 address or CIDR')
  const zone = await runLnk(['admin', 'update-key', key.id, '--schedule', '{"timezone":"Mars/Olympus","days":[1],"startMinute":0,"endMinute":60}'], {
    dataDir: dir,
  })
  expect(zone.code).toBe(1)
  expect(zone.stderr).toContain('Mars/Olympus')
  const unknown = await runLnk(['admin', 'pause-key', 'key_nope'], { dataDir: dir })
  expect(unknown.code).toBe(1)
  for (const sub of ['update-key', 'pause-key', 'resume-key', 'rotate-key']) {
    const help = await runLnk(['admin', sub, '--help'], { dataDir: dir })
    expect(help.code).toBe(0)
    expect(help.stdout).toContain(`Usage: lnk admin ${sub}`)
  }
})
