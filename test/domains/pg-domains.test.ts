// Custom domains on PostgreSQL with two nodes on one database: a domain verified on node A (by the API, or
// by a scheduled check run as a job) is served on node B within 1 s, and a link on it redirects there;
// changes and deletes travel both ways; after 'caches.reset' a node reads the set again; a node that starts
// later serves the verified domains before its first request. DNS is a loopback server. The nodes' timers
// are not started (tests never call start()): only the bus notices can move node B's served set.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { body, bootstrapAccount, setupPg, type PgTestEnv } from '../helpers'
import { UA } from '../redirect/_redirect'
import { startDnsServer, type DnsServer } from './_dns'
import { domainsConfig, pointRecords } from './_domains'

let dns: DnsServer
let a: PgTestEnv
let b: PgTestEnv
let key: string
const clock = new ManualClock(Date.UTC(2026, 10, 2, 9))

beforeAll(async () => {
  dns = await startDnsServer()
  a = await setupPg({ clock, env: domainsConfig(dns) })
  b = await setupPg({ clock, env: domainsConfig(dns), database: a.database })
  key = (await bootstrapAccount(a.rt)).apiKey.key
}, 30_000)
afterAll(async () => {
  await b?.cleanup()
  await a?.cleanup()
  await dns?.close()
})

async function api(node: PgTestEnv, path: string, init: RequestInit & { json?: unknown } = {}) {
  const res = await node.request(`/v1${path}`, { key, ...init })
  return { status: res.status, data: (await body(res)).data }
}

async function addVerified(domain: string) {
  const added = await api(a, '/domains', { method: 'POST', json: { domain } })
  expect(added.status).toBe(201)
  pointRecords(dns, added.data)
  const verified = await api(a, `/domains/${added.data.id}/verify`, { method: 'POST' })
  expect(verified.data).toMatchObject({ verificationStatus: 'verified', served: true })
  return verified.data
}

/** Waits up to 1 s (the bound for a write on one node to be served by another) for `done`. */
async function within1s(what: string, done: () => boolean) {
  const deadline = performance.now() + 1000
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`not within 1 s: ${what}`)
    await Bun.sleep(5)
  }
}

const served = (node: PgTestEnv, domain: string) => node.rt.modules.domains.served.get(domain)

function onHost(node: PgTestEnv, host: string, path: string) {
  return node.app.handle(new Request(`http://${host}${path}`, { redirect: 'manual', headers: { 'user-agent': UA.chrome } }))
}

describe('two nodes on one database', () => {
  test('verified on node A: served on node B within 1 s, and a link made on A redirects on B', async () => {
    const d = await addVerified('go.pg-customer.test')
    expect(served(a, d.domain)?.id).toBe(d.id)
    await within1s('node B serves the domain', () => served(b, d.domain)?.id === d.id)
    expect(served(b, d.domain)).toMatchObject({ workspaceId: served(a, d.domain)!.workspaceId, acceptsNewLinks: true })

    const link = await api(a, '/links', { method: 'POST', json: { destinationUrl: 'https://example.com/on-custom', domain: d.domain } })
    expect(link.status).toBe(201)
    const res = await onHost(b, d.domain, `/${link.data.slug}`)
    expect({ status: res.status, location: res.headers.get('location') }).toEqual({ status: 302, location: 'https://example.com/on-custom' })
  })

  test('changed on node B: node A serves the change within 1 s; deleted on A: B stops serving it within 1 s', async () => {
    const d = await addVerified('changes.pg-customer.test')
    await within1s('node B serves the domain', () => served(b, d.domain) !== undefined)
    const patched = await api(b, `/domains/${d.id}`, { method: 'PATCH', json: { notFoundUrl: 'https://changes.example/missing' } })
    expect(patched.status).toBe(200)
    await within1s('node A has the new fallback', () => served(a, d.domain)?.notFoundUrl === 'https://changes.example/missing')
    const missing = await onHost(a, d.domain, '/no-such-slug')
    expect({ status: missing.status, location: missing.headers.get('location') }).toEqual({ status: 302, location: 'https://changes.example/missing' })

    expect((await api(a, `/domains/${d.id}`, { method: 'DELETE' })).status).toBe(200)
    expect(served(a, d.domain)).toBeUndefined()
    await within1s('node B stops serving the domain', () => served(b, d.domain) === undefined)
  })

  test('a scheduled check runs as a job on node A; node B serves the domain it verified', async () => {
    const added = await api(a, '/domains', { method: 'POST', json: { domain: 'scheduled.pg-customer.test' } })
    pointRecords(dns, added.data)
    clock.set(Date.parse(added.data.nextCheckAt))
    expect(await a.rt.worker.runDue()).toBeGreaterThanOrEqual(1)
    expect((await api(a, `/domains/${added.data.id}`)).data).toMatchObject({ verificationStatus: 'verified', dnsStatus: 'ok', served: true })
    await within1s('node B serves the domain', () => served(b, added.data.domain)?.id === added.data.id)
  })

  test("'caches.reset' (notices may have been lost): the node reads the served set again", async () => {
    const d = await addVerified('reset.pg-customer.test')
    await within1s('node B serves the domain', () => served(b, d.domain) !== undefined)
    // A change no notice announced: written behind both nodes' backs.
    const store = a.rt.store
    if (store.engine !== 'pg') throw new Error('expected PostgreSQL')
    await store.sql`UPDATE domains SET not_found_url = 'https://reset.example/lost' WHERE id = ${d.id}`
    expect(served(b, d.domain)?.notFoundUrl).toBeNull()
    b.rt.bus.emitLocal('caches.reset', {})
    await within1s('node B read the set again', () => served(b, d.domain)?.notFoundUrl === 'https://reset.example/lost')
  })

  test('a node that starts later serves the verified domains before its first request', async () => {
    const d = await addVerified('early.pg-customer.test')
    const c = await setupPg({ clock, env: domainsConfig(dns), database: a.database })
    try {
      expect(served(c, d.domain)?.id).toBe(d.id)
      expect(served(c, 'go.pg-customer.test')).toBeDefined()
      expect(served(c, 'changes.pg-customer.test')).toBeUndefined()
    } finally {
      await c.cleanup()
    }
  })
})
