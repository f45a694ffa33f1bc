// Bun.serve wiring: one listener for API, redirects and pages; background work; graceful shutdown.
import { createApp } from './app'
import { recordListener, recordSocketAddress } from './http/request-context'
import { redactUrl } from './platform/config'
import { randomId } from './platform/random'
import type { Runtime } from './runtime'

export interface RunningServer {
  port: number
  url: string
  /** Stops accepting, finishes in-flight work, flushes what is held in memory, checkpoints and closes. */
  shutdown(reason?: string): Promise<void>
}

export function startServer(rt: Runtime): RunningServer {
  const app = createApp(rt)
  const server = Bun.serve({
    port: rt.config.port,
    hostname: rt.config.host,
    // No cap of Bun's own: it would answer an empty 413. Every reader of a body stops at its own limit
    // (http/body.ts) and answers with the error envelope.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    development: false,
    fetch(request, srv) {
      recordSocketAddress(request, srv.requestIP(request)?.address)
      // The hot path: short links are answered without going through the API framework.
      const start = performance.now()
      const redirect = rt.modules.redirect.handle(request)
      if (redirect) return countRedirect(request.method, redirect, start)
      recordListener(request, srv)
      return app.handle(request)
    },
  })
  // Redirects are counted in the metrics (route "redirect") rather than logged line by line: at tens of
  // thousands a second the log would cost more than the redirect. The clicks themselves are recorded.
  const redirectLatency = (method: string, start: number, res: Response) => {
    rt.metrics.observe(method, 'redirect', res.status, (performance.now() - start) / 1000)
    res.headers.set('x-request-id', `req_${randomId(20)}`)
    return res
  }
  function countRedirect(method: string, response: Response | Promise<Response>, start: number) {
    return response instanceof Response ? redirectLatency(method, start, response) : response.then((r) => redirectLatency(method, start, r))
  }
  rt.start()
  const database = rt.store.engine === 'pg' ? { database: redactUrl(rt.store.url) } : { data_dir: rt.config.dataDir }
  rt.log.info('lnk listening', { url: `http://${rt.config.host}:${server.port}`, base_url: rt.config.baseUrl, ...database })

  let stopping: Promise<void> | null = null
  return {
    port: server.port ?? rt.config.port,
    url: `http://127.0.0.1:${server.port}`,
    shutdown(reason = 'shutdown') {
      stopping ??= (async () => {
        rt.log.info('shutting down', { reason })
        // Stop accepting; requests already received are answered, within the shutdown timeout.
        const graceful = server.stop(false)
        const timer = setTimeout(() => void server.stop(true), rt.config.shutdownTimeoutSeconds * 1000)
        await graceful
        clearTimeout(timer)
        // Elysia's after-response hooks (request log, metrics) run on setImmediate; let them finish.
        await new Promise((settle) => setImmediate(settle))
        await rt.close()
        rt.log.info('stopped')
      })()
      return stopping
    },
  }
}
