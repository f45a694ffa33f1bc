// API key secrets: format, generation and hashing. Only the SHA-256 hash is ever stored.
import { base62, sha256Hex } from '../../platform/random'

export type KeyMode = 'live' | 'test'

const KEY_FORMAT = /^lnk_(live|test)_[0-9A-Za-z]{32}$/

export const isWellFormedKey = (value: string) => KEY_FORMAT.test(value)

export function generateKey(mode: KeyMode) {
  const key = `lnk_${mode}_${base62(32)}`
  return { key, hash: hashKey(key), prefix: key.slice(0, 12) }
}

export const hashKey = (key: string) => sha256Hex(key)
