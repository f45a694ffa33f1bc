// Custom domains: add, verify by DNS, checks as durable jobs on a schedule, the in-memory set of domains
// served now (filled at creation, so the first request already sees it), and the root routes for the HTTP
// check and Caddy's TLS question.
import { defineModule, type HttpKit, type Platform } from '../module'
import { createDnsResolver, type DnsResolver } from './dns'
import { createDomainsRepo } from './repo'
import { domainRootRoutes } from './root-routes'
import { domainRoutes } from './routes'
import { ServedDomains } from './served'
import { CHECK_JOB, markHttpsSeen, refreshServed, runScheduledCheck, type DomainsCtx } from './service'

/** How often the served set is compared with the database (changes made by other processes). */
export const SERVED_REFRESH_MS = 5000

export function createDomainsModule(platform: Platform, http: HttpKit, options: { dns?: DnsResolver } = {}) {
  const { config, clock, log, db, bus } = platform
  const proofKey = platform.settings.serverSecret('domain_check_key', clock.now())
  const repo = createDomainsRepo(db.db, () => clock.now())
  const served = new ServedDomains((domain) => {
    markHttpsSeen(ctx, domain.id).catch((err) => log.error('recording a domain\'s working certificate failed', { domain: domain.domain, error: (err as Error).message }))
  })
  const ctx: DomainsCtx = {
    config,
    clock,
    log,
    bus,
    served,
    domains: repo,
    check: { config, dns: options.dns ?? createDnsResolver(config.dnsServers), proofKey },
  }
  refreshServed(ctx)
  let refresher: ReturnType<typeof setInterval> | undefined
  return defineModule({
    name: 'domains',
    ctx,
    served,
    routes: domainRoutes(ctx, http),
    rootRoutes: domainRootRoutes({ instanceId: platform.instanceId, config, domains: repo, served, proofKey }),
    jobs: [{ type: CHECK_JOB, run: (payload) => runScheduledCheck(ctx, payload as { id: string; at: number }) }],
    /** Compares the served set with the database now (the timer does it every SERVED_REFRESH_MS). */
    refresh: () => refreshServed(ctx),
    start() {
      refresher = setInterval(() => {
        try {
          refreshServed(ctx)
        } catch (err) {
          log.error('refreshing the served domains failed', { error: (err as Error).message })
        }
      }, SERVED_REFRESH_MS)
      refresher.unref?.()
    },
    async close() {
      clearInterval(refresher)
    },
  })
}

export type DomainsModule = ReturnType<typeof createDomainsModule>
