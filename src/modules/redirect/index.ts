// What a visitor meets on a short domain: the redirect with every link option, the gate pages, the public
// stats page, a custom domain's fallbacks. It keeps links in memory and drops one when the bus says it
// changed, and a domain's all when the bus says the domain changed.
import type { ClicksModule } from '../clicks'
import type { ServedDomains } from '../domains/served'
import type { LinksModule } from '../links'
import { defineModule, type Platform } from '../module'
import { LinkCache } from './cache'
import { createRedirectHandler, type VisitorPages } from './handler'
import { ShortHosts } from './short-hosts'
import { createDomainSlugsRepo } from './repo-domain-slugs'
import { createStatsRepo } from './repo-stats'

export function createRedirectModule(platform: Platform, links: LinksModule, clicks: ClicksModule, served: ServedDomains, pages: VisitorPages | null = null) {
  const { config, db, clock, bus } = platform
  const cache = new LinkCache(links.repo, (id) => clicks.repo.admittedAddressesSync(id), clicks.buffer)
  bus.on('link.changed', ({ domain, slug }) => cache.invalidate(domain, slug))
  const domainSlugs = createDomainSlugsRepo(db.db)
  bus.on('domain.changed', ({ domain }) => cache.invalidateDomain(domain, domainSlugs.slugsSync(domain)))
  /** Key that signs the redirect pages' cookies (password, captcha, consent). */
  const cookieKey = platform.settings.serverSecret('cookie_signing_key', clock.now())
  const shortHosts = new ShortHosts(config.shortDomains, served)
  const stats = createStatsRepo(db.db)
  const handle = createRedirectHandler({ config, clock, stats, cookieKey, visitorKey: clicks.visitorKey, linkCache: cache, clickBuffer: clicks.buffer, shortHosts, served, pages })
  return defineModule({
    name: 'redirect',
    cache,
    cookieKey,
    shortHosts,
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
