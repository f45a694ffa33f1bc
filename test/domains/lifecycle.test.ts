// A domain's life on the injected clock: the check schedule while pending and once verified, failing after
// 7 days, losing and regaining its records (served 7 more days, events), and two workspaces racing for one
// domain. Checks run as durable jobs through the worker, against a loopback DNS server.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MINUTE_MS, HOUR_MS, DAY_MS } from '../../src/platform/time'
import { body, bootstrapAccount, ON_PG, rawRows, storedEvents } from '../helpers'
import { receiver, type Receiver } from '../webhooks/_webhooks'
import { CNAME_TARGET, domainsEnv, type DomainsEnv } from './_domains'

let env: DomainsEnv
let rx: Receiver
beforeAll(async () => {
  env = await domainsEnv()
  rx = receiver()
  await env.createEndpoint({ url: rx.url(), events: ['domain.*'] })
})
afterAll(async () => {
  rx.stop()
  await env.close()
})

/** Moves the clock to the domain's next check and runs what is due; answers the domain after. */
async function nextCheck(id: string) {
  const before = await env.get(id)
  env.clock.set(Date.parse(before.nextCheckAt))
  await env.run()
  return env.get(id)
}

/**
 * The domain's event types in the order they were published (outbox seq), once each has reached the endpoint.
 * Arrival order says nothing: the worker sends due deliveries side by side.
 */
async function eventsFor(domain: string) {
  const published = (await storedEvents(env)).filter((e) => e.type.startsWith('domain.') && e.data.domain === domain)
  const delivered = rx.received.map((r) => JSON.parse(r.body)).filter((e) => e.type.startsWith('domain.') && e.data?.domain === domain)
  expect(delivered.map((e) => e.id as string).sort()).toEqual(published.map((e) => e.id).sort())
  return published.map((e) => e.type)
}

describe('the check schedule', () => {
  test('pending: +1, +5, +15 min, hourly to 72 h, 6-hourly to 7 days, then failed', async () => {
    const d = await env.add('never.example.test')
    const created = Date.parse(d.createdAt)
    const offsets: number[] = []
    let current = d
    // Bounded: 3 + 72 + 16 checks are expected; stop well past that.
    for (let i = 0; i < 120 && current.nextCheckAt !== null; i++) {
      current = await nextCheck(d.id)
      offsets.push(Date.parse(current.lastCheckedAt) - created)
    }
    const expected = [MINUTE_MS, 5 * MINUTE_MS, 15 * MINUTE_MS]
    for (let h = 1; h <= 72; h++) expected.push(h * HOUR_MS)
    for (let h = 78; h <= 168; h += 6) expected.push(h * HOUR_MS)
    expect(offsets).toEqual(expected)
    expect(current).toMatchObject({ verificationStatus: 'failed', nextCheckAt: null, served: false })
    expect(current.failureReason).toContain('7 days')
    // A failed domain is checked again on request, and verifies once its TXT appears.
    env.point(d)
    env.clock.advance(10_000)
    expect((await body(await env.verify(d.id))).data).toMatchObject({ verificationStatus: 'verified', failureReason: null, served: true })
  }, 30_000)

  test('a resolver failing at the 7-day check does not fail the domain: it is looked at again 6 h later', async () => {
    const d = await env.add('late-flaky.example.test')
    let current = d
    for (let i = 0; i < 120 && Date.parse(current.nextCheckAt) - Date.parse(d.createdAt) < 7 * DAY_MS; i++) current = await nextCheck(d.id)
    env.dns.fail(`_lnk-challenge.${d.domain}`, 'servfail')
    const flaky = await nextCheck(d.id)
    expect(flaky).toMatchObject({ verificationStatus: 'pending', failureReason: null })
    expect(flaky.lookupErrors).toEqual([`TXT _lnk-challenge.${d.domain}: ESERVFAIL`])
    expect(Date.parse(flaky.nextCheckAt) - Date.parse(flaky.lastCheckedAt)).toBe(6 * HOUR_MS)
    env.dns.fail(`_lnk-challenge.${d.domain}`, null)
    expect(await nextCheck(d.id)).toMatchObject({ verificationStatus: 'failed', nextCheckAt: null })
  }, 30_000)

  test('a scheduled check sees the records; a verified domain is then checked daily', async () => {
    const d = await env.add('scheduled.example.test')
    env.point(d)
    const notices: string[] = []
    const stop = env.rt.bus.on('domain.changed', ({ domain }) => notices.push(domain))
    const first = await nextCheck(d.id)
    expect(first).toMatchObject({ verificationStatus: 'verified', dnsStatus: 'ok', served: true })
    expect(Date.parse(first.lastCheckedAt) - Date.parse(d.createdAt)).toBe(MINUTE_MS)
    const second = await nextCheck(d.id)
    expect(Date.parse(second.lastCheckedAt) - Date.parse(first.lastCheckedAt)).toBe(DAY_MS)
    // Served from the first check on; the daily check that changed nothing told nobody.
    stop()
    expect(notices).toEqual([d.domain])
    await env.run()
    expect(await eventsFor(d.domain)).toEqual(['domain.created', 'domain.verified'])
  })

  test('a check asked for replaces the scheduled one: the stale job does nothing', async () => {
    const d = await env.add('replaced.example.test')
    env.clock.advance(30_000)
    const asked = (await body(await env.verify(d.id))).data
    // Asked at +30 s: the next scheduled check is still the +1 min one, scheduled once.
    expect(Date.parse(asked.nextCheckAt) - Date.parse(d.createdAt)).toBe(MINUTE_MS)
    env.clock.set(Date.parse(asked.nextCheckAt))
    await env.run()
    const after = await env.get(d.id)
    expect(after.lastCheckedAt).toBe(new Date(Date.parse(d.createdAt) + MINUTE_MS).toISOString())
    expect(Date.parse(after.nextCheckAt) - Date.parse(d.createdAt)).toBe(5 * MINUTE_MS)
  })
})

