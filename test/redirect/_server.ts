// Real loopback servers for the redirect tests (not a test file itself): lnk through startServer() exactly
// as `lnk serve` runs it, a receiver standing in for destinations, and headless Chromium runs.
import { startServer, type RunningServer } from '../../src/server'
import { setup, type TestEnv } from '../helpers'

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(null) })
  const port = probe.port!
  probe.stop(true)
  return port
}

export interface Lnk {
  env: TestEnv
  server: RunningServer
  /** http://127.0.0.1:<port>, also the base URL and the short domain. */
  origin: string
  stop(): Promise<void>
}

/** lnk listening on 127.0.0.1 with its own data directory; short links live on the same origin. */
export async function startLnk(extraEnv: Record<string, string> = {}): Promise<Lnk> {
  let lastError: unknown
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = freePort()
    const origin = `http://127.0.0.1:${port}`
    const env = await setup({ env: { LNK_PORT: String(port), LNK_HOST: '127.0.0.1', LNK_BASE_URL: origin, ...extraEnv } })
    try {
      const server = startServer(env.rt)
      return {
        env,
        server,
        origin,
        async stop() {
          await server.shutdown('test over')
          await env.cleanup()
        },
      }
    } catch (err) {
      // Someone took the port between the probe and the listen: try another.
      lastError = err
      await env.cleanup()
    }
  }
  throw lastError
}

export interface Hit {
  method: string
  path: string
  userAgent: string | null
}

/** A loopback stand-in for destinations: records each request and answers a small page. */
export function startReceiver() {
  const hits: Hit[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      const url = new URL(request.url)
      if (url.pathname === '/favicon.ico') return new Response(null, { status: 404 })
      hits.push({ method: request.method, path: `${url.pathname}${url.search}`, userAgent: request.headers.get('user-agent') })
      return new Response(`<!doctype html><html><head><title>Receiver</title></head><body><p id="landed">landed at ${url.pathname}</p></body></html>`, {
        headers: { 'content-type': 'text/html; charset=utf-8' },
      })
    },
  })
  return { hits, origin: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}

export { chromium, requireChromium, withBrowserPage } from '../browser'
