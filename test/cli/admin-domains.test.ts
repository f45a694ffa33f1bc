// Custom domains from the command line: add-domain, verify-domain and list-domains run as the real `lnk`
// against a temporary data directory and a loopback DNS server standing in for the customer's provider.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { VERIFY_EVERY_MS } from '../../src/modules/domains/verdict'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { openRuntime } from '../../src/runtime'
import { startDnsServer, type DnsServer } from '../domains/_dns'
import { tempDir } from '../helpers'
import { dropTestDatabases, onTestEngine, runJson, runLnk } from './lnk-process'

// Each test runs several lnk processes one after another; a loaded machine makes each slow to start.
setDefaultTimeout(60_000)

const CNAME_TARGET = 'cname.lnk-test.example'
const dir = tempDir('lnk-cli-domains-')
let dns: DnsServer
let env: Record<string, string>
let databaseUrl: string | null
const lnk = (args: string[]) => runLnk(['admin', ...args], { dataDir: dir, env })
const lnkJson = <T = any>(args: string[]) => runJson<T>(['admin', ...args, '--json'], { dataDir: dir, env })

beforeAll(async () => {
  dns = await startDnsServer()
  databaseUrl = await onTestEngine(dir)
  env = { LNK_DNS_SERVERS: dns.address, LNK_DOMAIN_CNAME_TARGET: CNAME_TARGET }
  await lnkJson(['bootstrap', '--email', 'ops@example.com', '--workspace', 'Ops'])
  await lnkJson(['create-workspace', '--name', 'Other', '--owner', 'ops@example.com'])
})
afterAll(async () => {
  await dns?.close()
  await dropTestDatabases()
  rmSync(dir, { recursive: true, force: true })
})

/** What time passing would do: the domain's last check lies VERIFY_EVERY_MS back, so it may be checked again. */
async function forgetLastCheck(id: string) {
  // The database the commands use, on either engine, as another process would open it.
  const rt = await openRuntime(loadConfig({ LNK_DATA_DIR: dir, ...(databaseUrl ? { LNK_DATABASE_URL: databaseUrl } : {}) }), { log: silentLogger })
  try {
    expect(await rt.modules.domains.ctx.domains.update(id, { lastCheckedAt: Date.now() - VERIFY_EVERY_MS })).toBeDefined()
  } finally {
    await rt.close()
  }
}

let added: any

test('add-domain prints the id and the records to create; --json answers the domain', async () => {
  const text = await lnk(['add-domain', '--workspace', 'ops', '--domain', 'Go.Example.com'])
  expect(text.code).toBe(0)
  const id = /\((dom_[^)]+)\)/.exec(text.stdout)?.[1]
  expect(id).toBeDefined()
  expect(text.stdout).toContain(`lnk admin verify-domain ${id}`)
  expect(text.stdout).toMatch(/TYPE\s+NAME\s+VALUE/)
  expect(text.stdout).toMatch(/TXT\s+_lnk-challenge\.go\.example\.com\s+lnk-verify=\S+/)
  expect(text.stdout).toMatch(new RegExp(`CNAME\\s+go\\.example\\.com\\s+${CNAME_TARGET.replaceAll('.', '\\.')}`))

  added = await lnkJson(['add-domain', '--workspace', 'ops', '--domain', 'bücher.example.org', '--root-redirect-url', 'https://example.org/'])
  expect(added).toMatchObject({
    domain: 'xn--bcher-kva.example.org',
    unicodeDomain: 'bücher.example.org',
    verificationStatus: 'pending',
    dnsStatus: 'unknown',
    served: false,
    rootRedirectUrl: 'https://example.org/',
  })
  expect(added.records.map((r: any) => [r.type, r.name])).toEqual([
    ['TXT', '_lnk-challenge.xn--bcher-kva.example.org'],
    ['CNAME', 'xn--bcher-kva.example.org'],
  ])
  expect(added.records[1].value).toBe(CNAME_TARGET)
})

