// What a visitor meets on a short domain: the redirect with every link option, the gate pages, the public
// stats page, a custom domain's fallbacks. It keeps links in memory and drops one when the bus says it
// changed, and a domain's all when the bus says the domain changed; everything when notices may have been lost.
import { engineOf, onEngine } from '../../db/store'
import type { ClicksModule } from '../clicks'
import type { ServedDomains } from '../domains'
import type { HttpKit } from '../identity'
import type { LinksModule } from '../links'
import { defineModule, type Platform } from '../module'
import { LinkCache } from './cache'
import { gateLimitsFor } from './gates'
import { createRedirectHandler, type VisitorPages } from './handler'
import { ShortHosts } from './short-hosts'
import { createDomainSlugsRepo } from './repo-domain-slugs'
import { createRedirectSyncReads } from './repo-sqlite'
import { createStatsRepo } from './repo-stats'
import { resolveRoutes } from './resolve-routes'
import { StatsPageCache } from './stats-page-cache'
import { createFactSources } from './visit-facts'

/**
 * How long a node keeps a link read from PostgreSQL. Other nodes' writes reach it as notices within
 * milliseconds; this bounds how long a lost one (between a LISTEN connection dropping and the reset that
 * follows its reconnect) can leave a stale link served. SQLite keeps links until a write drops them: one
 * process sees every write.
 */
const PG_LINK_TTL_MS = 30_000

export function createRedirectModule(
  platform: Platform,
  links: LinksModule,
  clicks: ClicksModule,
  served: ServedDomains,
  pages: VisitorPages | null = null,
  http: HttpKit | null = null,
) {
  const { config, store, clock, bus, log } = platform
  const engine = engineOf(store)
  const stats = createStatsRepo(engine)
  const domainSlugs = createDomainSlugsRepo(engine)
  /** SQLite's synchronous reads; on PostgreSQL the redirect awaits the repos. */
  const syncReads = onEngine(
    store,
    (s) => createRedirectSyncReads(s.db.db),
    () => null,
  )
  const { admittedAddressesSync, admittedAddresses } = clicks.repo
  const cache = new LinkCache(links.repo, links.redirectReads, admittedAddressesSync ?? admittedAddresses, clicks.buffer, {
    ttlMs: store.engine === 'pg' ? PG_LINK_TTL_MS : 0,
    clock,
  })
  const statsPages = new StatsPageCache()
  bus.on('link.changed', ({ domain, slug }) => cache.invalidate(domain, slug))
  bus.on('domain.changed', ({ domain }) => {
    if (syncReads) return cache.invalidateDomain(domain, syncReads.slugsSync(domain))
    cache
      .invalidateDomainOnceRead(domain, domainSlugs.slugs(domain))
      // Nothing better to drop: the whole cache goes rather than a domain's links served stale.
      .catch((err) => {
        log.error('reading a changed domain’s links failed; link cache cleared', { domain, error: (err as Error).message })
        cache.clear()
      })
  })
  bus.on('caches.reset', () => {
    cache.clear()
    statsPages.clear()
  })
  /** Key that signs the redirect pages' cookies (password, captcha, consent). */
  const cookieKey = platform.settings.serverSecret('cookie_signing_key', clock.now())
  const shortHosts = new ShortHosts(config.shortDomains, served)
  /** What routing rules read of a visit: the click enricher's lookups and the visitor hash, cached by address and agent. */
  const facts = createFactSources(clicks.enricher, clicks.visitorOf)
  const handle = createRedirectHandler({
    config,
    clock,
    stats,
    statsSync: syncReads,
    statsPages,
    cookieKey,
    visitorKey: clicks.visitorKey,
    linkCache: cache,
    clickBuffer: clicks.buffer,
    reservations: clicks.reservations,
    shortHosts,
    served,
    pages,
    gateLimits: gateLimitsFor(platform.store),
    facts,
  })
  const routes =
    http === null ? undefined : resolveRoutes({ links: links.ctx, clock, linkCache: cache, shortHosts, sources: facts, visitorKey: clicks.visitorKey }, http)
  return defineModule({
    name: 'redirect',
    routes,
    cache,
    cookieKey,
    shortHosts,
    facts,
    handle,
    start() {
      const started = performance.now()
      cache
        .prefill()
        .then((loaded) => platform.log.info('link cache filled', { links: loaded, ms: Math.round(performance.now() - started) }))
        .catch((err) => platform.log.error('link cache fill failed; links load on their first visit', { error: (err as Error).message }))
    },
  })
}

export type RedirectModule = ReturnType<typeof createRedirectModule>
