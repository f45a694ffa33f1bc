// Custom domains: add, verify by DNS, checks as durable jobs on a schedule, the in-memory set of domains
// served now (filled before the first request: at creation on SQLite, in init() on PostgreSQL), and the root
// routes for the HTTP check and Caddy's TLS question.
import { engineOf } from '../../db/store'
import { defineModule, type Platform } from '../module'
import type { HttpKit } from '../identity'
import { createDnsResolver, type DnsResolver } from './dns'
import { createDomainsRepo } from './repo'
import { createDomainsSyncReads } from './repo-sqlite'
import { domainRootRoutes } from './root-routes'
import { domainRoutes } from './routes'
import { ServedDomains } from './served'
import { CHECK_JOB, markHttpsSeen, refreshServed, runScheduledCheck, type DomainsCtx } from './service'
import { DOMAIN_EVENTS } from './model'

// What other modules, the app and the CLI use of domains.
export { domainNotFound, domainOutOfScope } from './errors'
export { toHostname } from './hostname'
export type { ServedDomain, ServedDomains } from './served'
export { addDomain, listDomains, toDomain, verifyDomain, type Who } from './service'
export { inDomainScope, unusableDomainMessage, usableDomain } from './usable'

/**
 * How often the served set is compared with the database: changes made by other processes, graces that end.
 * On PostgreSQL other nodes' changes arrive as bus notices at once; this is the backstop for a lost one.
 */
export const SERVED_REFRESH_MS = 5000

export function createDomainsModule(platform: Platform, http: HttpKit, options: { dns?: DnsResolver } = {}) {
  const { config, clock, log, store, bus } = platform
  const proofKey = platform.settings.serverSecret('domain_check_key', clock.now())
  const now = () => clock.now()
  const repo = createDomainsRepo(engineOf(store), now)
  const served = new ServedDomains((domain) => {
    markHttpsSeen(ctx, domain.id).catch((err) =>
      log.error("recording a domain's working certificate failed", { domain: domain.domain, error: (err as Error).message }),
    )
  })
  const ctx: DomainsCtx = {
    config,
    clock,
    log,
    bus,
    served,
    domains: repo,
    syncReads: store.engine === 'sqlite' ? createDomainsSyncReads(store.db.db) : undefined,
    check: { config, dns: options.dns ?? createDnsResolver(config.dnsServers), proofKey },
  }
  // SQLite reads synchronously, here and on every refresh. PostgreSQL's reads are awaited, one at a time so
  // an older read never lands after a newer one, and a refresh asked for during a read runs after it.
  const refresh: () => void | Promise<void> = store.engine === 'sqlite' ? () => refreshServed(ctx) : oneAtATime(async () => refreshServed(ctx))
  const refreshLogged = () =>
    Promise.resolve()
      .then(refresh)
      .catch((err) => log.error('refreshing the served domains failed', { error: (err as Error).message }))
  if (store.engine === 'sqlite') refreshServed(ctx)
  // Another node changed a domain (relayed by the bus), or its notices may have been lost: read the set again.
  const unsubscribe = store.engine === 'pg' ? [bus.on('domain.changed', refreshLogged), bus.on('caches.reset', refreshLogged)] : []
  let refresher: ReturnType<typeof setInterval> | undefined
  return defineModule({
    name: 'domains',
    events: DOMAIN_EVENTS,
    ctx,
    served,
    /** Whether a hostname (lower case, punycode, no port) is a custom domain served now: for other areas. */
    serves: (hostname: string) => served.get(hostname) !== undefined,
    routes: domainRoutes(ctx, http),
    rootRoutes: domainRootRoutes({ instanceId: platform.instanceId, config, domains: repo, served, proofKey }),
    jobs: [{ type: CHECK_JOB, run: (payload) => runScheduledCheck(ctx, payload as { id: string; at: number }) }],
    /** Compares the served set with the database now (the timer does it every SERVED_REFRESH_MS). */
    refresh,
    async init() {
      await refresh()
    },
    start() {
      refresher = setInterval(refreshLogged, SERVED_REFRESH_MS)
      refresher.unref?.()
    },
    async close() {
      clearInterval(refresher)
      for (const stop of unsubscribe) stop()
    },
  })
}

/**
 * `task` run one at a time: a call while it runs asks for one more run after it (calls meanwhile share that
 * run), so the last run always starts after the last call.
 */
function oneAtATime(task: () => Promise<void>): () => Promise<void> {
  let wanted = false
  let loop: Promise<void> | undefined
  return () => {
    wanted = true
    loop ??= (async () => {
      try {
        while (wanted) {
          wanted = false
          await task()
        }
      } finally {
        loop = undefined
      }
    })()
    return loop
  }
}

export type DomainsModule = ReturnType<typeof createDomainsModule>
