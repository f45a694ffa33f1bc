import { describe, expect, test } from 'bun:test'
import { addressAllowed, checkUrl, classifyAddress, type AddressClass, type EgressPolicy } from '../../src/net/egress'

const strict: EgressPolicy = { allowHttp: false, allowedCidrs: [] }
const fixed = (answers: string[]) => async () => answers

describe('classifyAddress', () => {
  const cases: [string, AddressClass][] = [
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['169.254.1.1', 'link_local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.254', 'cgnat'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.1', 'documentation'],
    ['203.0.113.1', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['2002:808:808::1', 'public'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:0:4136:e378::1', 'reserved'], // Teredo
    ['100::1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['64:ff9b::808:808', 'public'],
    ['not an address', 'reserved'],
    ['10.0.0.0/8', 'reserved'],
  ]
  for (const [ip, kind] of cases) test(`${ip} is ${kind}`, () => expect(classifyAddress(ip)).toBe(kind))

  test('numeric IPv4 spellings are classified after URL normalisation', () => {
    for (const url of ['http://2130706433/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://127.1/', 'http://[::ffff:127.0.0.1]/']) {
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
      expect(classifyAddress(host)).toBe('loopback')
    }
  })
})

describe('addressAllowed', () => {
  test('public yes, private no, private inside allowedCidrs yes', () => {
    expect(addressAllowed('8.8.8.8', strict)).toBe(true)
    expect(addressAllowed('10.0.0.5', strict)).toBe(false)
    expect(addressAllowed('10.0.0.5', { allowHttp: false, allowedCidrs: ['10.0.0.0/24'] })).toBe(true)
    expect(addressAllowed('10.0.1.5', { allowHttp: false, allowedCidrs: ['10.0.0.0/24'] })).toBe(false)
  })
  test('metadata is never allowed, even under 0.0.0.0/0 or an exact CIDR', () => {
    for (const cidrs of [['0.0.0.0/0'], ['169.254.0.0/16'], ['169.254.169.254/32'], ['::/0']]) {
      expect(addressAllowed('169.254.169.254', { allowHttp: true, allowedCidrs: cidrs })).toBe(false)
      expect(addressAllowed('::ffff:a9fe:a9fe', { allowHttp: true, allowedCidrs: cidrs })).toBe(false)
    }
    expect(addressAllowed('fd00:ec2::254', { allowHttp: true, allowedCidrs: ['::/0'] })).toBe(false)
    expect(addressAllowed('fd00:ec2::1', { allowHttp: true, allowedCidrs: ['::/0'] })).toBe(true)
  })
  test('an embedded IPv4 address counts under the IPv4 range that holds it', () => {
    const loop = { allowHttp: true, allowedCidrs: ['127.0.0.0/8'] }
    expect(addressAllowed('::ffff:7f00:1', loop)).toBe(true)
    expect(addressAllowed('64:ff9b::7f00:1', loop)).toBe(true)
    expect(addressAllowed('::1', loop)).toBe(false)
    expect(addressAllowed('::1', { allowHttp: true, allowedCidrs: ['::1/128'] })).toBe(true)
  })
})

describe('checkUrl', () => {
  test('a public name passes and answers every address', async () => {
    const r = await checkUrl('https://hooks.example.test/in', strict, fixed(['93.184.216.34', '2606:2800:220:1::1']))
    expect(r).toMatchObject({ ok: true, addresses: ['93.184.216.34', '2606:2800:220:1::1'] })
  })
  test('a name resolving to 127.0.0.1 is refused without the opt-in, with a sentence naming address and range', async () => {
    const r = await checkUrl('https://hooks.example.test/in', strict, fixed(['127.0.0.1']))
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.reason).toBe('hooks.example.test resolves to 127.0.0.1, a loopback address (127.0.0.0/8); set LNK_WEBHOOK_ALLOWED_CIDRS to allow it')
    expect((await checkUrl('https://hooks.example.test/in', { allowHttp: false, allowedCidrs: ['127.0.0.0/8'] }, fixed(['127.0.0.1']))).ok).toBe(true)
  })
  test('one bad answer among good ones refuses the target', async () => {
    const r = await checkUrl('https://hooks.example.test/', strict, fixed(['93.184.216.34', '10.0.0.1']))
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.reason).toContain('10.0.0.1, a private address (10.0.0.0/8)')
  })
  test('literal localhost is resolved by the system and refused', async () => {
    const r = await checkUrl('https://localhost:8443/', strict)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.reason).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), a loopback address/)
  })
  test('literal addresses need no DNS, in every spelling', async () => {
    const never = async () => {
      throw new Error('resolver must not be called for a literal')
    }
    for (const url of ['https://2130706433/', 'https://0x7f.1/', 'https://[::ffff:127.0.0.1]/', 'https://[::1]/', 'https://127.1:9/']) {
      const r = await checkUrl(url, strict, never)
      expect(r.ok).toBe(false)
      if (!r.ok) expect(r.reason).toMatch(/^\S+ is a loopback address \(/)
    }
    const mapped = await checkUrl('https://[::ffff:127.0.0.1]/', strict, never)
    if (!mapped.ok)
      expect(mapped.reason).toBe('::ffff:7f00:1 is a loopback address (127.0.0.0/8, carrying 127.0.0.1); set LNK_WEBHOOK_ALLOWED_CIDRS to allow it')
    const meta = await checkUrl('https://169.254.169.254/latest', { allowHttp: true, allowedCidrs: ['0.0.0.0/0'] }, never)
    expect(meta).toEqual({ ok: false, reason: '169.254.169.254 is a cloud metadata address (169.254.169.254/32), which is never allowed' })
    expect((await checkUrl('https://[2606:4700:4700::1111]/', strict, never)).ok).toBe(true)
  })
  test('http only with allowHttp; other schemes and credentials never', async () => {
    const pub = fixed(['93.184.216.34'])
    const http = await checkUrl('http://hooks.example.test/', strict, pub)
    expect(http).toEqual({ ok: false, reason: 'uses plain http; use https, or set LNK_WEBHOOK_ALLOW_HTTP to allow it' })
    expect((await checkUrl('http://hooks.example.test/', { allowHttp: true, allowedCidrs: [] }, pub)).ok).toBe(true)
    expect((await checkUrl('ftp://hooks.example.test/', { allowHttp: true, allowedCidrs: [] }, pub)).ok).toBe(false)
    const creds = await checkUrl('https://user:pw@hooks.example.test/', strict, pub)
    expect(creds).toEqual({ ok: false, reason: 'contains credentials; send them as a custom header' })
    expect((await checkUrl('not a url', strict, pub)).ok).toBe(false)
  })
  test('resolver failures and empty answers are refusals, not throws', async () => {
    const failing = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })
    }
    expect(await checkUrl('https://nowhere.example.test/', strict, failing)).toEqual({
      ok: false,
      reason: 'nowhere.example.test could not be resolved (ENOTFOUND)',
    })
    expect(await checkUrl('https://nowhere.example.test/', strict, fixed([]))).toEqual({ ok: false, reason: 'nowhere.example.test resolves to no address' })
  })
})
