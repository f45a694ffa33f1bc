// Links: create (one or in bulk), list, read, change and delete; each change is announced on the bus after
// commit, so whatever caches links (the redirect) drops them.
import type { DomainsModule } from '../domains'
import type { PagesModule } from '../pages'
import { defineModule, type HttpKit, type Platform } from '../module'
import { onEngine } from '../../db/store'
import { withAsync } from '../../db/rows'
import { createLinksRepo } from './repo'
import { createLinksRepoPg } from './repo-pg'
import { linkRoutes } from './routes'
import type { LinksCtx } from './service'

export function createLinksModule(platform: Platform, http: HttpKit, domains: DomainsModule, pages: Pick<PagesModule, 'repo'>) {
  const { config, store, clock, log, bus } = platform
  const ctx: LinksCtx = { config, clock, log, links: onEngine(store, (s) => withAsync(createLinksRepo(s.db.db)), (s) => createLinksRepoPg(s.db)), bus, served: domains.served, bridgePages: pages.repo }
  return defineModule({ name: 'links', ctx, repo: ctx.links, routes: linkRoutes(ctx, http) })
}

export type LinksModule = ReturnType<typeof createLinksModule>
