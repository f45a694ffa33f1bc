// What a visitor meets on a short domain: the redirect with every link option, the gate pages, the public
// stats page. It keeps links in memory and drops one when the bus says it changed.
import type { ClicksModule } from '../clicks'
import type { LinksModule } from '../links'
import { defineModule, type Platform } from '../module'
import { createSettingsRepo } from '../platform/repo-settings'
import { LinkCache } from './cache'
import { createRedirectHandler } from './handler'
import { ShortHosts } from './short-hosts'
import { createStatsRepo } from './repo-stats'

export function createRedirectModule(platform: Platform, links: LinksModule, clicks: ClicksModule) {
  const { config, db, clock, bus } = platform
  const cache = new LinkCache(links.repo, (id) => clicks.repo.admittedAddressesSync(id), clicks.buffer)
  bus.on('link.changed', ({ domain, slug }) => cache.invalidate(domain, slug))
  /** Key that signs the redirect pages' cookies (password, captcha, consent). */
  const cookieKey = createSettingsRepo(db.db).serverSecret('cookie_signing_key', clock.now())
  /** Hosts short links answer on: the shared pool now; the domains area will add verified custom domains. */
  const shortHosts = new ShortHosts(config.shortDomains)
  const stats = createStatsRepo(db.db)
  const handle = createRedirectHandler({ config, clock, stats, cookieKey, visitorKey: clicks.visitorKey, linkCache: cache, clickBuffer: clicks.buffer, shortHosts })
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
