// Bridge pages: the API (pages, blocks, templates, saved templates), the visitor side (/p/{slug},
// /_/b/{blockId}, pages shown by links) and the counting of views and clicks, written every second.
import { Elysia } from 'elysia'
import { engineOf, onEngine } from '../../db/store'
import type { DomainsModule } from '../domains'
import { KeyedQueue } from '../../platform/keyed-queue'
import { defineModule, type Platform } from '../module'
import type { HttpKit } from '../identity'
import { createPagesRepo } from './repo'
import { createPagesSyncReads } from './repo-sqlite'
import { pageRoutes, savedTemplateRoutes, templateRoutes } from './routes'
import { COUNT_FLUSH_MS, createPageServer, SHARED_CACHE_TTL_MS } from './serve'
import type { PagesCtx } from './service'
import { PAGE_EVENTS } from './model'

export function createPagesModule(platform: Platform, http: HttpKit, domains: DomainsModule) {
  const { config, clock, log, store, bus } = platform
  const now = () => clock.now()
  const repo = createPagesRepo(engineOf(store), now)
  const ctx: PagesCtx = { config, clock, log, bus, pages: repo, served: domains.served, editing: new KeyedQueue() }
  // One SQLite process hears every change on its bus; PostgreSQL nodes may miss another node's notice.
  const ttlMs = onEngine(
    store,
    () => Infinity,
    () => SHARED_CACHE_TTL_MS,
  )
  const syncReads = store.engine === 'sqlite' ? createPagesSyncReads(store.db.db) : undefined
  const server = createPageServer({ config, clock, log, pages: repo, syncReads, ttlMs })
  bus.on('page.changed', ({ id }) => server.invalidate(id))
  bus.on('link.changed', () => server.invalidateAll())
  bus.on('caches.reset', () => server.reset())
  let flusher: ReturnType<typeof setInterval> | undefined
  return defineModule({
    name: 'pages',
    events: PAGE_EVENTS,
    ctx,
    repo,
    server,
    routes: new Elysia({ name: 'lnk.pages-area', seed: http.instanceId })
      .use(pageRoutes(ctx, http))
      .use(savedTemplateRoutes(ctx, http))
      .use(templateRoutes(http)),
    start() {
      flusher = setInterval(() => void server.flush(), COUNT_FLUSH_MS)
      flusher.unref?.()
    },
    async close() {
      clearInterval(flusher)
      await server.flush()
    },
  })
}

export type PagesModule = ReturnType<typeof createPagesModule>
