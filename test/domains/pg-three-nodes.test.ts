// Three `lnk serve` processes on one PostgreSQL behind one real Caddy (issue 34), as docs/scale-out.md draws
// it: Caddy load-balances visitors over the nodes and asks its TLS question (on-demand TLS) through a
// load-balanced site of its own (test/domains/nodes.Caddyfile). A custom domain is added and verified
// through one node against a loopback DNS server; the first HTTPS request for a link on it gets a
// certificate from Caddy's internal CA during the handshake; every node then reads the domain's sslStatus as
// active. Everything listens on 127.0.0.1. Needs PostgreSQL: LNK_TEST_DATABASE_URL, or the private cluster
// test/setup/postgres.ts starts.
//
// Caddy reaches the nodes from 127.0.0.1 here, which is always allowed: tests use loopback only, so a TLS
// proxy outside loopback (LNK_TLS_ASK_ALLOWED_CIDRS) is tried with recorded socket addresses in
// tls-proxy.test.ts. The nodes are started with the setting all the same, as an operator would give it. A
// visitor from the Internet asking /internal/tls/ask through Caddy is played through a stand-in CDN
// (trustLoopbackForwarders).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers'
import { freePort, runJson, startServe, type ServerProcess } from '../cli/lnk-process'
import { createTestDatabase, type TestDatabase } from '../setup/postgres'
import { httpsGet, requireCaddy, startCaddy, type Caddy } from './_caddy'
import { startDnsServer, type DnsServer } from './_dns'

const NODES_CADDYFILE = join(import.meta.dir, 'nodes.Caddyfile')
const SHORT = 'lnk.test'
const DOMAIN = 'go.three-nodes.test'
const UNKNOWN = 'nobody.three-nodes.test'
const DESTINATION = 'https://example.com/three-nodes'

let pg: TestDatabase | undefined
let dns: DnsServer | undefined
let caddy: Caddy | undefined
let nodes: ServerProcess[] = []
const dirs: string[] = []
let key = ''

beforeAll(async () => {
  // Fails (not skips) without Caddy, with the command that installs it.
  requireCaddy()
  dns = await startDnsServer()
  pg = await createTestDatabase()
  // lnk's plain-HTTP domain check goes to Caddy's HTTP port, so that port is fixed before the nodes start.
  const httpPort = freePort()
  const env = {
    LNK_DATABASE_URL: pg.url,
    LNK_DATABASE_POOL_SIZE: '4',
    LNK_BASE_URL: `https://${SHORT}`,
    LNK_SHORT_DOMAINS: SHORT,
    LNK_TRUST_PROXY: '1',
    LNK_TLS_MODE: 'caddy',
    // What an operator with Caddy on 10.89.0.2 would give; here Caddy is on loopback (see the file comment).
    LNK_TLS_ASK_ALLOWED_CIDRS: '10.89.0.0/24',
    LNK_DNS_SERVERS: dns.address,
    // The A record below is not among these addresses: the domain is found pointing here by the plain-HTTP
    // check, which goes through Caddy's port-80 site to whichever node Caddy picks.
    LNK_DOMAIN_IPS: '203.0.113.10',
    LNK_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    LNK_DOMAIN_CHECK_PORT: String(httpPort),
    LNK_LOG_LEVEL: 'warn',
  }
  for (let i = 0; i < 3; i++) dirs.push(tempDir())
  // All at once: the migration lock makes one of them migrate.
  nodes = await Promise.all(dirs.map((dir) => startServe(dir, env, 40_000)))
  const adminDir = tempDir()
  dirs.push(adminDir)
  key = (
    await runJson<{ apiKey: { key: string } }>(['admin', 'bootstrap', '--email', 'ops@example.com', '--workspace', 'Ops', '--json'], {
      dataDir: adminDir,
      env: { LNK_DATABASE_URL: pg.url },
    })
  ).apiKey.key
  caddy = await startCaddy({
    caddyfile: NODES_CADDYFILE,
    env: {
      LNK_NODE1: `127.0.0.1:${nodes[0]!.port}`,
      LNK_NODE2: `127.0.0.1:${nodes[1]!.port}`,
      LNK_NODE3: `127.0.0.1:${nodes[2]!.port}`,
      LNK_ASK_PORT: String(freePort()),
    },
    httpPort,
    adjust: trustLoopbackForwarders,
  })
}, 120_000)

