// A custom domain end to end through the real Caddy, as an operator runs it (LNK_TLS_MODE=caddy with
// deploy/Caddyfile): the domain is added and verified against a loopback DNS server, a link is made on it,
// and HTTPS requests go through Caddy to lnk. Caddy's internal CA stands in for a public one and the client
// trusts only that root; everything listens on 127.0.0.1 (test/domains/_caddy.ts says what the test changes
// in the shipped config and why).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { bootstrapAccount, within1s } from '../helpers'
import { freePort, startLnk, type Lnk } from '../redirect/_server'
import { httpsGet, requireCaddy, startCaddy, type Caddy } from './_caddy'
import { startDnsServer, type DnsServer } from './_dns'

const DOMAIN = 'go.customer.test'
const UNKNOWN = 'unknown.customer.test'
const DESTINATION = 'https://example.com/landing'

let dns: DnsServer | undefined
let lnk: Lnk | undefined
let caddy: Caddy | undefined
let key = ''

beforeAll(async () => {
  // Fails (not skips) without Caddy, with the command that installs it.
  requireCaddy()
  dns = await startDnsServer()
  // lnk's plain-HTTP domain check goes to Caddy's HTTP port, so that port is fixed before lnk starts.
  const httpPort = freePort()
  lnk = await startLnk({
    LNK_TLS_MODE: 'caddy',
    LNK_DNS_SERVERS: dns.address,
    // The A record below is not among these addresses (as behind Cloudflare's proxy): the domain is found
    // pointing here by the plain-HTTP check, which goes through Caddy's port-80 site to lnk.
    LNK_DOMAIN_IPS: '203.0.113.10',
    LNK_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    LNK_DOMAIN_CHECK_PORT: String(httpPort),
  })
  caddy = await startCaddy({ lnkPort: lnk.server.port, httpPort })
  key = (await bootstrapAccount(lnk.env.rt)).apiKey.key
})

afterAll(async () => {
  // Each one even when an earlier one (or the test) failed: no Caddy may outlive the file.
  await caddy?.stop()
  await lnk?.stop()
  await dns?.close()
})

function api(path: string, init: { method?: string; json?: unknown } = {}) {
  return fetch(`${lnk!.origin}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${key}`, ...(init.json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
    redirect: 'manual',
  })
}

/** A failure message that carries what Caddy logged: the reason a handshake or a proxy hop went wrong. */
const withCaddyLog = (what: string) => `${what}\n--- caddy log (end) ---\n${caddy?.log().split('\n').slice(-20).join('\n')}`

describe('a verified custom domain served over HTTPS by Caddy on demand', () => {
  let domainId = ''
  let token = ''
  let slug = ''

  test('the domain is added, its DNS records created, verified, and a link made on it', async () => {
    const created = await api('/v1/domains', { method: 'POST', json: { domain: DOMAIN } })
    expect(created.status).toBe(201)
    const { data } = (await created.json()) as any
    expect(data).toMatchObject({ domain: DOMAIN, verificationStatus: 'pending' })
    const txt = data.records.find((r: any) => r.type === 'TXT')
    // Read before any matcher looks at it: Bun 1.4's toMatchObject writes asymmetric matchers into the received object.
    domainId = data.id
    token = txt?.value
    expect({ name: txt?.name, value: typeof token }).toEqual({ name: `_lnk-challenge.${DOMAIN}`, value: 'string' })
    expect(data.records.some((r: any) => ['CNAME', 'A', 'AAAA'].includes(r.type))).toBe(true)

    // What the customer does at their DNS provider: the challenge, and the address of this server.
    dns!.set(`_lnk-challenge.${DOMAIN}`, 'TXT', [token])
    dns!.set(DOMAIN, 'A', ['127.0.0.1'])

    const verified = await api(`/v1/domains/${domainId}/verify`, { method: 'POST' })
    expect(verified.status).toBe(200)
    const state = ((await verified.json()) as any).data
    expect({ verificationStatus: state.verificationStatus, dnsStatus: state.dnsStatus, reached: state.httpCheck?.reached }).toEqual({
      verificationStatus: 'verified',
      dnsStatus: 'ok',
      reached: true,
    })

    const link = await api('/v1/links', { method: 'POST', json: { destinationUrl: DESTINATION, domain: DOMAIN } })
    expect(link.status).toBe(201)
    slug = ((await link.json()) as any).data.slug
    expect(typeof slug).toBe('string')
  })

  test('Caddy asks lnk: 200 for the verified domain, 404 for a hostname lnk does not serve', async () => {
    const ask = (domain: string) => fetch(`${lnk!.origin}/internal/tls/ask?domain=${encodeURIComponent(domain)}`)
    expect((await ask(DOMAIN)).status).toBe(200)
    expect((await ask(UNKNOWN)).status).toBe(404)
  })

  test('HTTPS on the verified domain: a certificate is issued during the handshake and the short link redirects', async () => {
    expect(slug).not.toBe('')
    expect(caddy!.certificateIssuedFor(DOMAIN)).toBe(false)
    const res = await httpsGet(DOMAIN, caddy!.httpsPort, `/${slug}`, caddy!.rootCaPem).catch((err: Error) => {
      throw new Error(withCaddyLog(`HTTPS to ${DOMAIN} failed: ${err.message}`))
    })
    expect({ status: res.status, location: res.headers.location }).toEqual({ status: 302, location: DESTINATION })
    expect(caddy!.certificateIssuedFor(DOMAIN)).toBe(true)
  })

  test('after a request that came through Caddy over TLS, the domain reads sslStatus active', async () => {
    const read = async () => {
      const res = await api(`/v1/domains/${domainId}`)
      expect(res.status).toBe(200)
      return ((await res.json()) as { data: { domain: string; verificationStatus: string; sslStatus: string } }).data
    }
    // Recorded beside the redirect, not before its answer: on PostgreSQL the write may land a moment later.
    expect(await within1s(async () => (await read()).sslStatus, 'active')).toBe('active')
    expect(await read()).toMatchObject({ domain: DOMAIN, verificationStatus: 'verified', sslStatus: 'active' })
  })

  test('HTTPS on a hostname lnk does not serve: the handshake fails and no certificate is issued', async () => {
    const outcome = await httpsGet(UNKNOWN, caddy!.httpsPort, '/anything', caddy!.rootCaPem).then(
      (res) => `answered ${res.status}`,
      (err: NodeJS.ErrnoException) => `rejected ${err.code ?? err.message}`,
    )
    expect(outcome).toMatch(/^rejected .*(SSL|TLS)/)
    expect(caddy!.certificateIssuedFor(UNKNOWN)).toBe(false)
  })

  test("plain HTTP: lnk's domain check path reaches lnk unredirected, everything else moves to HTTPS", async () => {
    const plain = (path: string) => fetch(`http://127.0.0.1:${caddy!.httpPort}${path}`, { headers: { host: DOMAIN }, redirect: 'manual' })
    const check = await plain(`/.well-known/lnk/${token}`)
    expect(check.status).toBe(200)
    expect(check.headers.get('location')).toBeNull()
    const other = await plain(`/${slug}?utm_source=qr`)
    expect({ status: other.status, location: other.headers.get('location') }).toEqual({ status: 308, location: `https://${DOMAIN}/${slug}?utm_source=qr` })
  })
})
