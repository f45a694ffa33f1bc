// Custom domains (issue: add, verify by DNS, serve): plain functions shared by HTTP, the admin CLI and the
// check job. Each write commits first, then tells the served set and the bus, so what is served is never
// ahead of what is stored.
import { domainToUnicode } from 'node:url'
import type { Deps } from '../../context'
import type { EventBus } from '../../events/bus'
import type { PublishInput } from '../../events/outbox'
import { iso, isoOrNull } from '../../platform/clock'
import { Issues } from '../../platform/errors'
import { newId, randomId } from '../../platform/random'
import type { Caller } from '../identity'
import { lookUp, httpCheckUrl, type CheckDeps } from './check'
import { domainHasLinks, domainNotFound, domainOutOfScope, domainTakenHere, domainVerifiedElsewhere, testKeyChangesDomain, verifyThrottled } from './errors'
import { parseDomain, serviceHostnames } from './hostname'
import type { CreateDomainInput, DomainView, UpdateDomainInput } from './model'
import type { DomainPatch, DomainRow, DomainsRepo, DomainsSyncReads, Effects } from './port'
import type { ServedDomain, ServedDomains } from './served'
import { acceptsNewLinks, expectedRecords, isServed, nextCheckAt, PENDING_FOR_MS, pointing, VERIFY_EVERY_MS } from './verdict'
import { inDomainScope } from './usable'

export const CHECK_JOB = 'domains.check'

export interface DomainsCtx extends Deps {
  domains: DomainsRepo
  /** SQLite only: the served set read without awaiting; PostgreSQL's is read with the awaited verified(). */
  syncReads?: DomainsSyncReads
  served: ServedDomains
  bus: Pick<EventBus, 'emit' | 'emitLocal'>
  check: CheckDeps
}

/** Who acts: a caller of the API, or the admin CLI acting in a workspace (a live, unscoped key). */
export type Who = Pick<Caller, 'workspace' | 'mode'> & { key: Pick<Caller['key'], 'scopeFilters'> }

