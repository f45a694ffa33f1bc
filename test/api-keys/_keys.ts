// Shared helpers of the API key tests (not a test file itself): requests from a client address (sent as
// X-Forwarded-For, believed only with LNK_TRUST_PROXY), error assertions and key creation through HTTP.
// Addresses used are documentation or loopback ranges only.
import { expect } from 'bun:test'
import { body, type TestEnv } from '../helpers'

export interface CallInit {
  method?: string
  json?: unknown
  /** The client address, sent as X-Forwarded-For. */
  ip?: string
  headers?: Record<string, string>
}

/** Anything with a request function shaped like TestEnv's (a second runtime on the same data dir too). */
export type Target = Pick<TestEnv, 'request'>

export function call(target: Target, key: string, path: string, init: CallInit = {}) {
  const headers: Record<string, string> = { ...init.headers }
  if (init.ip) headers['x-forwarded-for'] = init.ip
  return target.request(path, { method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'), key, json: init.json, headers })
}

export async function expectError(res: Response, status: number, code: string) {
  const text = await res.text()
  expect({ status: res.status, code: JSON.parse(text)?.error?.code }).toEqual({ status, code })
  const json = JSON.parse(text)
  expect(json.success).toBe(false)
  return json
}

export async function expectOk(res: Response, status = 200) {
  const text = await res.text()
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${text}`)
  const json = JSON.parse(text)
  expect(json.success).toBe(true)
  return json.data
}

/** POST /v1/api-keys with `caller`; answers the created key (with its secret) or throws with the response. */
export async function createKey(target: Target, caller: string, settings: Record<string, unknown>, ip?: string) {
  return expectOk(await call(target, caller, '/v1/api-keys', { json: { name: 'k', ...settings }, ip }), 201)
}

/** The status and error code (or 'ok') of one request: compact for tables of cases. */
export async function outcome(res: Response): Promise<string> {
  if (res.ok) {
    await res.arrayBuffer()
    return 'ok'
  }
  return (await body(res)).error.code
}

/** Every field of spec 2.7 (plus workspaceId); a key view must carry exactly these. */
export const API_KEY_FIELDS = [
  'allowedIps',
  'createdAt',
  'expiresAt',
  'graceHoursRemaining',
  'id',
  'keyPrefix',
  'lastUsedAt',
  'lastUsedIp',
  'mode',
  'monthlyCallCap',
  'name',
  'pausedAt',
  'pausedReason',
  'permissions',
  'rateLimitOverride',
  'revokedAt',
  'revokedReason',
  'rotating',
  'schedule',
  'scopeFilters',
  'workspaceId',
].sort()
