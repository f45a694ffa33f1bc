// The short-link path served from PostgreSQL, through the same entry the server uses: a link made over the API
// is found on a cache miss (the awaited path) and then from memory, a PATCH is served at once, the public
// stats page reads its figures. With two nodes on one database: clickLimit and uniqueIpLimit hold exactly when
// both nodes are hit at once (decided in the database), clicks flushed by both add up exactly, a PATCH on one
// node reaches the other's cache within a second (the notice: the clock stands still), and what a lost notice
// leaves behind is made good by caches.reset and by the TTL.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { body, type PgTestEnv, setupPg, within1s } from '../helpers'
import { account, nextIp, UA, visit, type Api } from './_redirect'

const clock = new ManualClock(Date.UTC(2026, 4, 10, 12))
let a: PgTestEnv
let b: PgTestEnv
let api: Api

beforeAll(async () => {
  const env = { LNK_TRUST_PROXY: '1' }
  a = await setupPg({ clock, env })
  b = await setupPg({ clock, env, database: a.database })
  api = await account(a)
})
afterAll(async () => {
  await b?.cleanup()
  await a?.cleanup()
})

const location = (res: Response) => res.headers.get('location')
const where = async (env: PgTestEnv, slug: string) => location(await visit(env, slug, { ip: nextIp() }))

/** The pool, for changes made behind every node's back: no notice is sent, as when one is lost. */
function pool(env: PgTestEnv) {
  if (env.rt.store.engine !== 'pg') throw new Error('PostgreSQL only')
  return env.rt.store.sql
}

const silently = async (env: PgTestEnv, linkId: string, destinationUrl: string) => {
  await pool(env)`UPDATE links SET destination_url = ${destinationUrl} WHERE id = ${linkId}`
}

let barriers = 0
/**
 * Waits until both nodes have heard every notice sent so far (each node's LISTEN connection hears notices in
 * commit order): a notice sent after them, from no node's name, reaches both. So what a write announced has
 * arrived before a test looks at what a node keeps.
 */
async function delivered() {
  const id = `barrier-${++barriers}`
  const heard = [a, b].map(
    (env) =>
      new Promise<void>((resolve) => {
        const off = env.rt.bus.on('page.changed', (n) => {
          if (n.id !== id) return
          off()
          resolve()
        })
      }),
  )
  await pool(a)`SELECT pg_notify('lnk_bus', ${JSON.stringify(['test', 'page.changed', { id }])})`
  await Promise.all(heard)
}

/** A link made over the API on node A, once both nodes have heard of it. */
async function made(json: Record<string, unknown>) {
  let heard: (slug: string) => void = () => {}
  const slugs: string[] = []
  // Node A relays its notice after the commit, on a connection of its own: B may hear it after a barrier sent meanwhile.
  const off = b.rt.bus.on('link.changed', ({ slug }) => {
    slugs.push(slug)
    heard(slug)
  })
  try {
    const link = await api.make(json)
    await new Promise<void>((resolve) => {
      heard = (slug) => slug === link.slug && resolve()
      if (slugs.includes(link.slug)) resolve()
    })
    await delivered()
    return link
  } finally {
    off()
  }
}

const flushBoth = async () => {
  await a.rt.modules.clicks.buffer.flush()
  await b.rt.modules.clicks.buffer.flush()
}

/** 410 (the used-up page), a redirect's location, or something else. */
const outcome = (res: Response) => (res.status === 410 ? 'gone' : res.status === 302 ? location(res) : `status ${res.status}`)

function tally(outcomes: (string | null)[]) {
  const t: Record<string, number> = {}
  for (const o of outcomes) t[String(o)] = (t[String(o)] ?? 0) + 1
  return t
}

