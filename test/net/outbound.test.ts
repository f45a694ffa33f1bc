import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createServer, type Server as NetServer } from 'node:net'
import type { EgressPolicy } from '../../src/net/egress'
import { MAX_RESPONSE_BODY, sendOutbound, type OutboundRequest } from '../../src/net/outbound'
import { makePki, type TestPki } from './_tls'

const HOST = 'hooks.example.test'
const loopback: EgressPolicy = { allowHttp: true, allowedCidrs: ['127.0.0.0/8'] }
const toLoopback = async (host: string) => (host === HOST ? ['127.0.0.1'] : Promise.reject(new Error(`unexpected lookup of ${host}`)))

interface Seen {
  path: string
  host: string | null
  method: string
  body: string
  custom: string | null
}

const seen: Seen[] = []
let server: ReturnType<typeof Bun.serve>

beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      seen.push({ path: url.pathname, host: req.headers.get('host'), method: req.method, body: await req.text(), custom: req.headers.get('x-custom') })
      switch (url.pathname) {
        case '/fail':
          return new Response('boom', { status: 500 })
        case '/redirect':
          return new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${server.port}/ok` } })
        case '/slow':
          await Bun.sleep(3000)
          return new Response('late')
        case '/big':
          return new Response('a'.repeat(MAX_RESPONSE_BODY) + 'b'.repeat(50_000))
        case '/exact':
          return new Response('c'.repeat(MAX_RESPONSE_BODY))
        default:
          return new Response('accepted', { headers: { 'x-receiver': 'yes' } })
      }
    },
  })
})
afterAll(() => server.stop(true))

const request = (path: string, extra: Partial<OutboundRequest> = {}): OutboundRequest => ({
  url: `http://${HOST}:${server.port}${path}`,
  headers: { 'content-type': 'application/json', 'x-custom': 'v1' },
  body: '{"hello":"world"}',
  timeoutMs: 5000,
  policy: loopback,
  resolver: toLoopback,
  ...extra,
})

const hits = (path: string) => seen.filter((s) => s.path === path).length

describe('sendOutbound over http', () => {
  test('2xx: dials the checked address, keeps the Host header, returns the answer', async () => {
    const r = await sendOutbound(request('/ok'))
    expect(r).toMatchObject({ ok: true, status: 200, body: 'accepted', bodyTruncated: false, error: null, address: '127.0.0.1' })
    expect(r.headers['x-receiver']).toBe('yes')
    expect(r.durationMs).toBeGreaterThanOrEqual(0)
    expect(seen.at(-1)).toEqual({ path: '/ok', host: `${HOST}:${server.port}`, method: 'POST', body: '{"hello":"world"}', custom: 'v1' })
  })

  test('500 is a failure with the answer kept', async () => {
    const r = await sendOutbound(request('/fail'))
    expect(r).toMatchObject({ ok: false, status: 500, body: 'boom', error: 'answered 500', address: '127.0.0.1' })
  })

  test('a redirect is never followed', async () => {
    const before = hits('/ok')
    const r = await sendOutbound(request('/redirect'))
    expect(r).toMatchObject({ ok: false, status: 302, error: `redirect not followed (302 to http://127.0.0.1:${server.port}/ok)` })
    expect(hits('/ok')).toBe(before)
  })

  test('timeoutMs aborts a slow receiver', async () => {
    const r = await sendOutbound(request('/slow', { timeoutMs: 150 }))
    expect(r).toMatchObject({ ok: false, status: null, error: 'timeout after 150 ms', address: '127.0.0.1' })
    expect(r.durationMs).toBeLessThan(2000)
  })

  test('a resolver that hangs is bounded by the same timeout', async () => {
    const r = await sendOutbound(request('/ok', { timeoutMs: 100, resolver: () => new Promise<string[]>(() => {}) }))
    expect(r).toMatchObject({ ok: false, error: 'timeout after 100 ms', address: null })
  })

  test('the body is read up to 16 KiB and flagged when cut', async () => {
    const big = await sendOutbound(request('/big'))
    expect(big.ok).toBe(true)
    expect(big.bodyTruncated).toBe(true)
    expect(big.body).toBe('a'.repeat(MAX_RESPONSE_BODY))
    const exact = await sendOutbound(request('/exact'))
    expect(exact.bodyTruncated).toBe(false)
    expect(exact.body.length).toBe(MAX_RESPONSE_BODY)
  })

  test('a name resolving to 127.0.0.1 is refused without the opt-in, and nothing is sent', async () => {
    const before = seen.length
    const r = await sendOutbound(request('/ok', { policy: { allowHttp: true, allowedCidrs: [] } }))
    expect(r).toMatchObject({ ok: false, status: null, address: null })
    expect(r.error).toBe(`refused: ${HOST} resolves to 127.0.0.1, a loopback address (127.0.0.0/8); set LNK_WEBHOOK_ALLOWED_CIDRS to allow it`)
    expect(seen.length).toBe(before)
  })

  test('literal localhost (system resolver) is refused without the opt-in', async () => {
    const before = seen.length
    const r = await sendOutbound({
      ...request('/ok'),
      url: `http://localhost:${server.port}/ok`,
      policy: { allowHttp: true, allowedCidrs: [] },
      resolver: undefined,
    })
    expect(r.ok).toBe(false)
    expect(r.error).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/)
    expect(seen.length).toBe(before)
  })

  test('metadata is refused even with 0.0.0.0/0', async () => {
    const r = await sendOutbound(request('/ok', { policy: { allowHttp: true, allowedCidrs: ['0.0.0.0/0'] }, resolver: async () => ['169.254.169.254'] }))
    expect(r.error).toBe(`refused: ${HOST} resolves to 169.254.169.254, a cloud metadata address (169.254.169.254/32), which is never allowed`)
  })

  test('plain http is refused without allowHttp', async () => {
    const r = await sendOutbound(request('/ok', { policy: { allowHttp: false, allowedCidrs: ['127.0.0.0/8'] } }))
    expect(r.error).toBe('refused: uses plain http; use https, or set LNK_WEBHOOK_ALLOW_HTTP to allow it')
  })

  test('DNS rebinding: one lookup, and the dialled address is the checked one', async () => {
    let lookups = 0
    const rebinding = async () => (++lookups === 1 ? ['127.0.0.1'] : ['10.0.0.1'])
    const r = await sendOutbound(request('/ok', { policy: { allowHttp: true, allowedCidrs: ['127.0.0.1/32'] }, resolver: rebinding }))
    expect(r).toMatchObject({ ok: true, address: '127.0.0.1' })
    expect(lookups).toBe(1)
    // The other way round: the first answer is refused and nothing is dialled at all.
    lookups = 0
    const before = seen.length
    const reversed = async () => (++lookups === 1 ? ['10.0.0.1'] : ['127.0.0.1'])
    const refused = await sendOutbound(request('/ok', { policy: { allowHttp: true, allowedCidrs: ['127.0.0.1/32'] }, resolver: reversed }))
    expect(refused.error).toStartWith(`refused: ${HOST} resolves to 10.0.0.1, a private address`)
    expect(lookups).toBe(1)
    expect(seen.length).toBe(before)
  })

  test('a closed port is an error result, never a throw', async () => {
    const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const port = probe.port
    probe.stop(true)
    const r = await sendOutbound({ ...request('/ok'), url: `http://${HOST}:${port}/ok` })
    expect(r.ok).toBe(false)
    expect(r.status).toBeNull()
    expect(r.address).toBe('127.0.0.1')
    expect(r.error).toBeTruthy()
  })

  test('IPv6 answers are dialled in brackets', async () => {
    const v6 = Bun.serve({ hostname: '::1', port: 0, fetch: (req) => new Response(`host=${req.headers.get('host')}`) })
    try {
      const r = await sendOutbound({
        ...request('/ok'),
        url: `http://${HOST}:${v6.port}/`,
        policy: { allowHttp: true, allowedCidrs: ['::1/128'] },
        resolver: async () => ['::1'],
      })
      expect(r).toMatchObject({ ok: true, address: '::1', body: `host=${HOST}:${v6.port}` })
    } finally {
      v6.stop(true)
    }
  })
})

