// All randomness of the service comes from here: ids, secrets and jitter.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Uniform base62 string (rejection sampling, no modulo bias). */
export function base62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}

// Bytes for randomId(), drawn from the CSPRNG in blocks so the hot path does not pay a call per id.
const pool = new Uint8Array(8192)
let poolAt = pool.length

/** base62 like base62(), from a pooled CSPRNG block: for ids minted many thousand times a second. */
export function randomId(length: number): string {
  let out = ''
  while (out.length < length) {
    if (poolAt >= pool.length) {
      crypto.getRandomValues(pool)
      poolAt = 0
    }
    const byte = pool[poolAt++]!
    if (byte < 248) out += BASE62[byte % 62]
  }
  return out
}

/**
 * Prefixed, time-ordered id for rows written by the thousand (clicks, events): 9 base62 characters of the
 * millisecond, then 11 random ones. New ids land at the end of their index instead of on a random page,
 * which keeps a growing table's writes cheap.
 */
export function sortableId(prefix: string, now: number): string {
  const ms = Math.max(0, Math.floor(now))
  // A flush names thousands of rows in the same millisecond: encode it once.
  if (ms !== lastMs) {
    let t = ms
    let head = ''
    for (let i = 0; i < 9; i++) {
      head = BASE62[t % 62] + head
      t = Math.floor(t / 62)
    }
    lastMs = ms
    lastHead = head
  }
  return `${prefix}_${lastHead}${randomId(11)}`
}
let lastMs = -1
let lastHead = ''

/** Prefixed random id, e.g. `usr_4mZ…`. */
export const newId = (prefix: string) => `${prefix}_${base62(20)}`

export const uuid = () => randomUUID()

/** Time-ordered UUID (v7): ids sort in creation order, even within one millisecond. */
export const uuidV7 = () => Bun.randomUUIDv7()

/** Uniform float in [0, 1). */
export const random = () => randomBytes(6).readUIntBE(0, 6) / 2 ** 48

export const randomSecretBytes = (n: number) => randomBytes(n)

export const sha256Hex = (value: string | Uint8Array) => createHash('sha256').update(value).digest('hex')

/** Compares two strings in time independent of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a)
  const bb = Buffer.from(b)
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab)
    return false
  }
  return timingSafeEqual(ab, bb)
}
