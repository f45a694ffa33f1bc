import { describe, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { generateSecret, redactHeaders, secretHint, signatureHeaders } from '../../../src/modules/webhooks/signing'

// Verified with the receivers' own libraries, exactly as a receiver would call them.
const stripe = new Stripe('sk_test_unused_by_signature_checks')
const body = JSON.stringify({ id: 'evt_1', type: 'link.clicked', timestamp: '2026-01-01T00:00:00.000Z', mode: 'live', data: { n: 1, s: 'ünïcødé ✓' } })
const now = () => Math.floor(Date.now() / 1000)

function standardOk(secret: string, headers: Record<string, string>, payload = body): boolean {
  try {
    new Webhook(secret).verify(payload, headers)
    return true
  } catch {
    return false
  }
}

// On Bun, the stripe package resolves to its worker build (the "bun" export condition), whose verifier is
// SubtleCrypto and therefore asynchronous: constructEventAsync is what a Bun receiver calls. It runs the
// same header parsing and comparison as constructEvent on Node.
function stripeOk(secret: string, header: string, payload = body, tolerance?: number): Promise<boolean> {
  return stripe.webhooks.constructEventAsync(payload, header, secret, tolerance).then(
    () => true,
    () => false,
  )
}

describe('generateSecret', () => {
  test('whsec_ and base64 of 32 random bytes, different every time', () => {
    const a = generateSecret()
    const b = generateSecret()
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(a.slice(6), 'base64').length).toBe(32)
    expect(a).not.toBe(b)
  })
})

describe('signatureHeaders', () => {
  test('one secret: both libraries verify, and the ids and timestamp are carried', async () => {
    const secret = generateSecret()
    const h = signatureHeaders({ id: 'msg_abc', timestamp: now(), body, secrets: [secret] })
    expect(h['webhook-id']).toBe('msg_abc')
    expect(h['webhook-timestamp']).toMatch(/^\d+$/)
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    expect(h['x-service-signature']).toMatch(new RegExp(`^t=${h['webhook-timestamp']},v1=[0-9a-f]{64}$`))
    expect(standardOk(secret, h)).toBe(true)
    expect(await stripeOk(secret, h['x-service-signature'])).toBe(true)
  })

  test('a rotation grace carries both, newest first, and each secret alone verifies', async () => {
    const newer = generateSecret()
    const older = generateSecret()
    const h = signatureHeaders({ id: 'msg_rot', timestamp: now(), body, secrets: [newer, older] })
    expect(h['webhook-signature'].split(' ')).toHaveLength(2)
    expect(h['x-service-signature'].split(',')).toHaveLength(3)
    for (const secret of [newer, older]) {
      expect(standardOk(secret, h)).toBe(true)
      expect(await stripeOk(secret, h['x-service-signature'])).toBe(true)
    }
    const alone = signatureHeaders({ id: 'msg_rot', timestamp: now(), body, secrets: [newer] })
    expect(h['webhook-signature'].split(' ')[0]).toBe(alone['webhook-signature'])
    expect(h['x-service-signature'].startsWith(alone['x-service-signature'])).toBe(true)
  })

  test('another secret, a changed body, id or timestamp fail verification', async () => {
    const secret = generateSecret()
    const stranger = generateSecret()
    const t = now()
    const h = signatureHeaders({ id: 'msg_x', timestamp: t, body, secrets: [secret] })
    expect(standardOk(stranger, h)).toBe(false)
    expect(await stripeOk(stranger, h['x-service-signature'])).toBe(false)
    expect(standardOk(secret, h, body.replace('"n":1', '"n":2'))).toBe(false)
    expect(await stripeOk(secret, h['x-service-signature'], body.replace('"n":1', '"n":2'))).toBe(false)
    expect(standardOk(secret, { ...h, 'webhook-id': 'msg_y' })).toBe(false)
    expect(standardOk(secret, { ...h, 'webhook-timestamp': String(t + 1) })).toBe(false)
  })

  test('an old timestamp is refused by the receivers (replay protection works with our headers)', async () => {
    const secret = generateSecret()
    const h = signatureHeaders({ id: 'msg_old', timestamp: now() - 3600, body, secrets: [secret] })
    expect(standardOk(secret, h)).toBe(false)
    expect(await stripeOk(secret, h['x-service-signature'], body, 300)).toBe(false)
  })

  test('refuses to sign without a secret', () => {
    expect(() => signatureHeaders({ id: 'msg', timestamp: now(), body, secrets: [] })).toThrow()
  })
})

describe('hints and redaction', () => {
  test('secretHint shows the prefix and the last four characters only', () => {
    const secret = generateSecret()
    expect(secretHint(secret)).toBe(`whsec_…${secret.slice(-4)}`)
    expect(secretHint(secret)).not.toContain(secret.slice(6, 20))
  })

  test('signatures, credentials and custom headers become hints; others stay', () => {
    const secret = generateSecret()
    const signed = signatureHeaders({ id: 'msg_r', timestamp: now(), body, secrets: [secret] })
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'lnk-webhooks/1.0',
      ...signed,
      Authorization: 'Bearer sk_live_0123456789abcdef',
      cookie: 'session=abcdefghijklmnop',
      'Proxy-Authorization': 'Basic dXNlcjpwYXNzd29yZA==',
      'X-API-Key': 'key_0123456789WXYZ',
      'X-Tenant-Token': 'tok_super_secret_9876',
      short: 'abc',
    }
    const out = redactHeaders(headers, ['x-tenant-token', 'SHORT'])
    expect(out['content-type']).toBe('application/json')
    expect(out['user-agent']).toBe('lnk-webhooks/1.0')
    expect(out['webhook-id']).toBe('msg_r')
    expect(out['webhook-timestamp']).toBe(signed['webhook-timestamp'])
    expect(out['webhook-signature']).toBe(`…${signed['webhook-signature'].slice(-4)}`)
    expect(out['x-service-signature']).toBe(`…${signed['x-service-signature'].slice(-4)}`)
    expect(out.Authorization).toBe('…cdef')
    expect(out.cookie).toBe('…mnop')
    expect(out['Proxy-Authorization']).toBe('…ZA==')
    expect(out['X-API-Key']).toBe('…WXYZ')
    expect(out['X-Tenant-Token']).toBe('…9876')
    expect(out.short).toBe('…')
    for (const value of Object.values(out)) expect(value).not.toContain('secret_98')
    expect(Object.keys(out)).toEqual(Object.keys(headers))
  })
})
