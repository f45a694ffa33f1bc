import { describe, expect, test } from 'bun:test'
import { resolve } from 'node:path'
import { ConfigError, loadConfig } from '../src/platform/config'

describe('configuration', () => {
  test('defaults make a fresh checkout work', () => {
    const c = loadConfig({})
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      baseUrl: 'http://localhost:8080',
      shortDomains: ['localhost:8080'],
      trustProxy: 0,
      webhookAllowHttp: false,
      maxBodyBytes: 1048576,
    })
    expect(c.dataDir).toBe(resolve('./data'))
  })

  test('the base URL and short domains follow the port', () => {
    const c = loadConfig({ LNK_PORT: '9000' })
    expect(c.baseUrl).toBe('http://localhost:9000')
    expect(c.shortDomains).toEqual(['localhost:9000'])
  })

  test('flags win over the environment', () => {
    expect(loadConfig({ LNK_PORT: '9000' }, { port: '9100' }).port).toBe(9100)
  })

  test('values are parsed', () => {
    const c = loadConfig({
      LNK_SHORT_DOMAINS: 'Lnk.Example, go.example.com:8443,lnk.example',
      LNK_TRUST_PROXY: '2',
      LNK_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8, ::1',
      LNK_WEBHOOK_ALLOW_HTTP: 'yes',
      LNK_BASE_URL: 'https://lnk.example/',
    })
    expect(c.shortDomains).toEqual(['lnk.example', 'go.example.com:8443'])
    expect(c.trustProxy).toBe(2)
    expect(c.webhookAllowedCidrs).toEqual(['127.0.0.0/8', '::1'])
    expect(c.webhookAllowHttp).toBe(true)
    expect(c.baseUrl).toBe('https://lnk.example')
    expect(loadConfig({ LNK_TRUST_PROXY: 'on' }).trustProxy).toBe(1)
  })

  test('LNK_TLS_ASK_ALLOWED_CIDRS: empty by default (loopback only); IPv4 and IPv6 ranges and bare addresses', () => {
    expect(loadConfig({}).tlsAskAllowedCidrs).toEqual([])
    expect(loadConfig({ LNK_TLS_ASK_ALLOWED_CIDRS: ' 10.0.0.0/8, fd00::/8,192.0.2.7, ::ffff:10.1.0.0/112, 10.0.0.0/8 ' }).tlsAskAllowedCidrs).toEqual([
      '10.0.0.0/8',
      'fd00::/8',
      '192.0.2.7',
      '::ffff:10.1.0.0/112',
    ])
    expect(loadConfig({}, { 'tls-ask-allowed-cidrs': '172.16.0.0/12' }).tlsAskAllowedCidrs).toEqual(['172.16.0.0/12'])
  })

  test.each([
    ['LNK_PORT', 'abc'],
    ['LNK_PORT', '70000'],
    ['LNK_HOST', 'not a host'],
    ['LNK_BASE_URL', 'ftp://x'],
    ['LNK_BASE_URL', 'https://x.example/path'],
    ['LNK_SHORT_DOMAINS', 'bad domain!'],
    ['LNK_TRUST_PROXY', 'maybe'],
    ['LNK_WEBHOOK_ALLOWED_CIDRS', '10.0.0.0/33'],
    ['LNK_TLS_ASK_ALLOWED_CIDRS', '10.0.0.0/33'],
    ['LNK_TLS_ASK_ALLOWED_CIDRS', 'caddy.internal'],
    ['LNK_TLS_ASK_ALLOWED_CIDRS', '10.0.0.0/8,fd00::/129'],
    ['LNK_TLS_ASK_ALLOWED_CIDRS', '::ffff:10.0.0.0/64'],
    ['LNK_WEBHOOK_ALLOW_HTTP', 'perhaps'],
    ['LNK_MAX_BODY_BYTES', '12'],
    ['LNK_LOG_LEVEL', 'loud'],
  ])('%s=%s stops start-up with one line naming it', (name, value) => {
    let error: unknown
    try {
      loadConfig({ [name]: value })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as Error).message
    expect(message).toContain(name)
    expect(message).toContain(value)
    expect(message.includes('\n')).toBe(false)
  })

  test('a bad flag is named as the flag', () => {
    expect(() => loadConfig({}, { port: 'x' })).toThrow('--port')
  })
})
