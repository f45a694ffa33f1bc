// The console bundle embedded in the server is the one the sources build, stays under the budget
// (150 KB of script gzipped), and is served at /console with a strict CSP and nothing from elsewhere.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { buildConsole, CONSOLE_GENERATED, renderGenerated } from '../../scripts/build-console'
import { startConsoleServer, type ConsoleServer } from './_console'

describe('the console bundle', () => {
  test('the committed bundle is what the sources build (run `bun run console:build` after a change)', async () => {
    const built = renderGenerated(await buildConsole())
    expect(readFileSync(CONSOLE_GENERATED, 'utf8') === built).toBe(true)
  })

  test('script under 150 KB gzipped', async () => {
    const { js } = await buildConsole()
    expect(Bun.gzipSync(js).length).toBeLessThan(150 * 1024)
  })
})

describe('serving /console', () => {
  let server: ConsoleServer
  beforeAll(async () => {
    server = await startConsoleServer()
  })
  afterAll(() => server.stop())

  test('the page names hashed assets, all from this origin, under a strict CSP', async () => {
    for (const path of ['/console', '/console/']) {
      const res = await fetch(`${server.origin}${path}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
      const csp = res.headers.get('content-security-policy')!
      expect(csp).toContain("default-src 'none'")
      expect(csp).toContain("script-src 'self'")
      expect(csp).not.toContain('unsafe-inline')
      expect(csp).not.toContain('unsafe-eval')
      expect(csp).toContain("frame-ancestors 'none'")
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      const html = await res.text()
      // No inline script: the only <script> has a src on this origin.
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
      expect(scripts).toHaveLength(1)
      expect(scripts[0]![2]!.trim()).toBe('')
      expect(html).not.toMatch(/https?:\/\//)
      const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!)
      expect(assets.map((a) => a.replace(/-[0-9a-f]{16}\./, '-HASH.')).sort()).toEqual(['/console/assets/app-HASH.css', '/console/assets/app-HASH.js'])
      for (const asset of assets) {
        const file = await fetch(`${server.origin}${asset}`)
        expect(file.status).toBe(200)
        expect(file.headers.get('cache-control')).toContain('immutable')
        expect(file.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/)
        const text = await file.text()
        // Nothing fetched from elsewhere at run time: no absolute URLs to other hosts in code that loads things.
        expect(text).not.toMatch(/\bimport\s*\(\s*["']https?:/)
        expect(text).not.toMatch(/@import\s+url\(\s*["']?https?:/)
      }
    }
  })

  test('an unknown asset is 404, not the page', async () => {
    const res = await fetch(`${server.origin}/console/assets/app-0000000000000000.js`)
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toStartWith('text/plain')
  })

  test('console is a reserved slug, so no link can take its place', async () => {
    const res = await server.lnk.env.request('/v1/links', {
      method: 'POST',
      key: server.api.key,
      json: { destinationUrl: 'https://example.com/', slug: 'console' },
    })
    expect(res.status).toBe(400)
    const payload: any = await res.json()
    expect(payload.error.message).toContain('reserved')
  })
})
