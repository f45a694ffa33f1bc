// GET /v1/docs: the API reference page, served with everything it needs by lnk itself. The first part checks
// the page, its script and their headers through app.handle(); the second loads the page in Debian's headless
// Chromium from a real loopback server, with every other host unresolvable, and reads the rendered DOM.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gunzipSync } from 'node:zlib'
import { SPEC_PATH } from '../../src/modules/system/openapi'
import { chromium, requireChromium } from '../browser'
import { setup, type TestEnv } from '../helpers'

const CHROMIUM_TIMEOUT_MS = 45_000

let env: TestEnv

beforeAll(async () => {
  env = await setup()
})
afterAll(() => env.cleanup())

const inlineScript = (html: string) => /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? ''

describe('GET /v1/docs', () => {
  test('is an HTML page that names no other origin', async () => {
    const res = await env.request('/v1/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const html = await res.text()
    expect(html).toContain('<title>lnk API</title>')
    expect(html).not.toMatch(/https?:\/\//i)
    expect(html).not.toMatch(/src="\/\//)
    expect(html).toMatch(/<script src="\/v1\/docs\/scalar\.js\?v=[\w-]+"><\/script>/)
  })

  test('turns off every Scalar feature that would call a hosted service', async () => {
    const script = inlineScript(await (await env.request('/v1/docs')).text())
    const config = JSON.parse(/createApiReference\('#lnk-docs', (\{[\s\S]*\})\)$/.exec(script)![1]!)
    expect(config).toMatchObject({
      url: SPEC_PATH,
      withDefaultFonts: false,
      telemetry: false,
      proxyUrl: '',
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: 'never',
    })
  })

  test('sends a Content-Security-Policy that admits only this origin and its own inline call', async () => {
    const res = await env.request('/v1/docs')
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).toContain("font-src 'self' data:")
    expect(csp).not.toMatch(/https?:/)
    const hash = new Bun.CryptoHasher('sha256').update(inlineScript(await res.text())).digest('base64')
    expect(csp).toContain(`script-src 'self' 'sha256-${hash}'`)
  })
})

describe('GET /v1/docs/scalar.js', () => {
  test('is the Scalar bundle, cached for a day, with an ETag', async () => {
    const res = await env.request('/v1/docs/scalar.js')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400')
    expect(res.headers.get('etag')).toMatch(/^"[\w-]+"$/)
    expect(res.headers.get('content-encoding')).toBeNull()
    const js = await res.text()
    expect(js.length).toBeGreaterThan(1_000_000)
    expect(js).toContain('createApiReference')
    expect(js).not.toContain('sourceMappingURL')
  })

  test('the page asks for the version it serves', async () => {
    const html = await (await env.request('/v1/docs')).text()
    const version = /scalar\.js\?v=([\w-]+)/.exec(html)![1]
    const etag = (await env.request('/v1/docs/scalar.js')).headers.get('etag')
    expect(etag).toBe(`"${version}"`)
  })

  test('answers 304 to a matching If-None-Match', async () => {
    const etag = (await env.request('/v1/docs/scalar.js')).headers.get('etag')!
    const res = await env.request('/v1/docs/scalar.js', { headers: { 'if-none-match': `W/${etag}` } })
    expect(res.status).toBe(304)
    expect(res.headers.get('etag')).toBe(etag)
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400')
    expect(await res.text()).toBe('')
    const other = await env.request('/v1/docs/scalar.js', { headers: { 'if-none-match': '"something-else"' } })
    expect(other.status).toBe(200)
  })

  test('is gzipped for clients that accept it, and only for them', async () => {
    const plain = new Uint8Array(await (await env.request('/v1/docs/scalar.js')).arrayBuffer())
    const res = await env.request('/v1/docs/scalar.js', { headers: { 'accept-encoding': 'br, gzip;q=0.8' } })
    expect(res.headers.get('content-encoding')).toBe('gzip')
    expect(res.headers.get('vary')).toBe('accept-encoding')
    expect(res.headers.get('etag')).toMatch(/-gzip"$/)
    const zipped = new Uint8Array(await res.arrayBuffer())
    expect(zipped.byteLength).toBeLessThan(plain.byteLength / 2)
    expect(Buffer.from(gunzipSync(zipped)).equals(Buffer.from(plain))).toBe(true)
    const refused = await env.request('/v1/docs/scalar.js', { headers: { 'accept-encoding': 'gzip;q=0, identity' } })
    expect(refused.headers.get('content-encoding')).toBeNull()
  })
})

/** One Chromium run with every host but 127.0.0.1 unresolvable, so anything fetched from elsewhere fails. */
async function chromiumOffline(args: string[]) {
  const run = await chromium(
    [
      '--disable-default-apps',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      '--virtual-time-budget=10000',
      '--enable-logging=stderr',
      '--v=0',
      ...args,
    ],
    CHROMIUM_TIMEOUT_MS,
  )
  if (run.timedOut) throw new Error(`Chromium did not finish within ${CHROMIUM_TIMEOUT_MS} ms; its log:\n${run.stderr.slice(-2000)}`)
  return run
}

describe('the docs page in headless Chromium', () => {
  let server: ReturnType<typeof Bun.serve> | undefined

  beforeAll(() => {
    requireChromium()
    server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => env.app.handle(r) })
  })
  afterAll(() => server?.stop(true))

  test(
    'renders the API title and its operations from lnk alone',
    async () => {
      const { stdout, stderr, code } = await chromiumOffline(['--dump-dom', `http://127.0.0.1:${server!.port}/v1/docs`])
      expect(code).toBe(0)
      // The <head> holds the title too; what counts is what Scalar rendered from /v1/openapi.json.
      const body = stdout.slice(stdout.indexOf('<body'))
      expect(body).toContain('lnk API')
      expect(body).toContain('Who am I')
      // Paths are shown relative to the server, LNK_BASE_URL/v1.
      expect(body).toContain('>/me<')
      // Console lines that would mean something was refused or missing: a CSP block, a failed load, an error.
      const console = stderr.split('\n').filter((line) => line.includes(':CONSOLE'))
      const trouble = console.filter((line) => /Content Security Policy|Failed to load|Uncaught|not found/i.test(line))
      expect(trouble).toEqual([])
    },
    CHROMIUM_TIMEOUT_MS + 15_000,
  )
})