test('verify-domain: pending before the records exist, verified once they do', async () => {
  const before = await lnk(['verify-domain', added.id])
  expect(before.code).toBe(0)
  expect(before.stdout).toContain(
    `bücher.example.org (xn--bcher-kva.example.org) (${added.id}): verification pending, dns misconfigured, ssl unmanaged, not served`,
  )
  expect(before.stdout).toMatch(/TYPE\s+NAME\s+EXPECTED\s+SEEN/)
  expect(before.stdout).toMatch(new RegExp(`TXT\\s+_lnk-challenge\\.xn--bcher-kva\\.example\\.org\\s+${added.records[0].value}\\s+\\(none\\)\\s+missing`))

  // A second check within 10 s is refused: one line, exit 1.
  const again = await lnk(['verify-domain', added.id])
  expect(again.code).toBe(1)
  expect(again.stderr.trim()).toMatch(/^lnk: This domain was checked moments ago; check again in \d+ s$/)

  for (const r of added.records) dns.set(r.name, r.type, [r.value])
  await forgetLastCheck(added.id)
  const text = await lnk(['verify-domain', added.id])
  expect(text.code).toBe(0)
  expect(text.stdout).toContain(`(${added.id}): verification verified, dns ok, ssl unmanaged, served`)
  expect(text.stdout).toMatch(
    new RegExp(`CNAME\\s+xn--bcher-kva\\.example\\.org\\s+${CNAME_TARGET.replaceAll('.', '\\.')}\\s+${CNAME_TARGET.replaceAll('.', '\\.')}\\s+ok`),
  )
  expect(text.stdout).toContain('Next scheduled check: ')

  await forgetLastCheck(added.id)
  const json = await lnkJson(['verify-domain', added.id])
  expect(json).toMatchObject({ id: added.id, verificationStatus: 'verified', dnsStatus: 'ok', served: true, verifiedAt: expect.any(String) })
  expect(json.records.map((r: any) => [r.type, r.seen, r.ok])).toEqual([
    ['TXT', [added.records[0].value], true],
    ['CNAME', [CNAME_TARGET], true],
  ])
})

test('list-domains: of one workspace or of every one, as lines or JSON', async () => {
  const other = await lnkJson(['add-domain', '--workspace', 'other', '--domain', 'links.example.net'])
  const ops = await lnkJson<any[]>(['list-domains', '--workspace', 'ops'])
  expect(ops.map((d) => d.domain)).toEqual(['go.example.com', 'xn--bcher-kva.example.org'])
  expect(ops[1]).toMatchObject({ id: added.id, verificationStatus: 'verified', dnsStatus: 'ok', served: true, workspaceId: expect.stringMatching(/^ws_/) })
  const every = await lnkJson<any[]>(['list-domains'])
  expect(every.map((d) => d.domain)).toEqual(['go.example.com', 'xn--bcher-kva.example.org', 'links.example.net'])
  expect(every[2]).toMatchObject({ id: other.id, verificationStatus: 'pending' })
  expect(every[2].workspaceId).not.toBe(every[0].workspaceId)

  const text = await lnk(['list-domains'])
  expect(text.code).toBe(0)
  const lines = text.stdout.trim().split('\n')
  expect(lines).toHaveLength(3)
  expect(lines[1]).toMatch(
    new RegExp(`^${added.id}\\s+bücher\\.example\\.org \\(xn--bcher-kva\\.example\\.org\\)\\s+ws_\\S+\\s+verified\\s+dns ok\\s+ssl unmanaged\\s+served$`),
  )
  expect(lines[2]).toMatch(new RegExp(`^${other.id}\\s+links\\.example\\.net\\s+ws_\\S+\\s+pending\\s+dns unknown\\s+ssl unmanaged\\s+not served$`))
  const none = await lnk(['list-domains', '--workspace', 'nope'])
  expect(none.code).toBe(1)
  expect(none.stderr.trim()).toBe('lnk: workspace "nope" not found')
})

test('usage errors exit 2; refusals exit 1 with one line naming the problem', async () => {
  const missing = await lnk(['add-domain', '--workspace', 'ops'])
  expect(missing.code).toBe(2)
  expect(missing.stderr).toContain('--domain is required')
  expect(missing.stderr).toContain('Usage: lnk admin add-domain')
  const noId = await lnk(['verify-domain'])
  expect(noId.code).toBe(2)
  expect(noId.stderr).toContain('Usage: lnk admin verify-domain')

  const unknown = await lnk(['verify-domain', 'dom_nope'])
  expect(unknown.code).toBe(1)
  expect(unknown.stderr.trim()).toBe('lnk: Domain dom_nope not found')

  for (const [domain, problem] of [
    ['localhost', 'at least two labels'],
    ['192.0.2.1', 'not an IP address'],
    ['go.example.com:8080', 'must not carry a port'],
  ]) {
    const bad = await lnk(['add-domain', '--workspace', 'ops', '--domain', domain!])
    expect(bad.code).toBe(1)
    expect(bad.stderr.trim().split('\n')).toHaveLength(1)
    expect(bad.stderr).toContain(`--domain: must`)
    expect(bad.stderr).toContain(problem!)
  }
  const url = await lnk(['add-domain', '--workspace', 'ops', '--domain', 'x.example.com', '--not-found-url', 'ftp://example.com/'])
  expect(url.code).toBe(1)
  expect(url.stderr.trim()).toBe('lnk: Invalid options: --not-found-url: must use http or https')
  const taken = await lnk(['add-domain', '--workspace', 'ops', '--domain', 'go.example.com'])
  expect(taken.code).toBe(1)
  expect(taken.stderr).toContain('go.example.com is already a domain of this workspace')

  for (const sub of ['add-domain', 'verify-domain', 'list-domains']) {
    const help = await lnk([sub, '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain(`Usage: lnk admin ${sub}`)
  }
  const all = await lnk(['--help'])
  for (const sub of ['add-domain', 'verify-domain', 'list-domains']) expect(all.stdout).toContain(`  ${sub} `)
})