describe('sendOutbound over https with a receiver that requires a client certificate', () => {
  let pki: TestPki
  let tlsServer: ReturnType<typeof Bun.serve>
  let handled = 0
  const httpsPolicy: EgressPolicy = { allowHttp: false, allowedCidrs: ['127.0.0.0/8'] }

  beforeAll(() => {
    // The certificate names only the host, not 127.0.0.1: it verifies only if the name is checked while the
    // IP is dialled.
    pki = makePki([`DNS:${HOST}`])
    tlsServer = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
      fetch(req) {
        handled++
        return new Response(`host=${req.headers.get('host')}`)
      },
    })
  })
  afterAll(() => tlsServer?.stop(true))

  const tlsRequest = (extra: Partial<OutboundRequest> = {}): OutboundRequest => ({
    ...request('/'),
    url: `https://${HOST}:${tlsServer.port}/`,
    policy: httpsPolicy,
    ca: pki.ca,
    clientCert: { cert: pki.clientCert, key: pki.clientKey },
    ...extra,
  })

  test('with the client certificate the delivery succeeds, verified against the hostname', async () => {
    const r = await sendOutbound(tlsRequest())
    expect(r).toMatchObject({ ok: true, status: 200, address: '127.0.0.1', body: `host=${HOST}:${tlsServer.port}` })
  })

  test('without a client certificate, or with one of another CA, the handshake fails', async () => {
    const before = handled
    const none = await sendOutbound(tlsRequest({ clientCert: null }))
    expect(none.ok).toBe(false)
    expect(none.status).toBeNull()
    expect(none.error).toBeTruthy()
    const stranger = await sendOutbound(tlsRequest({ clientCert: { cert: pki.strangerCert, key: pki.strangerKey } }))
    expect(stranger.ok).toBe(false)
    expect(handled).toBe(before)
  })

  test('the certificate is still verified: unknown CA and wrong name both fail', async () => {
    const noCa = await sendOutbound(tlsRequest({ ca: null }))
    expect(noCa.ok).toBe(false)
    expect(noCa.error).toStartWith('TLS certificate is not trusted')
    const wrong = await sendOutbound(tlsRequest({ url: `https://wrong.example.test:${tlsServer.port}/`, resolver: async () => ['127.0.0.1'] }))
    expect(wrong.ok).toBe(false)
    expect(wrong.error).toBe('TLS certificate does not name wrong.example.test (ERR_TLS_CERT_ALTNAME_INVALID)')
  })

  test('the original hostname travels as SNI', async () => {
    const hellos: Buffer[] = []
    const raw: NetServer = createServer((sock) => {
      sock.once('data', (chunk: Buffer) => {
        hellos.push(chunk)
        sock.destroy()
      })
    })
    await new Promise<void>((ready) => raw.listen(0, '127.0.0.1', ready))
    try {
      const port = (raw.address() as { port: number }).port
      const r = await sendOutbound(tlsRequest({ url: `https://${HOST}:${port}/`, timeoutMs: 2000 }))
      expect(r.ok).toBe(false)
      expect(hellos.length).toBe(1)
      expect(hellos[0]!.includes(Buffer.from(HOST))).toBe(true)
    } finally {
      raw.close()
    }
  })
})