describe('one node', () => {
  test('a link made over the API: the first visit awaits the database, the next is answered from memory', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-first' })
    const request = () => new Request(`http://localhost:8080/${link.slug}`, { headers: { 'user-agent': UA.chrome, 'x-forwarded-for': nextIp() } })
    const miss = a.rt.modules.redirect.handle(request())
    expect(miss).toBeInstanceOf(Promise)
    const first = await miss!
    expect({ status: first.status, location: location(first) }).toEqual({ status: 302, location: 'https://example.com/pg-first' })
    const hit = a.rt.modules.redirect.handle(request())
    expect(hit).toBeInstanceOf(Response)
    expect(location(hit as Response)).toBe('https://example.com/pg-first')
    // An unknown slug is a miss too, and is remembered as one.
    expect((await visit(a, 'no-such-slug-pg')).status).toBe(404)
    expect(a.rt.modules.redirect.handle(new Request('http://localhost:8080/no-such-slug-pg'))).toBeInstanceOf(Response)
  })

  test('concurrent misses of one link share one read', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-shared' })
    const cache = a.rt.modules.redirect.cache
    const [x, y] = [cache.get('localhost:8080', link.slug), cache.get('localhost:8080', link.slug)]
    expect(x).toBeInstanceOf(Promise)
    expect(y).toBe(x)
    expect((await x)?.row.destinationUrl).toBe('https://example.com/pg-shared')
  })

  test('PATCH, then the next visit goes to the new destination', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-before' })
    expect(await where(a, link.slug)).toBe('https://example.com/pg-before')
    expect((await api.patch(link.id, { destinationUrl: 'https://example.com/pg-after' })).status).toBe(200)
    expect(await where(a, link.slug)).toBe('https://example.com/pg-after')
  })

  test('the public stats page shows the flushed clicks', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-stats', title: 'Stats on PG', publicStatsEnabled: true })
    for (let i = 0; i < 3; i++) expect((await visit(a, link.slug, { ip: nextIp() })).status).toBe(302)
    await a.rt.modules.clicks.buffer.flush()
    const page = await visit(a, `${link.slug}+`)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('Stats on PG')
    expect(/<strong>([\d,]+)<\/strong><span class="muted">total clicks<\/span>/.exec(html)?.[1]).toBe('3')
    expect((await visit(a, `${link.slug}+`)).status).toBe(200)
  })
})

