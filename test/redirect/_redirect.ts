// Shared helpers of the redirect tests (not a test file itself): links created through the API, visits
// through app.handle() with a browser-like User-Agent and a client address in X-Forwarded-For, cookies,
// database readers and the ALTCHA solver a browser would run.
import { createHash, createHmac } from 'node:crypto'
import type { Clock } from '../../src/platform/clock'
import type { Runtime } from '../../src/runtime'
import { body, bootstrapAccount, INSERTION_ORDER, makeKey, rawRows, setup, storedEvents, type TestEnv } from '../helpers'

export const ORIGIN = 'http://localhost:8080'

/** Full browser User-Agents (short ones count as bots and are never counted). */
export const UA = {
  chrome: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  chromeMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  firefox: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  android: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
} as const

export const CRAWLERS: Record<string, string> = {
  facebook: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  twitter: 'Twitterbot/1.0',
  linkedin: 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  slack: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  discord: 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  whatsapp: 'WhatsApp/2.23.20.0',
  telegram: 'TelegramBot (like TwitterBot)',
  imessage: 'facebookexternalhit/1.1 Facebot Twitterbot/1.0',
}

/** A test environment whose visitors' addresses come from X-Forwarded-For (one trusted proxy). */
export async function redirectEnv(options: { clock?: Clock; env?: Record<string, string> } = {}): Promise<TestEnv> {
  const env = await setup({ clock: options.clock, env: { LNK_TRUST_PROXY: '1', ...options.env } })
  listenEverywhere(env.rt)
  return env
}

/**
 * As if every workspace had a webhook endpoint for every event: these tests check all a click writes, its
 * link.clicked event included. When the event is written at all is click-events.test.ts's subject.
 */
export function listenEverywhere(rt: Runtime) {
  rt.interest.add(() => true)
}

export interface Api {
  key: string
  testKey: string
  workspaceId: string
  make(json?: Record<string, unknown>, key?: string): Promise<any>
  patch(id: string, json: unknown): Promise<Response>
  del(id: string): Promise<Response>
  get(id: string): Promise<any>
}

