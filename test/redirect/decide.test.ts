// decide() on its own: the contract's order of checks (section 4) as a pure function of a link and the
// facts of a visit, without HTTP, cache or clock.
import { describe, expect, test } from 'bun:test'
import type { LinkRow } from '../../src/modules/links/port'
import { decide, decideRouted, type Visit } from '../../src/modules/redirect/decide'

const NOW = Date.UTC(2026, 4, 10, 12, 0, 0)

const link = (o: Partial<LinkRow> = {}): LinkRow => ({
  id: 'lnk_1',
  workspaceId: 'ws_1',
  domain: 'localhost:8080',
  slug: 'abc',
  destinationUrl: 'https://www.youtube.com/watch?v=1',
  title: null,
  description: null,
  tags: [],
  folderId: null,
  campaignId: null,
  redirectStatus: 302,
  fallbackUrl: null,
  passwordHash: null,
  expiresAt: null,
  clickLimit: null,
  uniqueIpLimit: null,
  publicStatsEnabled: false,
  utmSource: null,
  utmMedium: null,
  utmCampaign: null,
  utmTerm: null,
  utmContent: null,
  ogTitle: null,
  ogDescription: null,
  ogImageUrl: null,
  twitterCard: null,
  deepLinkEnabled: false,
  captchaEnabled: false,
  consentRequired: false,
  conversionTracking: false,
  bridgePageId: null,
  routingRules: null,
  variants: null,
  isActive: true,
  isArchived: false,
  isTest: false,
  totalClicks: 0,
  uniqueClicks: 0,
  lastClickedAt: null,
  externalId: null,
  createdByKeyId: null,
  searchText: '',
  createdAt: NOW,
  updatedAt: NOW,
  ...o,
})

const visit = (o: Partial<Visit> = {}): Visit => ({
  method: 'GET',
  statsPage: false,
  now: NOW,
  clicksSoFar: 0,
  addressesAdmitted: null,
  addressKnown: false,
  passedPassword: false,
  passedCaptcha: false,
  passedConsent: false,
  bot: false,
  socialCrawler: false,
  platform: null,
  ...o,
})

/** Every switch a link may have on at once: each check must still come in its turn. */
const everything = link({
  isTest: true,
  expiresAt: NOW,
  clickLimit: 1,
  uniqueIpLimit: 1,
  passwordHash: 'hash',
  captchaEnabled: true,
  consentRequired: true,
  deepLinkEnabled: true,
})

describe('the order of checks', () => {
  test(
    'unknown/inactive, stats page, test link, expired, click limit, unique-IP limit, gate post, password, captcha, consent, crawler preview, deep ' +
      'link, redirect: each wins over every later one',
    () => {
      const v = visit({ clicksSoFar: 1, addressesAdmitted: 1, socialCrawler: true, platform: 'ios' })
      expect(decide(null, v).kind).toBe('notFound')
      expect(decide({ ...everything, isActive: false }, v).kind).toBe('notFound')
      let l = everything
      expect(decide(l, v).kind).toBe('sandbox')
      l = { ...l, isTest: false }
      expect(decide(l, v)).toEqual({ kind: 'gone', reason: 'expired' })
      l = { ...l, expiresAt: NOW + 1 }
      expect(decide(l, v)).toEqual({ kind: 'gone', reason: 'clickLimit' })
      l = { ...l, clickLimit: 2 }
      expect(decide(l, v)).toEqual({ kind: 'gone', reason: 'uniqueIpLimit' })
      expect(decide(l, { ...v, addressKnown: true }).kind).toBe('password')
      l = { ...l, uniqueIpLimit: 2 }
      expect(decide(l, { ...v, method: 'POST' }).kind).toBe('gatePost')
      expect(decide(l, v).kind).toBe('password')
      expect(decide(l, { ...v, passedPassword: true }).kind).toBe('captcha')
      expect(decide(l, { ...v, passedPassword: true, passedCaptcha: true }).kind).toBe('consent')
      const passed = { ...v, passedPassword: true, passedCaptcha: true, passedConsent: true }
      expect(decide(l, passed)).toEqual({ kind: 'preview', count: 'bot' })
      expect(decide(l, { ...passed, socialCrawler: false })).toMatchObject({ kind: 'deepLink', count: 'click', platform: 'ios', app: { name: 'YouTube' } })
      expect(decide(l, { ...passed, socialCrawler: false, platform: null })).toEqual({ kind: 'redirect', count: 'click', cacheable: false })
    },
  )

  test('a limit reached sends to the fallback when the link has one', () => {
    expect(decide(link({ expiresAt: NOW, fallbackUrl: 'https://example.com/after' }), visit()).kind).toBe('fallback')
    expect(decide(link({ clickLimit: 3, fallbackUrl: 'https://example.com/after' }), visit({ clicksSoFar: 3 })).kind).toBe('fallback')
    expect(decide(link({ clickLimit: 3 }), visit({ clicksSoFar: 2 })).kind).toBe('redirect')
  })

  test('without a known address, the unique-IP limit is not checked', () => {
    expect(decide(link({ uniqueIpLimit: 1 }), visit({ addressesAdmitted: null })).kind).toBe('redirect')
    expect(decide(link({ uniqueIpLimit: 1 }), visit({ addressesAdmitted: 0 })).kind).toBe('redirect')
  })

  test('the stats page: only with publicStatsEnabled, never for test links or a POST', () => {
    expect(decide(link({ publicStatsEnabled: true }), visit({ statsPage: true })).kind).toBe('statsPage')
    expect(decide(link(), visit({ statsPage: true })).kind).toBe('notFound')
    expect(decide(link({ publicStatsEnabled: true, isTest: true }), visit({ statsPage: true })).kind).toBe('notFound')
    expect(decide(link({ publicStatsEnabled: true }), visit({ statsPage: true, method: 'POST' })).kind).toBe('notFound')
  })
})

