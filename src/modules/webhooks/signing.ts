// Signatures of outbound deliveries (contract section 5). Every body is signed twice so that a receiver can
// verify it with either common library unchanged:
// - Standard Webhooks: HMAC-SHA256 keyed with the base64-decoded part of the secret after `whsec_`, over
//   `id.timestamp.body`, base64, as `v1,<sig>`; several signatures are separated by spaces.
// - Stripe's format: HMAC-SHA256 keyed with the whole secret string, over `timestamp.body`, hex, as
//   `t=<t>,v1=<sig>,v1=<sig>`; Stripe's verifier accepts the header when any v1 matches.
// During a rotation grace each header carries one signature per live secret, newest first.
import { createHmac } from 'node:crypto'
import { randomSecretBytes } from '../../platform/random'

const SECRET_PREFIX = 'whsec_'

export function generateSecret(): string {
  return SECRET_PREFIX + randomSecretBytes(32).toString('base64')
}

function standardKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret
  return Buffer.from(encoded, 'base64')
}

export interface SignatureInput {
  id: string
  /** Unix seconds. */
  timestamp: number
  body: string
  /** Newest first; at least one. */
  secrets: readonly string[]
}

// A type alias rather than an interface, so that it is assignable to Record<string, string>.
export type SignatureHeaders = {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
  'x-service-signature': string
}

export function signatureHeaders(input: SignatureInput): SignatureHeaders {
  if (!input.secrets.length) throw new Error('signatureHeaders needs at least one secret')
  const t = String(Math.floor(input.timestamp))
  const standard = input.secrets.map((s) => `v1,${createHmac('sha256', standardKey(s)).update(`${input.id}.${t}.${input.body}`).digest('base64')}`)
  const stripe = input.secrets.map((s) => `v1=${createHmac('sha256', s).update(`${t}.${input.body}`).digest('hex')}`)
  return {
    'webhook-id': input.id,
    'webhook-timestamp': t,
    'webhook-signature': standard.join(' '),
    'x-service-signature': [`t=${t}`, ...stripe].join(','),
  }
}

/** What a user may see of a secret: enough to tell two apart, too little to use. */
export function secretHint(secret: string): string {
  const prefix = secret.startsWith(SECRET_PREFIX) ? SECRET_PREFIX : ''
  return `${prefix}…${secret.slice(-4)}`
}

/** A hint for a header value: its last four characters, and only when the value is long enough to spare them. */
export function valueHint(value: string): string {
  return value.length >= 12 ? `…${value.slice(-4)}` : '…'
}

const ALWAYS_REDACTED = ['webhook-signature', 'x-service-signature', 'authorization', 'proxy-authorization', 'cookie', 'x-api-key']

/**
 * The headers as stored on a delivery: signatures, credentials and the endpoint's custom headers (whose
 * values are write-only) are replaced by a hint. Names compare case-insensitively, as HTTP does.
 */
export function redactHeaders(headers: Record<string, string>, secretHeaderNames: readonly string[]): Record<string, string> {
  const hidden = new Set([...ALWAYS_REDACTED, ...secretHeaderNames.map((n) => n.toLowerCase())])
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) out[name] = hidden.has(name.toLowerCase()) ? valueHint(value) : value
  return out
}