describe('two nodes on one database', () => {
  test('a clickLimit of 10 hit from both nodes at once: exactly 10 redirects, the rest used up; the counters agree', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-limited', clickLimit: 10 })
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => visit(i % 2 ? b : a, link.slug, { ip: nextIp() }).then(outcome)))
    expect(tally(results)).toEqual({ 'https://example.com/pg-limited': 10, gone: 20 })
    // Later visits on either node are refused too.
    expect(outcome(await visit(a, link.slug, { ip: nextIp() }))).toBe('gone')
    expect(outcome(await visit(b, link.slug, { ip: nextIp() }))).toBe('gone')
    await flushBoth()
    const stored = await api.get(link.id)
    expect({ total: stored.totalClicks, unique: stored.uniqueClicks }).toEqual({ total: 10, unique: 10 })
  })

  test('a uniqueIpLimit of 5 hit by 20 addresses on both nodes at once: exactly 5 admitted, and they come back on either node', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-unique', uniqueIpLimit: 5 })
    const ips = Array.from({ length: 20 }, () => nextIp())
    const results = await Promise.all(ips.map((ip, i) => visit(i % 2 ? b : a, link.slug, { ip }).then(outcome)))
    expect(tally(results)).toEqual({ 'https://example.com/pg-unique': 5, gone: 15 })
    const admitted = ips.filter((_, i) => results[i] !== 'gone')
    // Admitted on one node, admitted on the other; a sixth address is refused on both.
    for (const ip of admitted) for (const env of [a, b]) expect(outcome(await visit(env, link.slug, { ip }))).toBe('https://example.com/pg-unique')
    const stranger = nextIp()
    for (const env of [a, b]) expect(outcome(await visit(env, link.slug, { ip: stranger }))).toBe('gone')
    await flushBoth()
    const stored = await api.get(link.id)
    expect({ total: stored.totalClicks, unique: stored.uniqueClicks }).toEqual({ total: 15, unique: 5 })
  })

  test('both limits on one link: the click limit holds while addresses are admitted', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-both', clickLimit: 6, uniqueIpLimit: 3 })
    const ips = [nextIp(), nextIp(), nextIp(), nextIp()]
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => visit(i % 2 ? b : a, link.slug, { ip: ips[i % 4]! }).then(outcome)))
    expect(results.filter((r) => r !== 'gone').length).toBe(6)
    await flushBoth()
    expect((await api.get(link.id)).totalClicks).toBe(6)
  })

  test('200 clicks spread over both nodes, flushed by each: exact totals in the link and in analytics', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-many' })
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => visit(i % 2 ? b : a, link.slug, { ip: nextIp() }).then(outcome)))
    expect(tally(results)).toEqual({ 'https://example.com/pg-many': 200 })
    await flushBoth()
    const stored = await api.get(link.id)
    expect({ total: stored.totalClicks, unique: stored.uniqueClicks }).toEqual({ total: 200, unique: 200 })
    const day = new Date(clock.now()).toISOString().slice(0, 10)
    const res = await a.request(`/v1/analytics/overview?from=${day}&to=${day}&linkId=${link.id}`, { key: api.key })
    expect(res.status).toBe(200)
    expect((await body(res)).data.totals.clicks).toBe(200)
  })

  test('a PATCH on node B is served by node A within a second (the clock stands still: the notice, not the TTL)', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-a' })
    expect(await where(a, link.slug)).toBe('https://example.com/pg-a')
    expect(await where(b, link.slug)).toBe('https://example.com/pg-a')
    expect((await b.request(`/v1/links/${link.id}`, { method: 'PATCH', key: api.key, json: { destinationUrl: 'https://example.com/pg-b' } })).status).toBe(200)
    expect(await within1s(() => where(a, link.slug), 'https://example.com/pg-b')).toBe('https://example.com/pg-b')
  })

  test('a link made on node A after node B remembered its slug as unknown is served by B within a second', async () => {
    const slug = `pg-late-${Date.now().toString(36)}`
    expect((await visit(b, slug)).status).toBe(404)
    await api.make({ destinationUrl: 'https://example.com/pg-late', slug })
    expect(await within1s(() => where(b, slug), 'https://example.com/pg-late')).toBe('https://example.com/pg-late')
  })

  test('caches.reset drops the cached links and stats pages', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-kept', publicStatsEnabled: true, title: 'Kept' })
    expect(await where(a, link.slug)).toBe('https://example.com/pg-kept')
    expect((await visit(a, `${link.slug}+`)).status).toBe(200)
    await silently(a, link.id, 'https://example.com/pg-unheard')
    await pool(a)`UPDATE links SET title = 'Renamed' WHERE id = ${link.id}`
    // Nothing told node A: it serves what it holds.
    expect(await where(a, link.slug)).toBe('https://example.com/pg-kept')
    expect(await (await visit(a, `${link.slug}+`)).text()).toContain('Kept')
    a.rt.bus.emitLocal('caches.reset', {})
    expect(await where(a, link.slug)).toBe('https://example.com/pg-unheard')
    expect(await (await visit(a, `${link.slug}+`)).text()).toContain('Renamed')
  })

  test('a change whose notice was lost is served once the TTL runs out, and not before', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-ttl' })
    expect(await where(b, link.slug)).toBe('https://example.com/pg-ttl')
    await silently(b, link.id, 'https://example.com/pg-ttl-new')
    clock.advance(29_000)
    expect(await where(b, link.slug)).toBe('https://example.com/pg-ttl')
    clock.advance(1_001)
    expect(await where(b, link.slug)).toBe('https://example.com/pg-ttl-new')
  })

  test('domain.changed drops the domain’s cached links (their slugs read from the database)', async () => {
    const link = await made({ destinationUrl: 'https://example.com/pg-domain' })
    expect(await where(a, link.slug)).toBe('https://example.com/pg-domain')
    await silently(a, link.id, 'https://example.com/pg-domain-new')
    a.rt.bus.emitLocal('domain.changed', { domain: link.domain })
    expect(await within1s(() => where(a, link.slug), 'https://example.com/pg-domain-new')).toBe('https://example.com/pg-domain-new')
  })
})