describe('what a served visit counts', () => {
  test("a person's GET is a click, a bot's GET a bot hit, HEAD nothing", () => {
    expect(decide(link(), visit())).toMatchObject({ kind: 'redirect', count: 'click' })
    expect(decide(link(), visit({ bot: true }))).toMatchObject({ kind: 'redirect', count: 'bot' })
    expect(decide(link(), visit({ method: 'HEAD' }))).toMatchObject({ kind: 'redirect', count: 'none' })
    expect(decide(link(), visit({ method: 'HEAD', socialCrawler: true }))).toEqual({ kind: 'preview', count: 'none' })
  })

  test('only permanent redirects without per-visit checks are cacheable', () => {
    expect(decide(link({ redirectStatus: 301 }), visit())).toMatchObject({ cacheable: true })
    expect(decide(link({ redirectStatus: 308 }), visit())).toMatchObject({ cacheable: true })
    expect(decide(link({ redirectStatus: 302 }), visit())).toMatchObject({ cacheable: false })
    expect(decide(link({ redirectStatus: 301, conversionTracking: true }), visit())).toMatchObject({ cacheable: false })
    expect(decide(link({ redirectStatus: 301, clickLimit: 5 }), visit())).toMatchObject({ cacheable: false })
  })

  test('a deep link needs the switch, a phone and an app for the destination', () => {
    expect(decide(link({ deepLinkEnabled: true }), visit({ platform: 'android' })).kind).toBe('deepLink')
    expect(decide(link({ deepLinkEnabled: true, destinationUrl: 'https://example.com/' }), visit({ platform: 'android' })).kind).toBe('redirect')
    expect(decide(link(), visit({ platform: 'android' })).kind).toBe('redirect')
  })
})

describe('decideRouted(): a link with rules or variants', () => {
  const routed = (o: Partial<LinkRow> = {}) =>
    link({
      destinationUrl: 'https://example.com/own',
      variants: [
        { id: 'var_a', destinationUrl: 'https://www.youtube.com/watch?v=2', weight: 1 },
        { id: 'var_b', destinationUrl: 'https://example.org/b', weight: 1 },
      ],
      ...o,
    })
  /** A choice that counts how often it was asked for. */
  function chooser(destinationUrl: string) {
    const asked = { n: 0 }
    const choose = () => {
      asked.n++
      return { destinationUrl, ruleId: null, variantId: 'var_a' }
    }
    return { asked, choose }
  }

  test('gates, limits, a gate post-back and crawlers answer without a choice being made', () => {
    for (const [l, v] of [
      [routed({ isActive: false }), visit()],
      [routed({ passwordHash: 'hash' }), visit()],
      [routed({ captchaEnabled: true }), visit()],
      [routed({ expiresAt: NOW }), visit()],
      [routed({ clickLimit: 1 }), visit({ clicksSoFar: 1 })],
      [routed(), visit({ method: 'POST' })],
      [routed(), visit({ socialCrawler: true })],
      [routed({ publicStatsEnabled: true }), visit({ statsPage: true })],
    ] as const) {
      const { asked, choose } = chooser('https://example.org/b')
      const r = decideRouted(l, v, choose)
      expect(r.outcome).toEqual(decide(l, v))
      expect([r.route, asked.n]).toEqual([null, 0])
    }
  })

  test('a served visit is chosen once; the deep link follows the chosen destination, not the link’s own', () => {
    const yt = chooser('https://www.youtube.com/watch?v=2')
    const app = decideRouted(routed({ deepLinkEnabled: true }), visit({ platform: 'ios' }), yt.choose)
    expect(app.outcome).toMatchObject({ kind: 'deepLink', app: { name: 'YouTube' }, platform: 'ios' })
    expect([app.route?.variantId, yt.asked.n]).toEqual(['var_a', 1])
    const web = chooser('https://example.org/b')
    expect(decideRouted(routed({ deepLinkEnabled: true }), visit({ platform: 'ios' }), web.choose).outcome).toEqual({
      kind: 'redirect',
      count: 'click',
      cacheable: false,
    })
    expect(web.asked.n).toBe(1)
  })

  test('the sandbox and the consent page are told the choice; a routed redirect is never cacheable', () => {
    for (const l of [routed({ isTest: true }), routed({ consentRequired: true })]) {
      const { asked, choose } = chooser('https://example.org/b')
      const r = decideRouted(l, visit(), choose)
      expect([r.outcome.kind, r.route?.destinationUrl, asked.n]).toEqual([l.isTest ? 'sandbox' : 'consent', 'https://example.org/b', 1])
    }
    const ruled = link({ redirectStatus: 301, routingRules: [] })
    expect(decide(ruled, visit())).toMatchObject({ cacheable: false })
    expect(decideRouted(routed({ redirectStatus: 308 }), visit(), chooser('https://example.org/b').choose).outcome).toMatchObject({ cacheable: false })
  })
})