export function toDomain(ctx: Pick<DomainsCtx, 'config' | 'clock'>, row: DomainRow): DomainView {
  const seen = row.seen
  const records = expectedRecords(row.domain, row.token, ctx.config).map((r) => {
    const found = seen === null ? null : { TXT: seen.txt, CNAME: seen.cname, A: seen.a, AAAA: seen.aaaa }[r.type]
    return { ...r, seen: found ?? null, ok: found == null ? null : found.includes(r.value) }
  })
  return {
    id: row.id,
    domain: row.domain,
    unicodeDomain: domainToUnicode(row.domain) || row.domain,
    verificationStatus: row.verificationStatus,
    dnsStatus: row.dnsStatus,
    sslStatus: row.sslStatus,
    served: isServed(row, ctx.clock.now()),
    records,
    httpCheck: seen?.http ? { url: httpCheckUrl(ctx.config, row.domain, row.token), ...seen.http } : null,
    lookupErrors: seen?.errors ?? [],
    failureReason: row.failureReason,
    rootRedirectUrl: row.rootRedirectUrl,
    notFoundUrl: row.notFoundUrl,
    expiredUrl: row.expiredUrl,
    lastCheckedAt: isoOrNull(row.lastCheckedAt),
    nextCheckAt: isoOrNull(row.nextCheckAt),
    verifiedAt: isoOrNull(row.verifiedAt),
    misconfiguredAt: isoOrNull(row.misconfiguredAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

function refuseTestKey(caller: Who) {
  if (caller.mode === 'test') throw testKeyChangesDomain()
}

function checkFallbackUrls(issues: Issues, input: Partial<Record<'rootRedirectUrl' | 'notFoundUrl' | 'expiredUrl', string | null>>) {
  for (const key of ['rootRedirectUrl', 'notFoundUrl', 'expiredUrl'] as const) {
    const value = input[key]
    if (value == null) continue
    let url: URL
    try {
      // The placeholders are filled in before use; an example value stands in for them here.
      url = new URL(value.replaceAll('{DOMAIN}', 'example.com').replaceAll('{ORIGINAL_PATH}', 'path'))
    } catch {
      issues.add(key, 'must be an absolute URL such as https://example.com/page ({DOMAIN} and {ORIGINAL_PATH} may appear in it)')
      continue
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') issues.add(key, 'must use http or https')
  }
}

const domainEvent = (ctx: DomainsCtx, type: string, row: DomainRow, extra: Record<string, unknown> = {}): PublishInput => ({
  type,
  workspaceId: row.workspaceId,
  mode: 'live',
  data: { ...toDomain(ctx, row), ...extra },
})

const checkJob = (row: Pick<DomainRow, 'id' | 'nextCheckAt'>): Effects['job'] =>
  row.nextCheckAt === null ? undefined : { type: CHECK_JOB, payload: { id: row.id, at: row.nextCheckAt }, runAt: row.nextCheckAt, maxAttempts: 3 }

/**
 * After a commit: serve the domain or stop. The bus hears of it only when what is served changed (or the
 * domain went, its links archived): a routine daily check that changes nothing must not empty caches.
 * `learned` is a change read from the database that another node made and announced already: only this
 * node's listeners are told, so nodes do not echo each other's notices.
 */
export function publishServing(ctx: DomainsCtx, row: DomainRow, deleted = false, learned = false) {
  const current = ctx.served.get(row.domain)
  const next: ServedDomain | undefined =
    !deleted && isServed(row, ctx.clock.now())
      ? {
          id: row.id,
          domain: row.domain,
          workspaceId: row.workspaceId,
          rootRedirectUrl: row.rootRedirectUrl,
          notFoundUrl: row.notFoundUrl,
          expiredUrl: row.expiredUrl,
          acceptsNewLinks: acceptsNewLinks(row),
        }
      : undefined
  if (next) ctx.served.set(next)
  // Another workspace's failed claim must not unserve the winner's domain.
  else if (current?.id === row.id) ctx.served.delete(row.domain)
  const changed = deleted || (next ? !sameServing(current, next) : current?.id === row.id)
  if (changed) announce(ctx, row.domain, learned)
}

function announce(ctx: DomainsCtx, domain: string, learned: boolean) {
  if (learned) ctx.bus.emitLocal('domain.changed', { domain })
  else ctx.bus.emit('domain.changed', { domain })
}

const sameServing = (a: ServedDomain | undefined, b: ServedDomain) => a !== undefined && (Object.keys(b) as (keyof ServedDomain)[]).every((k) => a[k] === b[k])

/**
 * Makes the served set what the database says: at start, and every few seconds after, so a domain verified
 * by another process (the admin CLI, another node) is served here too, and a grace that ends between checks
 * ends on time. Synchronous on SQLite; on PostgreSQL it answers once the read is applied.
 */
export function refreshServed(ctx: DomainsCtx): void | Promise<void> {
  if (ctx.syncReads) return serveStored(ctx, ctx.syncReads.verifiedSync())
  return ctx.domains.verified().then((rows) => serveStored(ctx, rows))
}

function serveStored(ctx: DomainsCtx, verified: DomainRow[]) {
  for (const row of verified) publishServing(ctx, row, false, true)
  const stored = new Set(verified.map((row) => row.id))
  for (const domain of ctx.served.all()) {
    if (stored.has(domain.id)) continue
    ctx.served.delete(domain.domain)
    announce(ctx, domain.domain, true)
  }
}

export async function listDomains(ctx: DomainsCtx, caller: Who): Promise<DomainView[]> {
  return (await ctx.domains.list(caller.workspace.id)).filter((r) => inDomainScope(caller, r.domain)).map((r) => toDomain(ctx, r))
}

async function findOwn(ctx: DomainsCtx, caller: Who, id: string, purpose: 'read' | 'write' = 'read'): Promise<DomainRow> {
  const row = await ctx.domains.findById(caller.workspace.id, id)
  if (!row) throw domainNotFound(id)
  if (!inDomainScope(caller, row.domain)) throw purpose === 'read' ? domainNotFound(id) : domainOutOfScope(row.domain)
  return row
}

export async function getDomain(ctx: DomainsCtx, caller: Who, id: string): Promise<DomainView> {
  return toDomain(ctx, await findOwn(ctx, caller, id))
}

export async function addDomain(ctx: DomainsCtx, caller: Who, input: CreateDomainInput): Promise<DomainView> {
  refuseTestKey(caller)
  const issues = new Issues()
  const parsed = parseDomain(input.domain)
  if ('problem' in parsed) issues.add('domain', parsed.problem)
  else if (serviceHostnames(ctx.config).has(parsed.hostname))
    issues.add('domain', `${parsed.hostname} is this service's own host (the API or the shared pool of short domains); add a domain of your own`)
  checkFallbackUrls(issues, input)
  issues.throwIfAny()
  const domain = (parsed as { hostname: string }).hostname
  if (!inDomainScope(caller, domain)) throw domainOutOfScope(domain)
  const now = ctx.clock.now()
  const row: DomainRow = {
    id: newId('dom'),
    workspaceId: caller.workspace.id,
    domain,
    verificationStatus: 'pending',
    dnsStatus: 'unknown',
    sslStatus: ctx.config.tlsMode === 'caddy' ? 'pending' : 'unmanaged',
    token: `lnk-verify=${randomId(32)}`,
    failureReason: null,
    seen: null,
    rootRedirectUrl: input.rootRedirectUrl ?? null,
    notFoundUrl: input.notFoundUrl ?? null,
    expiredUrl: input.expiredUrl ?? null,
    lastCheckedAt: null,
    nextCheckAt: null,
    verifiedAt: null,
    misconfiguredAt: null,
    createdAt: now,
    updatedAt: now,
  }
  row.nextCheckAt = nextCheckAt(row, now)
  const outcome = await ctx.domains.insert(row, { events: [domainEvent(ctx, 'domain.created', row)], job: checkJob(row) })
  if (!outcome.ok) throw outcome.reason === 'taken_here' ? domainTakenHere(domain, outcome.id) : domainVerifiedElsewhere(domain)
  return toDomain(ctx, row)
}

export async function updateDomain(ctx: DomainsCtx, caller: Who, id: string, input: UpdateDomainInput): Promise<DomainView> {
  refuseTestKey(caller)
  const current = await findOwn(ctx, caller, id, 'write')
  const issues = new Issues()
  checkFallbackUrls(issues, input)
  issues.throwIfAny()
  const patch: DomainPatch = { updatedAt: ctx.clock.now() }
  for (const key of ['rootRedirectUrl', 'notFoundUrl', 'expiredUrl'] as const) if (input[key] !== undefined) patch[key] = input[key]
  const row = await ctx.domains.update(current.id, patch)
  if (!row) throw domainNotFound(id)
  publishServing(ctx, row)
  return toDomain(ctx, row)
}

export async function deleteDomain(ctx: DomainsCtx, caller: Who, id: string, archiveLinks: boolean) {
  refuseTestKey(caller)
  const current = await findOwn(ctx, caller, id, 'write')
  const outcome = await ctx.domains.delete(current.id, caller.workspace.id, archiveLinks, (archived) => ({
    events: [domainEvent(ctx, 'domain.deleted', current, { archivedLinks: archived })],
  }))
  if (!outcome.ok) throw outcome.reason === 'has_links' ? domainHasLinks(current.domain, outcome.links) : domainNotFound(id)
  publishServing(ctx, current, true)
  return { id: current.id, deleted: true as const, archivedLinks: outcome.archivedLinks }
}

/** POST /domains/{id}/verify: a check now, at most one per 10 s per domain. */
export async function verifyDomain(ctx: DomainsCtx, caller: Who, id: string): Promise<DomainView> {
  refuseTestKey(caller)
  const row = await findOwn(ctx, caller, id, 'write')
  const since = row.lastCheckedAt === null ? Infinity : ctx.clock.now() - row.lastCheckedAt
  if (since < VERIFY_EVERY_MS) throw verifyThrottled(Math.ceil((VERIFY_EVERY_MS - since) / 1000))
  return toDomain(ctx, await runCheck(ctx, row))
}

/** The scheduled check: a job whose time is no longer the domain's next check was superseded and does nothing. */
export async function runScheduledCheck(ctx: DomainsCtx, payload: { id: string; at: number }) {
  const row = await ctx.domains.findAnyById(payload.id)
  if (!row || row.nextCheckAt !== payload.at) return
  await runCheck(ctx, row)
}

/** Looks at DNS, decides the domain's new state, writes it with its events and next job, then serves it or not. */
export async function runCheck(ctx: DomainsCtx, row: DomainRow): Promise<DomainRow> {
  const seen = await lookUp(ctx.check, row.domain, row.token)
  const now = ctx.clock.now()
  const events: string[] = []
  const patch: DomainPatch = { seen, lastCheckedAt: now, updatedAt: now }
  const next = { ...row }
  const txtSeen = seen.txt === null ? null : seen.txt.includes(row.token)
  if (row.verificationStatus !== 'verified' && txtSeen) {
    Object.assign(next, { verificationStatus: 'verified', verifiedAt: now, failureReason: null })
    events.push('domain.verified')
  } else if (row.verificationStatus === 'pending' && txtSeen === false && now - row.createdAt >= PENDING_FOR_MS) {
    // Only a lookup that answered "no such record" fails it: after a transient error it is looked at again.
    Object.assign(next, {
      verificationStatus: 'failed',
      failureReason: `The TXT record _lnk-challenge.${row.domain} was not seen within 7 days of adding the domain; fix it and verify again`,
    })
  }
  // A lookup that failed for a transient reason leaves the status as it was: it never fails a domain.
  const dnsStatus = pointing(seen, ctx.config) ?? row.dnsStatus
  const wasServing = row.verificationStatus === 'verified' && row.dnsStatus !== 'misconfigured'
  next.dnsStatus = dnsStatus
  if (next.verificationStatus === 'verified') {
    if (dnsStatus === 'misconfigured' && wasServing) {
      next.misconfiguredAt = now
      events.push('domain.misconfigured')
    }
    if (dnsStatus !== 'misconfigured') {
      if (row.verificationStatus === 'verified' && row.dnsStatus === 'misconfigured') events.push('domain.verified')
      next.misconfiguredAt = null
    }
  }
  next.sslStatus = sslStatusOf(ctx, next, now)
  next.nextCheckAt = nextCheckAt(next, now)
  Object.assign(patch, pick(next, ['verificationStatus', 'verifiedAt', 'failureReason', 'dnsStatus', 'misconfiguredAt', 'sslStatus', 'nextCheckAt']))

  const claiming = row.verificationStatus !== 'verified' && next.verificationStatus === 'verified'
  const effects = (r: DomainRow): Effects => ({ events: events.map((type) => domainEvent(ctx, type, r)), job: checkJob(r) })
  const written = { ...row, ...patch } as DomainRow
  let outcome = await ctx.domains.recordCheck(
    row.id,
    patch,
    effects(written),
    claiming ? { reason: `Another workspace verified ${row.domain} first`, now } : null,
  )
  if (!outcome.ok && outcome.reason === 'claimed_elsewhere') {
    const lost: DomainPatch = {
      seen,
      lastCheckedAt: now,
      updatedAt: now,
      dnsStatus,
      verificationStatus: 'failed',
      failureReason: `Another workspace verified ${row.domain} first`,
      nextCheckAt: null,
    }
    lost.sslStatus = sslStatusOf(ctx, { ...row, ...lost } as DomainRow, now)
    outcome = await ctx.domains.recordCheck(row.id, lost, {}, null)
  }
  if (!outcome.ok) throw domainNotFound(row.id)
  publishServing(ctx, outcome.row)
  return outcome.row
}

/** unmanaged without Caddy; with it, active once HTTPS was seen, pending until then, failed when not served. */
function sslStatusOf(ctx: Pick<DomainsCtx, 'config'>, row: DomainRow, now: number): DomainRow['sslStatus'] {
  if (ctx.config.tlsMode !== 'caddy') return 'unmanaged'
  if (isServed(row, now)) return row.sslStatus === 'active' ? 'active' : 'pending'
  return row.verificationStatus === 'pending' ? 'pending' : 'failed'
}

/** The served set saw a request for the domain come over TLS through Caddy: its certificate works. */
export async function markHttpsSeen(ctx: DomainsCtx, id: string) {
  const row = await ctx.domains.findAnyById(id)
  if (!row || row.sslStatus === 'active' || ctx.config.tlsMode !== 'caddy') return
  await ctx.domains.update(id, { sslStatus: 'active', updatedAt: ctx.clock.now() })
}

function pick<T extends object, K extends keyof T>(source: T, keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, source[k]])) as Pick<T, K>
}