describe('losing and regaining the records', () => {
  test('misconfigured: served 7 more days with domain.misconfigured; records back: ok and domain.verified', async () => {
    const d = await env.add('wobbly.example.test')
    env.point(d)
    await env.verify(d.id)
    const link = (await body(await env.api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/w', domain: d.domain } }))).data
    const visit = () => env.app.handle(new Request(`http://${d.domain}/${link.slug}`, { headers: { 'user-agent': 'Mozilla/5.0 Chrome/120.0' } }))

    env.dns.set(d.domain, 'CNAME', [])
    const lost = await nextCheck(d.id)
    expect(lost).toMatchObject({ verificationStatus: 'verified', dnsStatus: 'misconfigured', served: true, misconfiguredAt: lost.lastCheckedAt })
    expect((await visit()).status).toBe(302)
    // Still served, so no new links: only a domain that points here takes them.
    expect((await env.api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/n', domain: d.domain } })).status).toBe(400)

    // Daily checks until the grace ends; then it is no longer served.
    let current = lost
    for (let i = 0; i < 10 && current.served; i++) current = await nextCheck(d.id)
    expect(Date.parse(current.lastCheckedAt) - Date.parse(lost.misconfiguredAt)).toBe(7 * DAY_MS)
    expect(current).toMatchObject({ verificationStatus: 'verified', dnsStatus: 'misconfigured', served: false })
    expect(env.rt.modules.domains.served.get(d.domain)).toBeUndefined()
    expect((await visit()).status).toBe(404)

    env.point(d)
    const back = await nextCheck(d.id)
    expect(back).toMatchObject({ dnsStatus: 'ok', served: true, misconfiguredAt: null })
    expect((await visit()).status).toBe(302)
    await env.run()
    expect(await eventsFor(d.domain)).toEqual(['domain.created', 'domain.verified', 'domain.misconfigured', 'domain.verified'])
  })
})

describe('two workspaces claim one domain', () => {
  test('verifying at once: exactly one wins, the other fails with the reason; a third cannot add it', async () => {
    const rivals = await Promise.all([bootstrapAccount(env.rt), bootstrapAccount(env.rt)])
    const keys = rivals.map((a) => a.apiKey.key as string)
    const added = await Promise.all(keys.map((key) => env.add('contested.example.test', {}, key)))
    env.dns.set(
      '_lnk-challenge.contested.example.test',
      'TXT',
      added.map((d) => d.records[0].value),
    )
    env.dns.set('contested.example.test', 'CNAME', [CNAME_TARGET])
    const results = await Promise.all(added.map((d, i) => env.verify(d.id, keys[i])))
    const states = await Promise.all(results.map(async (r) => (await body(r)).data))
    expect(states.map((s) => s.verificationStatus).sort()).toEqual(['failed', 'verified'])
    const loser = states.find((s) => s.verificationStatus === 'failed')
    expect(loser.failureReason).toBe('Another workspace verified contested.example.test first')
    expect(loser.nextCheckAt).toBeNull()
    const winner = states.find((s) => s.verificationStatus === 'verified')
    expect(env.rt.modules.domains.served.get('contested.example.test')?.id).toBe(winner.id)

    const third = await env.api('/domains', { method: 'POST', json: { domain: 'contested.example.test' } })
    expect({ status: third.status, code: (await body(third)).error.code }).toEqual({ status: 409, code: 'domain_taken' })
  })

  test('a rival still pending fails when the other verifies; it cannot win later either', async () => {
    const [a, b] = await Promise.all([bootstrapAccount(env.rt), bootstrapAccount(env.rt)])
    const first = await env.add('second-race.example.test', {}, a.apiKey.key)
    const second = await env.add('second-race.example.test', {}, b.apiKey.key)
    env.dns.set('_lnk-challenge.second-race.example.test', 'TXT', [first.records[0].value])
    env.dns.set('second-race.example.test', 'CNAME', [CNAME_TARGET])
    expect((await body(await env.verify(first.id, a.apiKey.key))).data.verificationStatus).toBe('verified')
    const lost = (await body(await env.api(`/domains/${second.id}`, { key: b.apiKey.key }))).data
    expect(lost).toMatchObject({ verificationStatus: 'failed', failureReason: 'Another workspace verified second-race.example.test first' })
    env.dns.set('_lnk-challenge.second-race.example.test', 'TXT', [first.records[0].value, second.records[0].value])
    env.clock.advance(10_000)
    expect((await body(await env.verify(second.id, b.apiKey.key))).data.verificationStatus).toBe('failed')
    expect(env.rt.modules.domains.served.get('second-race.example.test')?.id).toBe(first.id)
  })
})

describe('changes made by another process', () => {
  test('a domain verified by another runtime on the same database (the admin CLI) is served after a refresh', async () => {
    const { openRuntime } = await import('../../src/runtime')
    const { verifyDomain } = await import('../../src/modules/domains/service')
    const { silentLogger } = await import('../../src/platform/log')
    const d = await env.add('from-cli.example.test')
    env.point(d)
    const other = await openRuntime({ ...env.config }, { clock: env.clock, log: silentLogger })
    try {
      const row = (await other.modules.domains.ctx.domains.findAnyById(d.id))!
      const workspace = { id: row.workspaceId } as Parameters<typeof verifyDomain>[1]['workspace']
      await verifyDomain(other.modules.domains.ctx, { workspace, mode: 'live', key: { scopeFilters: null } }, d.id)
    } finally {
      await other.close()
    }
    // SQLite tells no other process; on PostgreSQL the other runtime's notice may have refreshed the set already.
    if (!ON_PG) expect(env.rt.modules.domains.served.get(d.domain)).toBeUndefined()
    await env.rt.modules.domains.refresh()
    expect(env.rt.modules.domains.served.get(d.domain)?.id).toBe(d.id)
    // Deleted elsewhere, raw so no one is told: gone from this process's set at the next refresh.
    await rawRows(env, 'DELETE FROM domains WHERE id = ?', d.id)
    await env.rt.modules.domains.refresh()
    expect(env.rt.modules.domains.served.get(d.domain)).toBeUndefined()
  })
})
