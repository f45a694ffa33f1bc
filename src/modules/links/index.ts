// Links: create (one or in bulk), list, read, change and delete; each change is announced on the bus after
// commit, so whatever caches links (the redirect) drops them.
import type { DomainsModule } from '../domains'
import type { PagesModule } from '../pages'
import { LINK_EVENTS, type LinkQr } from './model'
import { defineModule, type Platform } from '../module'
import type { HttpKit } from '../identity'
import { engineOf, onEngine } from '../../db/store'
import type { RedirectReads } from './port'
import { createLinksRepo } from './repo'
import { createLinkListRepo } from './repo-list'
import { createLinkStatements, createRedirectReads } from './repo-sqlite'
import { linkRoutes } from './routes'
import type { LinksCtx } from './context'

// What other modules, the app and the CLI use of links.
export type { LinkRow, LinksRepo, RedirectLink, RedirectReads } from './port'
export type { LinksCtx } from './context'
export { getLink, inScope } from './service'
export { toLink } from './view'

export function createLinksModule(
  platform: Platform,
  http: HttpKit,
  domains: DomainsModule,
  pages: Pick<PagesModule, 'repo'>,
  qr: LinkQr,
  folders: LinksCtx['folders'],
) {
  const { config, store, clock, log, bus } = platform
  const links = createLinksRepo(
    engineOf(store),
    onEngine(
      store,
      (s) => createLinkStatements(s.db.db),
      () => undefined,
    ),
  )
  /** The redirect's synchronous reads: SQLite only; on PostgreSQL the redirect awaits `repo`. */
  const redirectReads: RedirectReads | null = onEngine(
    store,
    (s) => createRedirectReads(s.db.db),
    () => null,
  )
  const ctx: LinksCtx = {
    config,
    clock,
    log,
    links,
    linkList: createLinkListRepo(engineOf(store)),
    bus,
    served: domains.served,
    bridgePages: pages.repo,
    qr,
    folders,
  }
  return defineModule({ name: 'links', events: LINK_EVENTS, ctx, repo: links, redirectReads, routes: linkRoutes(ctx, http) })
}

export type LinksModule = ReturnType<typeof createLinksModule>
