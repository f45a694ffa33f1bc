// The webhook settings of src/config.ts: defaults, parsing, and one-line refusals naming the variable.
// (Certificate files are covered with real PEM files in mtls.test.ts.)
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, loadConfig, settingsHelp } from '../../src/platform/config'
import { tempDir } from '../helpers'

const dir = tempDir('lnk-webhook-config-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as Error).message
  }
  throw new Error('expected a ConfigError')
}

describe('webhook settings', () => {
  test('defaults: no egress addresses, no client certificate or CA, 32 requests in flight', () => {
    const c = loadConfig({})
    expect(c.webhookEgressIps).toEqual([])
    expect(c.webhookClientCert).toBeNull()
    expect(c.webhookClientKey).toBeNull()
    expect(c.webhookCa).toBeNull()
    expect(c.webhookMaxInFlight).toBe(32)
  })

  test('values are parsed; flags win over the environment', () => {
    const c = loadConfig({ LNK_WEBHOOK_EGRESS_IPS: ' 203.0.113.7, 2001:db8::7 ,203.0.113.7', LNK_WEBHOOK_MAX_IN_FLIGHT: '64' })
    expect(c.webhookEgressIps).toEqual(['203.0.113.7', '2001:db8::7'])
    expect(c.webhookMaxInFlight).toBe(64)
    expect(loadConfig({ LNK_WEBHOOK_MAX_IN_FLIGHT: '64' }, { 'webhook-max-in-flight': '8' }).webhookMaxInFlight).toBe(8)
  })

  test.each([
    ['LNK_WEBHOOK_EGRESS_IPS', '203.0.113.0/24'],
    ['LNK_WEBHOOK_EGRESS_IPS', 'egress.example'],
    ['LNK_WEBHOOK_MAX_IN_FLIGHT', '0'],
    ['LNK_WEBHOOK_MAX_IN_FLIGHT', 'many'],
    ['LNK_WEBHOOK_CLIENT_CERT', '/nonexistent/client.pem'],
    ['LNK_WEBHOOK_CA_FILE', '/nonexistent/ca.pem'],
  ])('%s=%s stops start-up with one line naming it', (name, value) => {
    const message = refusal({ [name]: value })
    expect(message).toContain(name)
    expect(message).toContain(value)
    expect(message.includes('\n')).toBe(false)
  })

  test('a file that is not PEM is refused; its content never appears in the message', () => {
    const file = join(dir, 'not-pem.txt')
    writeFileSync(file, 'hunter2 is not a certificate')
    const message = refusal({ LNK_WEBHOOK_CA_FILE: file })
    expect(message).toContain('LNK_WEBHOOK_CA_FILE')
    expect(message).toContain('PEM')
    expect(message).not.toContain('hunter2')
  })

  test('client certificate and key: both or neither', () => {
    const key = join(dir, 'key.pem')
    writeFileSync(key, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n')
    expect(refusal({ LNK_WEBHOOK_CLIENT_KEY: key })).toContain('both or neither')
  })

  test('the settings are listed in --help', () => {
    const help = settingsHelp()
    for (const name of ['LNK_WEBHOOK_EGRESS_IPS', 'LNK_WEBHOOK_CLIENT_CERT', 'LNK_WEBHOOK_CLIENT_KEY', 'LNK_WEBHOOK_CA_FILE', 'LNK_WEBHOOK_MAX_IN_FLIGHT'])
      expect(help).toContain(name)
  })
})
