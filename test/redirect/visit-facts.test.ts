// The facts of a visit that routing rules read: from a live request or a resolve body, through the real
// enricher (the embedded IP database, Bowser), looked up only when asked and then kept, in the contract's
// values (7.1).
import { describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import type { RoutingRule } from '../../src/db/schema'
import { createEnricher } from '../../src/modules/analytics'
import { visitorHash } from '../../src/modules/clicks/visitor'
import { route } from '../../src/modules/redirect/routing'
import { agentFacts, createFactSources, createVisitFacts, firstLanguageTag, queryParam, referrerHost } from '../../src/modules/redirect/visit-facts'
import { UA } from './_redirect'

const AT = Date.UTC(2026, 5, 1, 12, 0, 0)
const queryRule: RoutingRule = {
  id: 'rr_q',
  name: null,
  match: 'all',
  conditions: [{ field: 'query.src', op: 'eq', value: 'qr' }],
  destinationUrl: 'https://example.com/qr',
}

describe('visit facts: looked up lazily, once, in the contract’s values', () => {
  const key = randomBytes(32)
  /** The real enricher behind sources that count the lookups they pass on. */
  function countedSources() {
    const enricher = createEnricher()
    const counts = { place: 0, agent: 0, visitor: 0 }
    const sources = createFactSources(
      {
        place: (ip) => (counts.place++, enricher.place(ip)),
        agent: (ua) => (counts.agent++, enricher.agent(ua)),
      },
      (ip, ua) => (counts.visitor++, visitorHash(key, ip, ua)),
    )
    return { sources, counts }
  }
  const live = (headers: Record<string, string>, ip: string, search = '') =>
    ({ live: { request: new Request('http://go.test/abc', { headers }), ip, now: AT, search } }) as const

  test('a live visit: country and continent by address, agent parsed, language, locale, referrer host, query, trigger', () => {
    const { sources, counts } = countedSources()
    const facts = createVisitFacts(
      live({ 'user-agent': UA.iphone, 'accept-language': 'pt-BR,pt;q=0.9,en;q=0.5', referer: 'https://News.Example.org/a?b=1' }, '8.8.8.8', '?ref=ad&ref=x'),
      sources,
    )
    expect(counts).toEqual({ place: 0, agent: 0, visitor: 0 })
    expect([facts.country(), facts.continent(), facts.city()]).toEqual(['US', 'NA', null])
    expect([facts.device(), facts.os(), facts.browser()]).toEqual(['mobile', 'ios', 'safari'])
    expect([facts.language(), facts.locale(), facts.referrer(), facts.ip(), facts.time()]).toEqual(['pt', 'pt-br', 'news.example.org', '8.8.8.8', AT])
    expect([facts.query('ref'), facts.query('none'), facts.trigger()]).toEqual(['ad', null, 'link'])
    expect(facts.visitor()).toBe(visitorHash(key, '8.8.8.8', UA.iphone))
    facts.country()
    facts.os()
    facts.visitor()
    expect(counts).toEqual({ place: 1, agent: 1, visitor: 1 })
    // A second visit from the same address and agent is answered from the caches.
    const again = createVisitFacts(live({ 'user-agent': UA.iphone }, '8.8.8.8'), sources)
    expect([again.country(), again.os(), again.language(), again.referrer()]).toEqual(['US', 'ios', null, null])
    expect(counts).toEqual({ place: 1, agent: 1, visitor: 1 })
  })

  test('a rule on the query alone looks up nothing else', () => {
    const { sources, counts } = countedSources()
    const facts = createVisitFacts(live({ 'user-agent': UA.android }, '8.8.4.4', '?src=qr'), sources)
    const link = { destinationUrl: 'https://example.com/default', routingRules: [queryRule], variants: null }
    expect(route(link, facts).ruleId).toBe('rr_q')
    expect(counts).toEqual({ place: 0, agent: 0, visitor: 0 })
  })

  test('a described visit: its own country and city win, the address fills the rest; trigger qr only when said', () => {
    const { sources } = countedSources()
    const facts = createVisitFacts(
      { described: { country: 'de', ip: '::ffff:8.8.8.8', userAgent: UA.firefox, trigger: 'qr', query: { a: '1' } }, now: AT },
      sources,
    )
    expect([facts.country(), facts.continent(), facts.ip(), facts.os(), facts.browser(), facts.device()]).toEqual([
      'DE',
      'EU',
      '8.8.8.8',
      'windows',
      'firefox',
      'desktop',
    ])
    expect([facts.trigger(), facts.query('a'), facts.query('toString'), facts.referrer(), facts.language()]).toEqual(['qr', '1', null, null, null])
    const byAddress = createVisitFacts({ described: { ip: '81.2.69.142', referrer: 'T.CO' }, now: AT }, sources)
    expect([byAddress.country(), byAddress.continent(), byAddress.referrer(), byAddress.trigger()]).toEqual(['GB', 'EU', 't.co', 'link'])
    const nothing = createVisitFacts({ described: {}, now: AT }, sources)
    expect([nothing.country(), nothing.continent(), nothing.city(), nothing.ip(), nothing.device(), nothing.os(), nothing.browser()]).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
      null,
    ])
    // The same visitor hash the redirect would record for that address and agent.
    const same = createVisitFacts({ described: { ip: '8.8.8.8', userAgent: UA.chrome }, now: AT }, sources)
    const seen = createVisitFacts(live({ 'user-agent': UA.chrome }, '8.8.8.8'), sources)
    expect(same.visitor()).toBe(seen.visitor())
  })

  test('agents in the contract’s words', () => {
    expect(agentFacts({ device: 'tablet', os: 'iOS', browser: 'Safari' })).toEqual({ device: 'tablet', os: 'ios', browser: 'safari' })
    expect(agentFacts({ device: 'desktop', os: 'Chrome OS', browser: 'Chromium' })).toEqual({ device: 'desktop', os: 'chromeos', browser: 'chrome' })
    expect(agentFacts({ device: 'mobile', os: 'Android', browser: 'Samsung Internet for Android' })).toEqual({
      device: 'mobile',
      os: 'android',
      browser: 'samsung',
    })
    expect(agentFacts({ device: 'desktop', os: 'macOS', browser: 'Microsoft Edge' })).toEqual({ device: 'desktop', os: 'macos', browser: 'edge' })
    expect(agentFacts({ device: 'tv', os: 'Tizen', browser: 'Vivaldi' })).toEqual({ device: null, os: 'other', browser: 'other' })
    expect(agentFacts({ device: 'bot', os: null, browser: null })).toEqual({ device: null, os: null, browser: null })
  })

  test('language tags and referrer hosts', () => {
    expect(firstLanguageTag('de-AT, de;q=0.9')).toBe('de-at')
    expect(firstLanguageTag('en_US')).toBe('en-us')
    expect(firstLanguageTag(' fr ;q=1')).toBe('fr')
    expect(firstLanguageTag('*')).toBeNull()
    expect(firstLanguageTag('')).toBeNull()
    expect(firstLanguageTag('12-34')).toBeNull()
    expect(referrerHost('https://www.Example.com:8443/x')).toBe('www.example.com')
    expect(referrerHost('android-app://com.google.android.gm/')).toBe('com.google.android.gm')
    expect(referrerHost('not a url')).toBeNull()
    expect(referrerHost(null)).toBeNull()
  })
})

describe('query parameters of a live visit', () => {
  test('read as URLSearchParams reads them, first value, escapes decoded', () => {
    for (const search of ['?a=1&b=2&a=3', '?b=&c', '?x%20y=1&x+y=2', '?q=caf%C3%A9+au+lait', '?bad=%E0%A4%A', '', '?', '?=v&&k=v', '?src=a%26b']) {
      const params = new URLSearchParams(search)
      for (const name of ['a', 'b', 'c', 'x y', 'q', 'bad', 'k', 'src', 'missing']) expect(queryParam(search, name)).toBe(params.get(name))
    }
  })
})
