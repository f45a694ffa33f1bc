// Shared helpers of the conversion tests (not a test file itself): links with conversionTracking made
// through the API, real redirects that hand out real click ids (lnk_cid), beacons sent like a browser
// sends them, and readers of what was stored.
import { expect } from 'bun:test'
import type { Clock } from '../../src/platform/clock'
import { setup, storedEvents, type TestEnv } from '../helpers'
import { account, sql, UA, visit, type Api } from '../redirect/_redirect'

export { account, sql, UA, visit, type Api }

export const BEACON_URL = 'http://localhost:8080/v1/conversions'
/** What navigator.sendBeacon sends for a string. */
export const BEACON_TYPE = 'text/plain;charset=UTF-8'
export const CLICK_ID = /^clk_[0-9A-Za-z]{20}$/
export const CONVERSION_ID = /^cnv_[0-9A-Za-z]{20}$/
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** Visitors' and beacons' addresses come from X-Forwarded-For (one trusted proxy). */
export function conversionsEnv(options: { clock?: Clock } = {}): Promise<TestEnv> {
  return setup({ clock: options.clock, env: { LNK_TRUST_PROXY: '1' } })
}

let n = 0
/**
 * A fresh documentation-range address: 203.0.113.0/24, 198.51.100.0/24, 192.0.2.0/24, then one per IPv6
 * /64 of 2001:db8::/32 (an IPv6 /64 shares one rate-limit allowance).
 */
export function freshIp(): string {
  const i = n++
  if (i < 250) return `203.0.113.${i + 1}`
  if (i < 500) return `198.51.100.${i - 249}`
  if (i < 750) return `192.0.2.${i - 499}`
  return `2001:db8:${(i - 749).toString(16)}::1`
}

/** A live link with conversionTracking on. */
export function trackedLink(api: Api, json: Record<string, unknown> = {}, key?: string) {
  return api.make({ destinationUrl: 'https://shop.example/welcome?from=lnk', conversionTracking: true, ...json }, key)
}

/** Follows the short link like a desktop Chrome and answers the lnk_cid the destination was given. */
export async function clickOn(env: TestEnv, link: { slug: string }, o: { ip?: string } = {}): Promise<string> {
  const res = await visit(env, link.slug, { ua: UA.chrome, ip: o.ip ?? freshIp() })
  expect(res.status).toBe(302)
  const location = new URL(res.headers.get('location')!)
  const cid = location.searchParams.get('lnk_cid')
  if (!cid) throw new Error(`no lnk_cid in ${location.href}`)
  expect(cid).toMatch(CLICK_ID)
  return cid
}

export interface BeaconOptions {
  /** Content-Type; null sends none. Default: what sendBeacon sends. */
  type?: string | null
  ip?: string
  headers?: Record<string, string>
  /** The body as is, instead of JSON.stringify(body). */
  raw?: string | Uint8Array
  method?: string
}

/** POST /v1/conversions the way a destination page does, from a fresh address unless one is given. */
export function beacon(env: TestEnv, body: unknown, o: BeaconOptions = {}): Promise<Response> {
  const headers = new Headers(o.headers)
  const type = o.type === undefined ? BEACON_TYPE : o.type
  if (type !== null) headers.set('content-type', type)
  headers.set('x-forwarded-for', o.ip ?? freshIp())
  headers.set('origin', 'https://shop.example')
  return env.app.handle(new Request(BEACON_URL, { method: o.method ?? 'POST', headers, body: o.raw ?? JSON.stringify(body) }))
}

export interface ConversionRow {
  id: string
  click_id: string
  link_id: string
  workspace_id: string
  event_name: string
  value: number | null
  currency: string | null
  metadata: string | null
  fingerprint: string
  created_at: number
}

/**
 * Storage itself: the stored rows, fingerprint and metadata text included, in the order they were written.
 * Ids are random within a millisecond, so ties on created_at are broken by the outbox order of each
 * conversion's conversion.created event (written in the same transaction).
 */
export async function conversionRows(env: TestEnv): Promise<ConversionRow[]> {
  const written = new Map((await conversionEvents(env)).map((e) => [e.data.conversion.id as string, e.seq]))
  const order = (r: ConversionRow) => written.get(r.id) ?? Number.MAX_SAFE_INTEGER
  return (await sql<ConversionRow>(env, 'SELECT * FROM conversions')).sort(
    (a, b) => a.created_at - b.created_at || order(a) - order(b) || a.id.localeCompare(b.id),
  )
}

export const conversionEvents = async (env: TestEnv) =>
  (await storedEvents(env))
    .filter((e) => e.type === 'conversion.created')
    .map((e) => ({ seq: e.seq, id: e.id, type: e.type, mode: e.mode as string, workspace_id: e.workspaceId, data: e.data as any, created_at: e.createdAt }))

/** How much the beacon left behind: conversions and their events. */
export const written = async (env: TestEnv) => ({ conversions: (await conversionRows(env)).length, events: (await conversionEvents(env)).length })

/** The error code and the paths of the issues of an error answer. */
export async function refusal(res: Response): Promise<{ status: number; code: string; paths: string[]; message: string; cors: string | null }> {
  const payload = (await res.json()) as any
  expect(payload.success).toBe(false)
  return {
    status: res.status,
    code: payload.error.code,
    paths: (payload.error.details?.issues ?? []).map((i: { path: string }) => i.path),
    message: payload.error.message,
    cors: res.headers.get('access-control-allow-origin'),
  }
}
