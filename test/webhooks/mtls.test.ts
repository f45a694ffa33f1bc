// Mutual TLS end to end: an https receiver on 127.0.0.1 with a test CA that requires a client certificate.
// The operator configures the client pair and the CA (LNK_WEBHOOK_CLIENT_CERT/KEY, LNK_WEBHOOK_CA_FILE);
// endpoints with mtlsEnabled present it, others do not and are refused by the receiver.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { body } from '../helpers'
import { makePki, type TestPki } from './_certs'
import { deliveries, verifyBoth, webhooksEnv, type Env, type Received } from './_webhooks'

let pki: TestPki
let env: Env
let server: ReturnType<typeof Bun.serve>
const received: Received[] = []

beforeAll(async () => {
  pki = makePki()
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    tls: {
      cert: readFileSync(pki.serverCert, 'utf8'),
      key: readFileSync(pki.serverKey, 'utf8'),
      ca: readFileSync(pki.caCert, 'utf8'),
      requestCert: true,
      rejectUnauthorized: true,
    },
    async fetch(request) {
      received.push({
        method: request.method,
        path: new URL(request.url).pathname,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
        at: Date.now(),
      })
      return new Response('ok')
    },
  })
  env = await webhooksEnv({ env: { LNK_WEBHOOK_CLIENT_CERT: pki.clientCert, LNK_WEBHOOK_CLIENT_KEY: pki.clientKey, LNK_WEBHOOK_CA_FILE: pki.caCert } })
})

afterAll(async () => {
  server.stop(true)
  await env.cleanup()
  rmSync(pki.dir, { recursive: true, force: true })
})

const url = (path: string) => `https://127.0.0.1:${server.port}${path}`

describe('mutual TLS', () => {
  test('info says mTLS is configured; an endpoint with mtlsEnabled is delivered to and verifies', async () => {
    expect((await body(await env.api('/webhooks/info'))).data.mtlsConfigured).toBe(true)
    const ep = await env.createEndpoint({ url: url('/mtls'), events: ['link.created'], mtlsEnabled: true })
    expect(ep.mtlsEnabled).toBe(true)
    await env.emit('link.created')
    await env.run()
    const got = received.filter((r) => r.path === '/mtls')
    expect(got).toHaveLength(1)
    await verifyBoth(got[0]!, ep.secret)
    const [d] = await deliveries(env, ep.id)
    expect(d).toMatchObject({ status: 'success', responseStatus: 200 })
  })

  test('the test ping goes through mTLS too', async () => {
    const ep = await env.createEndpoint({ url: url('/ping'), events: ['*'], mtlsEnabled: true })
    const ping = (await body(await env.api(`/webhooks/${ep.id}/test`, { method: 'POST' }))).data
    expect(ping.status).toBe('success')
    expect(received.filter((r) => r.path === '/ping')).toHaveLength(1)
  })

  test('without mtlsEnabled no certificate is presented and the receiver refuses the handshake', async () => {
    const ep = await env.createEndpoint({ url: url('/plain'), events: ['link.created'] })
    await env.emit('link.created')
    await env.run()
    expect(received.filter((r) => r.path === '/plain')).toHaveLength(0)
    const [d] = await deliveries(env, ep.id)
    expect(d.status).toBe('failed')
    expect(d.responseStatus).toBeNull()
    expect(d.errorMessage).toBeTruthy()
  })

  test('start-up refuses a key without a certificate, a mismatched pair and unreadable files', async () => {
    const { loadConfig } = await import('../../src/platform/config')
    expect(() => loadConfig({ LNK_WEBHOOK_CLIENT_KEY: pki.clientKey })).toThrow('LNK_WEBHOOK_CLIENT_KEY')
    expect(() => loadConfig({ LNK_WEBHOOK_CLIENT_CERT: pki.clientCert })).toThrow('LNK_WEBHOOK_CLIENT_KEY')
    expect(() => loadConfig({ LNK_WEBHOOK_CLIENT_CERT: pki.clientCert, LNK_WEBHOOK_CLIENT_KEY: pki.strangerKey })).toThrow('does not belong')
    expect(() => loadConfig({ LNK_WEBHOOK_CLIENT_CERT: `${pki.dir}/missing.pem`, LNK_WEBHOOK_CLIENT_KEY: pki.clientKey })).toThrow('LNK_WEBHOOK_CLIENT_CERT')
    expect(() => loadConfig({ LNK_WEBHOOK_CA_FILE: pki.clientKey })).toThrow('LNK_WEBHOOK_CA_FILE')
    const ok = loadConfig({ LNK_WEBHOOK_CLIENT_CERT: pki.clientCert, LNK_WEBHOOK_CLIENT_KEY: pki.clientKey, LNK_WEBHOOK_CA_FILE: pki.caCert })
    expect(ok.webhookClientCert).toContain('BEGIN CERTIFICATE')
    expect(ok.webhookClientKey).toContain('PRIVATE KEY')
    expect(ok.webhookCa).toContain('BEGIN CERTIFICATE')
  })
})
