// The password throttle and captcha single use on PostgreSQL with two nodes on one database (issue 18): each
// node posts gate forms through its own gate-post handler, built as the redirect handler builds it with
// gateLimitsFor(the node's store), so nothing but the database is shared. Failures spread over both nodes
// block the client on both after 5; a captcha solution accepted on node A is refused on node B, also when
// both receive it at once. Links are created through the API; each node reads them from the database.
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import type { RedirectLink } from '../../src/modules/links/port'
import { createGatePost } from '../../src/modules/redirect/gate-post'
import { Captcha, gateLimitsFor } from '../../src/modules/redirect/gates'
import { setupPg, type PgTestEnv } from '../helpers'
import { account, challengeOf, solve, type Api } from './_redirect'

const clock = new ManualClock(Date.UTC(2026, 2, 3, 10))
let a: PgTestEnv
let b: PgTestEnv
let api: Api

beforeAll(async () => {
  a = await setupPg({ clock, env: { LNK_TRUST_PROXY: '1' } })
  b = await setupPg({ clock, env: { LNK_TRUST_PROXY: '1' }, database: a.database })
  api = await account(a as Parameters<typeof account>[0])
}, 30_000)
afterAll(async () => {
  await b?.cleanup()
  await a?.cleanup()
})

/** A node's gate-post handler, built from its own store, as the redirect handler builds it. */
function gatesOf(node: PgTestEnv) {
  const cookieKey = node.rt.modules.redirect.cookieKey
  const limits = gateLimitsFor(node.rt.store)
  const captcha = new Captcha(createHmac('sha256', cookieKey).update('altcha').digest('base64url'), limits.spent)
  const keyed = (value: string) => createHmac('sha256', 'visitor-key').update(value).digest('base64url').slice(0, 32)
  const post = createGatePost({ cookieKey, secure: false, captcha, keyed, throttle: limits.throttle })
  return {
    captcha,
    async send(link: RedirectLink, form: Record<string, string>, ip = '203.0.113.9') {
      const url = new URL(`http://localhost:8080/${link.slug}`)
      const request = new Request(url.href, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      })
      const res = await post(link, request, url, ip, clock.now())
      return { status: res.status, retryAfter: res.headers.get('retry-after'), cookie: res.headers.get('set-cookie') !== null }
    },
  }
}

async function linkOn(node: PgTestEnv, slug: string): Promise<RedirectLink> {
  const link = await node.rt.modules.links.repo.findRedirect('localhost:8080', slug)
  if (!link) throw new Error(`no link ${slug}`)
  return link
}

describe('password throttle across nodes', () => {
  test('5 wrong passwords spread over both nodes block the client on both; another client may still try', async () => {
    const made = await api.make({ slug: 'pg-pw', password: 'correct horse' })
    const [onA, onB] = [gatesOf(a), gatesOf(b)]
    const [linkA, linkB] = [await linkOn(a, made.slug), await linkOn(b, made.slug)]
    const tries = []
    for (let i = 0; i < 5; i++)
      tries.push(
        (await (i % 2 === 0 ? onA.send(linkA, { gate: 'password', password: 'wrong' }) : onB.send(linkB, { gate: 'password', password: 'wrong' }))).status,
      )
    // A wrong password gets the page again (401); the fifth failure fills the window, so its answer is already the throttled page.
    expect(tries).toEqual([401, 401, 401, 401, 429])
    // Blocked on both nodes, even with the right password, until the 15 minutes end.
    for (const [gates, link] of [
      [onB, linkB],
      [onA, linkA],
    ] as const) {
      expect(await gates.send(link, { gate: 'password', password: 'correct horse' })).toEqual({ status: 429, retryAfter: String(15 * 60), cookie: false })
    }
    expect((await onB.send(linkB, { gate: 'password', password: 'correct horse' }, '198.51.100.7')).status).toBe(303)
    clock.advance(15 * 60_000)
    expect(await onB.send(linkB, { gate: 'password', password: 'correct horse' })).toEqual({ status: 303, retryAfter: null, cookie: true })
  })

  test('a right password on one node forgets the failures counted on the other', async () => {
    const made = await api.make({ slug: 'pg-pw-reset', password: 'open sesame' })
    const [onA, onB] = [gatesOf(a), gatesOf(b)]
    const [linkA, linkB] = [await linkOn(a, made.slug), await linkOn(b, made.slug)]
    for (let i = 0; i < 4; i++) expect((await onA.send(linkA, { gate: 'password', password: 'nope' })).status).toBe(401)
    expect((await onB.send(linkB, { gate: 'password', password: 'open sesame' })).status).toBe(303)
    for (let i = 0; i < 4; i++) expect((await onA.send(linkA, { gate: 'password', password: 'nope' })).status).toBe(401)
    expect((await onA.send(linkA, { gate: 'password', password: 'nope' })).status).toBe(429)
  })
})

describe('captcha single use across nodes', () => {
  test('a solution accepted on node A is refused on node B', async () => {
    const made = await api.make({ slug: 'pg-cap', captchaEnabled: true })
    const [onA, onB] = [gatesOf(a), gatesOf(b)]
    const [linkA, linkB] = [await linkOn(a, made.slug), await linkOn(b, made.slug)]
    // Node B issued the challenge (both sign with the same key); the solution works once, wherever it lands.
    const payload = solve(challengeOf(`const c=${JSON.stringify(await onB.captcha.challenge(clock.now()))};`))
    expect(await onA.send(linkA, { gate: 'captcha', altcha: payload })).toEqual({ status: 303, retryAfter: null, cookie: true })
    expect(await onB.send(linkB, { gate: 'captcha', altcha: payload })).toEqual({ status: 403, retryAfter: null, cookie: false })
    expect(await onA.send(linkA, { gate: 'captcha', altcha: payload })).toEqual({ status: 403, retryAfter: null, cookie: false })
  })

  test('one solution sent to both nodes at once passes exactly once', async () => {
    const made = await api.make({ slug: 'pg-cap-race', captchaEnabled: true })
    const [onA, onB] = [gatesOf(a), gatesOf(b)]
    const [linkA, linkB] = [await linkOn(a, made.slug), await linkOn(b, made.slug)]
    const payload = solve(challengeOf(`const c=${JSON.stringify(await onA.captcha.challenge(clock.now()))};`))
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        i % 2 === 0 ? onA.send(linkA, { gate: 'captcha', altcha: payload }) : onB.send(linkB, { gate: 'captcha', altcha: payload }),
      ),
    )
    expect(results.filter((r) => r.status === 303).length).toBe(1)
    expect(results.filter((r) => r.status === 403).length).toBe(9)
  })
})
