// The redirect's link cache filled at start: every link loaded up to the cache's size, visits then answered
// without reading the database, and writes after the fill still seen at once.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { LinksRepo, RedirectReads } from '../../src/modules/links/port'
import { LinkCache } from '../../src/modules/redirect/cache'
import type { TestEnv } from '../helpers'
import { account, counters, nextIp, redirectEnv, UA, visit, type Api } from './_redirect'

let env: TestEnv
let api: Api
const made: { id: string; slug: string; domain: string }[] = []

beforeAll(async () => {
  env = await redirectEnv()
  api = await account(env)
  for (let i = 0; i < 12; i++) made.push(await api.make({ destinationUrl: `https://example.com/fill/${i}` }))
})
afterAll(() => env.cleanup())

/** The links repo and SQLite's synchronous reads, counting the redirect's single-link reads (what a cache miss costs). */
function countingRepo() {
  const { repo, redirectReads: reads } = env.rt.modules.links
  const counted: { misses: number; repo: LinksRepo; reads: RedirectReads | null } = { misses: 0, repo: { ...repo }, reads: reads && { ...reads } }
  // SQLite reads synchronously, PostgreSQL asynchronously: the cache uses the synchronous reads where there are some.
  if (reads && counted.reads) {
    counted.reads.findRedirectSync = (domain, slug) => {
      counted.misses++
      return reads.findRedirectSync(domain, slug)
    }
  } else {
    counted.repo.findRedirect = (domain, slug) => {
      counted.misses++
      return repo.findRedirect(domain, slug)
    }
  }
  return counted
}

test('prefill loads links a page at a time until the cache is full; those visits read nothing more', async () => {
  const counting = countingRepo()
  const cache = new LinkCache(counting.repo, counting.reads, () => [], { pendingClicks: () => 0, pendingAddresses: () => [] }, { max: 5 })
  expect(await cache.prefill(2)).toBe(5)
  expect(await cache.prefill(2)).toBe(0)
  // The five first in id order answer from memory; each of the other seven costs one read.
  const first = new Set(
    [...made]
      .map((l) => l.id)
      .sort()
      .slice(0, 5),
  )
  for (const l of made) {
    const before = counting.misses
    expect((await cache.get(l.domain, l.slug))?.row.id).toBe(l.id)
    expect(counting.misses - before).toBe(first.has(l.id) ? 0 : 1)
  }
})

test('a prefilled link takes the clicks still in the buffer into its count, and a PATCH after the fill is seen at once', async () => {
  const link = made[0]!
  expect((await visit(env, link.slug, { ua: UA.chrome, ip: nextIp() })).status).toBe(302)
  // One click waits in the buffer; the fill must count it, or a clickLimit would admit one too many.
  env.rt.modules.redirect.cache.clear()
  await env.rt.modules.redirect.cache.prefill()
  expect((await env.rt.modules.redirect.cache.get(link.domain, link.slug))?.clicksSoFar).toBe(1)
  expect((await api.patch(link.id, { destinationUrl: 'https://example.com/patched' })).status).toBe(200)
  const res = await visit(env, link.slug, { ua: UA.chrome, ip: nextIp() })
  expect(res.headers.get('location')).toBe('https://example.com/patched')
  await env.rt.modules.clicks.buffer.flush()
  expect(await counters(env, link.id)).toEqual({ total_clicks: 2, unique_clicks: 2 })
})

test('domain.changed on PostgreSQL: until the slugs are read, each of the domain’s links is read again on its first visit; then not again', async () => {
  // A repo as PostgreSQL's reads it (asynchronously), serving whichever destination is current.
  let destination = 'https://example.com/old'
  let reads = 0
  const repo = {
    findRedirect: async (domain: string, slug: string) => {
      reads++
      return { id: `lnk_${slug}`, domain, slug, destinationUrl: destination, totalClicks: 0 }
    },
  } as unknown as LinksRepo
  const cache = new LinkCache(repo, null, async () => [], { pendingClicks: () => 0, pendingAddresses: () => [] })
  const at = async (domain: string, slug: string) => (await cache.get(domain, slug))?.row.destinationUrl
  expect(await at('go.example', 'a')).toBe('https://example.com/old')
  expect(await at('other.example', 'a')).toBe('https://example.com/old')
  // A read under way when the domain changes is not kept either.
  const inFlight = cache.get('go.example', 'b')
  destination = 'https://example.com/new'
  const slugs = Promise.withResolvers<string[]>()
  const dropped = cache.invalidateDomainOnceRead('go.example', slugs.promise)
  expect(await at('go.example', 'a')).toBe('https://example.com/new')
  expect(await inFlight).toBeDefined()
  expect(await at('go.example', 'b')).toBe('https://example.com/new')
  // Another domain's links stay as cached.
  expect(await at('other.example', 'a')).toBe('https://example.com/old')
  const readsBefore = reads
  slugs.resolve(['a', 'b', 'c'])
  await dropped
  // Read since the change: kept.
  expect(await at('go.example', 'a')).toBe('https://example.com/new')
  expect(reads).toBe(readsBefore)
})
