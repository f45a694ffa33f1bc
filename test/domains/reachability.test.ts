// The plain-HTTP check (a domain behind a proxy whose addresses are not ours, like Cloudflare's), the
// well-known proof it fetches, and Caddy's TLS question, against a real listening lnk on loopback.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { recordSocketAddress } from '../../src/http/request-context'
import { conformance } from '../conformance'
import { body, bootstrapAccount } from '../helpers'
import { startLnk, type Lnk } from '../redirect/_server'
import { startDnsServer, type DnsServer } from './_dns'

let dns: DnsServer
let lnk: Lnk
let key: string
/** Stands in for a proxy in front of lnk: it forwards, or answers like some other server would. */
let proxyMode: 'forward' | 'echo' = 'forward'
const proxy = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(request) {
    const url = new URL(request.url)
    if (proxyMode === 'echo') return new Response(url.pathname.split('/').pop(), { status: 200 })
    return fetch(`${lnk.origin}${url.pathname}`, { headers: { host: request.headers.get('host') ?? '' } })
  },
})

const api = (path: string, init: RequestInit & { json?: unknown } = {}) =>
  fetch(`${lnk.origin}/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  })

beforeAll(async () => {
  dns = await startDnsServer()
  lnk = await startLnk({
    LNK_DNS_SERVERS: dns.address,
    LNK_DOMAIN_CHECK_PORT: String(proxy.port),
    LNK_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    LNK_SHORT_DOMAINS: 'sho.rt',
    LNK_TLS_MODE: 'caddy',
  })
  key = (await bootstrapAccount(lnk.env.rt)).apiKey.key
})
afterAll(async () => {
  proxy.stop(true)
  await lnk.stop()
  await dns.close()
})

async function addAndPoint(domain: string, address = '127.0.0.1') {
  const d = (await body(await api('/domains', { method: 'POST', json: { domain } }))).data
  dns.set(d.records[0].name, 'TXT', [d.records[0].value])
  dns.set(domain, 'A', [address])
  return d
}

describe('the HTTP check', () => {
  test('addresses that are not ours, but the domain reaches this instance: ok', async () => {
    proxyMode = 'forward'
    const d = await addAndPoint('proxied.example.test')
    const checked = (await body(await api(`/domains/${d.id}/verify`, { method: 'POST' }))).data
    expect(checked).toMatchObject({ verificationStatus: 'verified', dnsStatus: 'ok', served: true, sslStatus: 'pending' })
    expect(checked.httpCheck).toEqual({
      url: `http://proxied.example.test:${proxy.port}/.well-known/lnk/${d.records[0].value}`,
      reached: true,
      detail: 'reached this instance at 127.0.0.1',
    })
  })

  test('another server answering 200 with the token is not this instance: misconfigured', async () => {
    proxyMode = 'echo'
    const d = await addAndPoint('elsewhere.example.test')
    const checked = (await body(await api(`/domains/${d.id}/verify`, { method: 'POST' }))).data
    expect(checked).toMatchObject({ verificationStatus: 'verified', dnsStatus: 'misconfigured', served: false, sslStatus: 'failed' })
    expect(checked.httpCheck).toMatchObject({ reached: false, detail: 'another server answered at 127.0.0.1' })
    proxyMode = 'forward'
  })

  test("private addresses are not dialled without the operator's opt-in", async () => {
    const { setup } = await import('../helpers')
    const other = await setup({ env: { LNK_DNS_SERVERS: dns.address, LNK_DOMAIN_CHECK_PORT: String(proxy.port) } })
    try {
      const account = await bootstrapAccount(other.rt)
      const res = await other.request('/v1/domains', { method: 'POST', key: account.apiKey.key, json: { domain: 'private.example.test' } })
      const d = (await body(res)).data
      dns.set('private.example.test', 'A', ['127.0.0.1'])
      const checked = (await body(await other.request(`/v1/domains/${d.id}/verify`, { method: 'POST', key: account.apiKey.key }))).data
      expect(checked.dnsStatus).toBe('misconfigured')
      expect(checked.httpCheck.reached).toBe(false)
      expect(checked.httpCheck.detail).toStartWith('refused:')
    } finally {
      await other.cleanup()
    }
  })

  test('the well-known path answers the proof for a known token only', async () => {
    const d = (await body(await api('/domains', { method: 'POST', json: { domain: 'proof.example.test' } }))).data
    const known = await fetch(`${lnk.origin}/.well-known/lnk/${d.records[0].value}`)
    expect(known.status).toBe(200)
    const proof = await known.text()
    expect(proof).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(proof).not.toContain(d.records[0].value)
    expect((await fetch(`${lnk.origin}/.well-known/lnk/lnk-verify=${'x'.repeat(32)}`)).status).toBe(404)
    expect((await fetch(`${lnk.origin}/.well-known/lnk/whatever`)).status).toBe(404)
  })
})

describe('GET /internal/tls/ask', () => {
  const ask = (domain: string | null, headers: Record<string, string> = {}) =>
    fetch(`${lnk.origin}/internal/tls/ask${domain === null ? '' : `?domain=${encodeURIComponent(domain)}`}`, { headers })

  test('200 for served domains and the shared pool, 404 for any other value, 400 without the domain parameter', async () => {
    expect((await ask('proxied.example.test')).status).toBe(200)
    expect((await ask('PROXIED.example.test.')).status).toBe(200)
    expect((await ask('sho.rt')).status).toBe(200)
    expect((await ask('api.other.example')).status).toBe(404)
    // Added but not served (the echo case above), and never heard of.
    expect((await ask('elsewhere.example.test')).status).toBe(404)
    expect((await ask('unknown.example.test')).status).toBe(404)
    // What Schemathesis sent (an empty domain), an IP address, no hostname at all: values the document
    // allows, each a hostname not served here.
    for (const other of ['', '192.0.2.1', '[::1]', 'not a hostname', 'sho.rt:443']) {
      const res = await ask(other)
      expect({ other, status: res.status, text: await res.text() }).toEqual({ other, status: 404, text: 'not served here' })
    }
    // What the document refuses: no domain (required), or two.
    const missing = await ask(null)
    expect({ status: missing.status, text: await missing.text() }).toEqual({ status: 400, text: 'domain is required: the hostname to ask about' })
    const twice = await fetch(`${lnk.origin}/internal/tls/ask?domain=sho.rt&domain=sho.rt`)
    expect({ status: twice.status, text: await twice.text() }).toEqual({ status: 400, text: 'domain must be given once' })
    const parameter = conformance().doc.paths['/internal/tls/ask']!.get!.parameters
    expect(parameter).toEqual([expect.objectContaining({ name: 'domain', in: 'query', required: true, schema: { type: 'string' } })])
  })

  test('refused when proxied (X-Forwarded-For) or from a non-loopback peer', async () => {
    expect((await ask('proxied.example.test', { 'x-forwarded-for': '198.51.100.9' })).status).toBe(403)
    const request = new Request('http://localhost/internal/tls/ask?domain=proxied.example.test')
    recordSocketAddress(request, '192.0.2.44')
    expect((await lnk.env.app.handle(request)).status).toBe(403)
    const fromLoopback = new Request('http://localhost/internal/tls/ask?domain=proxied.example.test')
    recordSocketAddress(fromLoopback, '::ffff:127.0.0.1')
    expect((await lnk.env.app.handle(fromLoopback)).status).toBe(200)
  })
})