/** A workspace with a live key and a test key (lnk_test_…), and short-hands of the links API. */
export async function account(env: TestEnv): Promise<Api> {
  const acct = await bootstrapAccount(env.rt)
  const test = await makeKey(env.rt, acct.workspace.slug, '*', 'test')
  if (!test.key.startsWith('lnk_test_')) throw new Error(`test key has an unexpected prefix: ${test.key.slice(0, 12)}`)
  const key = acct.apiKey.key
  return {
    key,
    testKey: test.key,
    workspaceId: acct.workspace.id,
    async make(json = {}, k = key) {
      const res = await env.request('/v1/links', { method: 'POST', key: k, json: { destinationUrl: 'https://example.com/', ...json } })
      const payload = await body(res)
      if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(payload)}`)
      return payload.data
    },
    patch: (id, json) => env.request(`/v1/links/${id}`, { method: 'PATCH', key, json }),
    del: (id) => env.request(`/v1/links/${id}`, { method: 'DELETE', key }),
    async get(id) {
      const res = await env.request(`/v1/links/${id}`, { key })
      if (res.status !== 200) throw new Error(`get answered ${res.status}`)
      return (await body(res)).data
    },
  }
}

export interface VisitOptions {
  ip?: string
  ua?: string
  method?: string
  cookie?: string
  referer?: string
  headers?: Record<string, string>
  body?: RequestInit['body']
  /** Sent as an application/x-www-form-urlencoded body (implies POST). */
  form?: Record<string, string>
}

/** Visits `/<path>` the way a browser would, without following redirects. */
export function visit(env: TestEnv | { app: TestEnv['app'] }, path: string, o: VisitOptions = {}): Promise<Response> {
  const headers = new Headers({ 'user-agent': o.ua ?? UA.chrome, accept: 'text/html,application/xhtml+xml', ...o.headers })
  if (o.ip) headers.set('x-forwarded-for', o.ip)
  if (o.cookie) headers.set('cookie', o.cookie)
  if (o.referer) headers.set('referer', o.referer)
  let reqBody = o.body
  let method = o.method ?? 'GET'
  if (o.form) {
    headers.set('content-type', 'application/x-www-form-urlencoded')
    reqBody = new URLSearchParams(o.form).toString()
    method = o.method ?? 'POST'
  }
  return env.app.handle(new Request(`${ORIGIN}/${path.replace(/^\//, '')}`, { method, headers, body: reqBody, redirect: 'manual' }))
}

/** `name=value` of the Set-Cookie header, plus its attributes. */
export function setCookie(res: Response): { pair: string; name: string; value: string; attrs: string[] } {
  const raw = res.headers.get('set-cookie')
  if (!raw) throw new Error(`no Set-Cookie on a ${res.status} response`)
  const [pair, ...attrs] = raw.split(';').map((s) => s.trim())
  const eq = pair!.indexOf('=')
  return { pair: pair!, name: pair!.slice(0, eq), value: pair!.slice(eq + 1), attrs }
}

/** Storage itself, raw on purpose: for checks of stored rows and columns no port shows (hashes, flags). */
export const sql = rawRows

/** Storage itself: the name of every table the database holds, on either engine (for scans of all stored text). */
export async function storedTables(env: { rt: Runtime }): Promise<string[]> {
  const query =
    env.rt.store.engine === 'sqlite'
      ? "SELECT name FROM sqlite_master WHERE type = 'table'"
      : "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
  return (await sql<{ name: string }>(env, query)).map((t) => t.name)
}

/** Storage itself: the stored click rows, hashes and all, in the order they were written. */
export function clicksOf(env: { rt: Runtime }, linkId: string) {
  return sql<{
    id: string
    link_id: string
    workspace_id: string
    clicked_at: number
    visitor_hash: string
    user_agent: string | null
    referrer: string | null
    referrer_host: string | null
    is_bot: number
  }>(env, `SELECT * FROM clicks WHERE link_id = ? ORDER BY ${INSERTION_ORDER}`, linkId)
}

/** Raw on purpose: no port reads a link by its id alone (the links port wants its workspace). */
export async function counters(env: { rt: Runtime }, linkId: string) {
  return (await sql<{ total_clicks: number; unique_clicks: number }>(env, 'SELECT total_clicks, unique_clicks FROM links WHERE id = ?', linkId))[0]
}

export async function clickedEvents(env: { rt: Runtime }, linkId: string) {
  return (await storedEvents(env))
    .filter((e) => e.type === 'link.clicked')
    .map((e) => ({ data: e.data as any, workspace_id: e.workspaceId, mode: e.mode as string }))
    .filter((r) => r.data.link?.id === linkId)
}

/** The same keyed hash the redirect uses for visitors and addresses. */
export function keyed(rt: Runtime, value: string) {
  return createHmac('sha256', rt.modules.clicks.visitorKey).update(value).digest('base64url').slice(0, 32)
}

/** Runs tasks with at most `width` in flight; answers results in task order. */
export async function pool<T>(width: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length)
  let next = 0
  const lanes = Array.from({ length: Math.min(width, tasks.length) }, async () => {
    while (next < tasks.length) {
      const i = next++
      results[i] = await tasks[i]!()
    }
  })
  await Promise.all(lanes)
  return results
}

export interface AltchaChallenge {
  algorithm: string
  challenge: string
  maxnumber?: number
  salt: string
  signature: string
}

/** The challenge the captcha page's script carries (`const c={…}`). */
export function challengeOf(html: string): AltchaChallenge {
  const m = /const c=(\{.*?\});/.exec(html)
  if (!m) throw new Error('no ALTCHA challenge in the page')
  return JSON.parse(m[1]!)
}

/** Finds n with sha256(salt + n) == challenge, as the page's script does, and builds its payload. */
export function solve(c: AltchaChallenge): string {
  if (c.algorithm !== 'SHA-256') throw new Error(`unexpected algorithm ${c.algorithm}`)
  const max = c.maxnumber ?? 1_000_000
  for (let n = 0; n <= max; n++) {
    if (
      createHash('sha256')
        .update(c.salt + n)
        .digest('hex') === c.challenge
    ) {
      return Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: n, salt: c.salt, signature: c.signature })).toString('base64')
    }
  }
  throw new Error('challenge not solvable within maxnumber')
}

/** Attribute values of the elements matching `selector`, read with an HTML parser (entities decoded here:
 * HTMLRewriter hands attributes over raw). */
export async function attrs(html: string, selector: string, attr: string): Promise<string[]> {
  const out: string[] = []
  await new HTMLRewriter()
    .on(selector, {
      element(el) {
        const v = el.getAttribute(attr)
        if (v !== null) out.push(decodeEntities(v))
      },
    })
    .transform(new Response(html))
    .text()
  return out
}

/** The text of the elements matching `selector` (entities decoded). */
export async function texts(html: string, selector: string): Promise<string[]> {
  const out: string[] = []
  let current: string[] | null = null
  await new HTMLRewriter()
    .on(selector, {
      element(el) {
        current = []
        out.push('')
        const index = out.length - 1
        el.onEndTag(() => {
          out[index] = current!.join('')
          current = null
        })
      },
      text(t) {
        current?.push(t.text)
      },
    })
    .transform(new Response(html))
    .text()
  return out.map(decodeEntities)
}

export function decodeEntities(s: string) {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
  return s.replace(/&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos);/gi, (whole, e: string) =>
    e[0] === '#' ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1))) : (named[e.toLowerCase()] ?? whole),
  )
}

let addr = 0
/** A fresh documentation-range address (203.0.113.0/24, 198.51.100.0/24, then 2001:db8::/32). */
export function nextIp(): string {
  const n = addr++
  if (n < 250) return `203.0.113.${n + 1}`
  if (n < 500) return `198.51.100.${n - 249}`
  return `2001:db8::${(n - 499).toString(16)}`
}
