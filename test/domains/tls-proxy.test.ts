// A TLS proxy on another machine (LNK_TLS_ASK_ALLOWED_CIDRS): which socket peers may ask /internal/tls/ask,
// and whose X-Forwarded-Proto: https makes a domain's sslStatus active. Requests go through app.handle()
// with the socket address recorded as server.ts records it, so peers outside loopback can be tried without
// leaving it; the domains are verified against the loopback DNS server. Three real nodes behind one real
// Caddy are pg-three-nodes.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { recordSocketAddress } from '../../src/http/request-context'
import { tlsProxyPeers } from '../../src/net/tls-proxy'
import { body, ROOT, within1s } from '../helpers'
import { domainsEnv, type DomainsEnv } from './_domains'

const ALLOWED = '10.20.0.0/16, fd00:7::/64, 192.0.2.7'
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'

/** A request as the server hands it over: `peer` is the socket address (null: none recorded). */
function from(env: DomainsEnv, peer: string | null, url: string, headers: Record<string, string> = {}) {
  const request = new Request(url, { headers: { 'user-agent': UA, ...headers }, redirect: 'manual' })
  if (peer !== null) recordSocketAddress(request, peer)
  return env.app.handle(request)
}

async function ask(env: DomainsEnv, peer: string | null, domain: string, headers: Record<string, string> = {}) {
  const res = await from(env, peer, `http://localhost:8080/internal/tls/ask?domain=${encodeURIComponent(domain)}`, headers)
  return { status: res.status, text: await res.text() }
}

/** Adds, points and verifies `domain`; answers its id once it is served. */
async function verified(env: DomainsEnv, domain: string): Promise<string> {
  const d = await env.add(domain)
  env.point(d)
  const checked = (await body(await env.verify(d.id))).data
  expect({ verificationStatus: checked.verificationStatus, served: checked.served, sslStatus: checked.sslStatus }).toEqual({
    verificationStatus: 'verified',
    served: true,
    sslStatus: 'pending',
  })
  return d.id
}