/**
 * The visitors of a test are on loopback, which the nodes trust: to play a visitor from the Internet, the
 * test stands a CDN in front of Caddy. Caddy's reverse proxies are told to trust 127.0.0.1 as a proxy
 * (`trusted_proxies`), so they keep the X-Forwarded-For a request arrives with and append the address they
 * saw, as behind a CDN; without it they replace the header with that address. Nothing else changes:
 * requests sent without the header reach the nodes as before.
 */
function trustLoopbackForwarders(config: any) {
  const handlers: any[] = []
  const walk = (value: unknown, depth: number) => {
    if (depth > 20 || value === null || typeof value !== 'object') return
    if ((value as { handler?: string }).handler === 'reverse_proxy') handlers.push(value)
    for (const inner of Object.values(value)) walk(inner, depth + 1)
  }
  walk(config.apps.http.servers, 0)
  if (handlers.length < 3) throw new Error(`expected a reverse_proxy per site in nodes.Caddyfile, found ${handlers.length}`)
  for (const handler of handlers) handler.trusted_proxies = ['127.0.0.1/32']
}

afterAll(async () => {
  // Each one even when an earlier one (or a test) failed: no Caddy or node may outlive the file.
  await caddy?.stop()
  for (const node of nodes) node.kill()
  await Promise.all(nodes.map((node) => node.proc.exited))
  await dns?.close()
  await pg?.drop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

async function api(node: ServerProcess, path: string, init: { method?: string; json?: unknown } = {}) {
  const res = await fetch(`${node.url}/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${key}`, ...(init.json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

/** Polls `probe` every 50 ms until it holds, at most `ms`; throws with `what` otherwise. */
async function within(ms: number, what: string, probe: () => Promise<boolean>) {
  const deadline = Date.now() + ms
  for (let i = 0; i < 1_000; i++) {
    if (await probe()) return
    if (Date.now() > deadline) break
    await Bun.sleep(50)
  }
  throw new Error(`${what}: not within ${ms} ms`)
}

/** A node's count of answered requests of one route and status, from its /metrics. */
async function served(node: ServerProcess, route: string, status: number): Promise<number> {
  const text = await (await fetch(`${node.url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`lnk_http_requests_total{method="GET",route="${route}",status="${status}"} `))
  return line === undefined ? 0 : Number(line.split(' ').pop())
}

const counts = (route: string, status: number) => Promise.all(nodes.map((node) => served(node, route, status)))

/** A failure message that carries what Caddy logged: the reason a handshake or a proxy hop went wrong. */
const withCaddyLog = (what: string) => `${what}\n--- caddy log (end) ---\n${caddy?.log().split('\n').slice(-20).join('\n')}`

describe('three nodes on PostgreSQL behind one Caddy', () => {
  let domainId = ''
  let slug = ''

  test('the domain is added and verified through one node; the other nodes serve it and make links on it', async () => {
    const [first, second] = nodes as [ServerProcess, ServerProcess, ServerProcess]
    const created = await api(first, '/domains', { method: 'POST', json: { domain: DOMAIN } })
    expect(created.status).toBe(201)
    const data = created.body.data
    domainId = data.id
    const txt = data.records.find((r: { type: string }) => r.type === 'TXT')
    expect(txt?.name).toBe(`_lnk-challenge.${DOMAIN}`)
    // What the customer does at their DNS provider: the challenge, and the address of the Caddy in front.
    dns!.set(txt.name, 'TXT', [txt.value])
    dns!.set(DOMAIN, 'A', ['127.0.0.1'])

    const verified = await api(first, `/domains/${domainId}/verify`, { method: 'POST' })
    expect(verified.status).toBe(200)
    const state = verified.body.data
    expect({ verificationStatus: state.verificationStatus, dnsStatus: state.dnsStatus, reached: state.httpCheck?.reached, sslStatus: state.sslStatus }).toEqual(
      {
        verificationStatus: 'verified',
        dnsStatus: 'ok',
        reached: true,
        sslStatus: 'pending',
      },
    )

    // Another node heard of it (the bus over NOTIFY): a link on the domain is made there.
    let link: { status: number; body: any } = { status: 0, body: null }
    await within(3_000, `a link on ${DOMAIN} made through the second node`, async () => {
      link = await api(second, '/links', { method: 'POST', json: { destinationUrl: DESTINATION, domain: DOMAIN } })
      return link.status === 201
    })
    slug = link.body.data.slug
    expect(link.body.data.shortUrl).toBe(`https://${DOMAIN}/${slug}`)

    // Caddy's question, asked of each node directly: yes for the domain, no for a hostname nobody added.
    for (const node of nodes) {
      const ask = (domain: string) => fetch(`${node.url}/internal/tls/ask?domain=${encodeURIComponent(domain)}`).then((r) => r.status)
      await within(3_000, `node ${node.port} approves ${DOMAIN}`, async () => (await ask(DOMAIN)) === 200)
      expect(await ask(UNKNOWN)).toBe(404)
    }
  }, 30_000)

  test("HTTPS through Caddy: a certificate from Caddy's internal CA during the first handshake, the link redirects, and the visits spread over the " +
    'nodes', async () => {
    expect(slug).not.toBe('')
    expect(caddy!.certificateIssuedFor(DOMAIN)).toBe(false)
    const asksBefore = await counts('/internal/tls/ask', 200)
    const redirectsBefore = await counts('redirect', 302)
    // The client trusts only Caddy's internal root: the handshake succeeds only with a certificate it issued.
    const first = await httpsGet(DOMAIN, caddy!.httpsPort, `/${slug}`, caddy!.rootCaPem).catch((err: Error) => {
      throw new Error(withCaddyLog(`HTTPS to ${DOMAIN} failed: ${err.message}`))
    })
    expect({ status: first.status, location: first.headers.location }).toEqual({ status: 302, location: DESTINATION })
    expect(caddy!.certificateIssuedFor(DOMAIN)).toBe(true)
    // Caddy asked through its load-balanced site (one question, one node answered 200).
    const asksAfter = await counts('/internal/tls/ask', 200)
    expect(asksAfter.reduce((sum, n, i) => sum + n - asksBefore[i]!, 0)).toBeGreaterThanOrEqual(1)

    for (let i = 0; i < 5; i++) {
      const res = await httpsGet(DOMAIN, caddy!.httpsPort, `/${slug}`, caddy!.rootCaPem)
      expect({ status: res.status, location: res.headers.location }).toEqual({ status: 302, location: DESTINATION })
    }
    // Round robin over three nodes, six visits: each node answered some.
    const redirectsAfter = await counts('redirect', 302)
    const perNode = redirectsAfter.map((n, i) => n - redirectsBefore[i]!)
    expect(perNode.reduce((a, b) => a + b, 0)).toBe(6)
    expect(perNode.every((n) => n >= 1)).toBe(true)
  }, 60_000)

  test("every node reads the domain's sslStatus as active", async () => {
    expect(domainId).not.toBe('')
    for (const node of nodes) {
      let seen: any = null
      // Recorded beside the redirect, not before its answer: the write may land a moment later.
      await within(3_000, `node ${node.port} reads sslStatus active`, async () => {
        const res = await api(node, `/domains/${domainId}`)
        seen = res.body?.data
        return res.status === 200 && seen.sslStatus === 'active'
      })
      expect({ domain: seen.domain, verificationStatus: seen.verificationStatus, served: seen.served, sslStatus: seen.sslStatus }).toEqual({
        domain: DOMAIN,
        verificationStatus: 'verified',
        served: true,
        sslStatus: 'active',
      })
    }
  }, 30_000)

  test("a visitor's request for /internal/tls/ask through Caddy is refused by every node; it names the visitor", async () => {
    const before = await counts('/internal/tls/ask', 403)
    for (let i = 0; i < 3; i++) {
      const res = await httpsGet(DOMAIN, caddy!.httpsPort, `/internal/tls/ask?domain=${UNKNOWN}`, caddy!.rootCaPem, 15_000, {
        'x-forwarded-for': '198.51.100.7',
      })
      expect({ status: res.status, body: res.body }).toEqual({
        status: 403,
        body: 'proxied for 198.51.100.7: only loopback and LNK_TLS_ASK_ALLOWED_CIDRS may ask, through proxies within them',
      })
    }
    // Round robin: one refusal on each node.
    const after = await counts('/internal/tls/ask', 403)
    expect(after.map((n, i) => n - before[i]!)).toEqual([1, 1, 1])
    expect(caddy!.certificateIssuedFor(UNKNOWN)).toBe(false)
  }, 30_000)

  test('HTTPS on a hostname no node serves: the handshake fails and no certificate is issued', async () => {
    const outcome = await httpsGet(UNKNOWN, caddy!.httpsPort, '/anything', caddy!.rootCaPem).then(
      (res) => `answered ${res.status}`,
      (err: NodeJS.ErrnoException) => `rejected ${err.code ?? err.message}`,
    )
    expect(outcome).toMatch(/^rejected .*(SSL|TLS)/)
    expect(caddy!.certificateIssuedFor(UNKNOWN)).toBe(false)
  }, 30_000)
})