describe('with LNK_TLS_ASK_ALLOWED_CIDRS', () => {
  let env: DomainsEnv
  beforeAll(async () => {
    env = await domainsEnv({ LNK_TLS_MODE: 'caddy', LNK_TLS_ASK_ALLOWED_CIDRS: ALLOWED })
    await verified(env, 'go.proxied.test')
  })
  afterAll(() => env.close())

  test('an allowed peer (a range, an IPv6 range, a bare address, the IPv4-mapped form) asks and is answered', async () => {
    for (const peer of ['10.20.3.4', '10.20.255.255', 'fd00:7::5', '192.0.2.7', '::ffff:10.20.0.1']) {
      expect({ peer, ...(await ask(env, peer, 'go.proxied.test')) }).toEqual({ peer, status: 200, text: 'ok' })
      expect({ peer, ...(await ask(env, peer, 'unknown.proxied.test')) }).toEqual({ peer, status: 404, text: 'not served here' })
    }
  })

  test('loopback stays allowed', async () => {
    for (const peer of ['127.0.0.1', '127.0.0.9', '::1', '::ffff:127.0.0.1'])
      expect({ peer, status: (await ask(env, peer, 'go.proxied.test')).status }).toEqual({ peer, status: 200 })
  })

  test('any other peer is refused with 403, told which setting allows it', async () => {
    // Just outside each range; 6to4 and NAT64 spellings of 127.0.0.1 are network addresses, not loopback.
    for (const peer of ['10.21.0.1', '192.0.2.8', 'fd00:8::1', '203.0.113.9', '2002:7f00:1::1', '64:ff9b::7f00:1', null]) {
      const answer = await ask(env, peer, 'go.proxied.test')
      expect({ peer, status: answer.status }).toEqual({ peer, status: 403 })
      expect(answer.text).toContain('LNK_TLS_ASK_ALLOWED_CIDRS')
      expect(answer.text).toContain(peer ?? 'an unknown peer')
    }
  })

  test('proxied: allowed only when every X-Forwarded-For entry is trusted too (a load-balanced ask)', async () => {
    // Caddy's ask load-balanced through a proxy of its own: the entry names Caddy.
    expect((await ask(env, '10.20.3.4', 'go.proxied.test', { 'x-forwarded-for': '127.0.0.1' })).status).toBe(200)
    expect((await ask(env, '10.20.3.4', 'go.proxied.test', { 'x-forwarded-for': '10.20.9.9, 127.0.0.1' })).status).toBe(200)
    // A visitor's https://<served host>/internal/tls/ask, passed on by the very proxy we trust.
    for (const xff of ['203.0.113.9', '127.0.0.1, 203.0.113.9', '203.0.113.9, 10.20.0.1', '', '10.20.0.0/16', '10.20.0.1:4711']) {
      const answer = await ask(env, '10.20.3.4', 'go.proxied.test', { 'x-forwarded-for': xff })
      expect({ xff, status: answer.status }).toEqual({ xff, status: 403 })
      expect(answer.text).toStartWith('proxied for ')
    }
    const rfc7239 = await ask(env, '127.0.0.1', 'go.proxied.test', { forwarded: 'for=127.0.0.1' })
    expect(rfc7239).toEqual({ status: 403, text: 'proxied (Forwarded header): the TLS proxy asks without one' })
  })

  test("an allowed peer's X-Forwarded-Proto: https makes sslStatus active; a refused peer's does not", async () => {
    const refusedId = await verified(env, 'refused.proxied.test')
    const allowedId = await verified(env, 'allowed.proxied.test')
    const https = { 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.20' }
    for (const peer of ['10.21.0.1', '203.0.113.9', '2002:7f00:1::1', null]) await from(env, peer, 'http://refused.proxied.test/', https)
    // The allowed peer's visit comes after: once its write is seen, the refused ones' would have been too.
    expect((await from(env, '10.20.3.4', 'http://allowed.proxied.test/', https)).status).toBe(200)
    expect(await within1s(async () => (await env.get(allowedId)).sslStatus, 'active')).toBe('active')
    await Bun.sleep(100)
    expect((await env.get(refusedId)).sslStatus).toBe('pending')
    // And loopback, as before.
    expect((await from(env, '::1', 'http://refused.proxied.test/', https)).status).toBe(200)
    expect(await within1s(async () => (await env.get(refusedId)).sslStatus, 'active')).toBe('active')
  })
})

describe('without it (the default): loopback only', () => {
  let env: DomainsEnv
  beforeAll(async () => {
    env = await domainsEnv({ LNK_TLS_MODE: 'caddy' })
    await verified(env, 'go.local.test')
  })
  afterAll(() => env.close())

  test('the ask answers loopback and refuses a private peer', async () => {
    expect((await ask(env, '127.0.0.1', 'go.local.test')).status).toBe(200)
    const refused = await ask(env, '10.20.3.4', 'go.local.test')
    expect(refused.status).toBe(403)
    expect(refused.text).toContain('set LNK_TLS_ASK_ALLOWED_CIDRS to allow it')
    // Proxied by a loopback proxy on behalf of a visitor: refused, as before the setting existed.
    expect((await ask(env, '127.0.0.1', 'go.local.test', { 'x-forwarded-for': '198.51.100.9' })).status).toBe(403)
  })

  test("a private peer's X-Forwarded-Proto: https does not count; loopback's does", async () => {
    const id = await verified(env, 'status.local.test')
    const https = { 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.20' }
    await from(env, '10.20.3.4', 'http://status.local.test/', https)
    await Bun.sleep(100)
    expect((await env.get(id)).sslStatus).toBe('pending')
    await from(env, '127.0.0.1', 'http://status.local.test/', https)
    expect(await within1s(async () => (await env.get(id)).sslStatus, 'active')).toBe('active')
  })
})

describe('tlsProxyPeers', () => {
  test('matches single socket addresses only, against loopback and the ranges given', () => {
    const trusted = tlsProxyPeers(['10.0.0.0/8', '2001:db8:1::/48'])
    const cases: [string | null, boolean][] = [
      ['127.0.0.1', true],
      ['::1', true],
      ['10.255.0.1', true],
      ['2001:db8:1:ffff::1', true],
      ['2001:db8:2::1', false],
      ['11.0.0.1', false],
      ['::ffff:10.1.2.3', true],
      ['0.0.0.0', false],
      ['::', false],
      ['10.0.0.0/8', false],
      ['not an address', false],
      ['', false],
      [null, false],
    ]
    expect(cases.map(([address]) => [address, trusted(address)])).toEqual(cases)
  })
})

test('docs/scale-out.md ships test/domains/nodes.Caddyfile verbatim, the file the three-node test runs', () => {
  const caddyfile = readFileSync(`${ROOT}/test/domains/nodes.Caddyfile`, 'utf8').trimEnd()
  expect(readFileSync(`${ROOT}/docs/scale-out.md`, 'utf8')).toContain(`\`\`\`caddyfile\n${caddyfile}\n\`\`\``)
})
