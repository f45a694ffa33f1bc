// Routing rules and variants as pure functions (contract 7.1): every field and operator against facts of a
// visit, the order of evaluation, the facts asked for only when a rule needs them, and the variant split's
// shares, stickiness and movement, measured over 10,000 distinct visitors hashed with the real keyed hash.
// The facts themselves: visit-facts.test.ts.
import { describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import type { RoutingCondition, RoutingRule, Variant } from '../../src/db/json-shapes'
import { visitorHash } from '../../src/modules/clicks/visitor'
import { explain, pickVariant, route, type RoutedLink, type VisitFacts } from '../../src/modules/redirect/routing'
import { UA } from './_redirect'

const AT = Date.UTC(2026, 5, 1, 12, 0, 0)

interface FactValues {
  country: string | null
  continent: string | null
  city: string | null
  device: 'desktop' | 'mobile' | 'tablet' | null
  os: 'ios' | 'android' | 'windows' | 'macos' | 'linux' | 'chromeos' | 'other' | null
  browser: 'chrome' | 'safari' | 'firefox' | 'edge' | 'opera' | 'samsung' | 'other' | null
  language: string | null
  locale: string | null
  referrer: string | null
  ip: string | null
  time: number
  query: Record<string, string>
  trigger: 'link' | 'qr'
  visitor: string
}

const GERMAN_IPHONE: FactValues = {
  country: 'DE',
  continent: 'EU',
  city: 'Berlin',
  device: 'mobile',
  os: 'ios',
  browser: 'safari',
  language: 'de',
  locale: 'de-at',
  referrer: 'news.example.org',
  ip: '198.51.100.7',
  time: AT,
  query: { ref: 'newsletter', empty: '' },
  trigger: 'link',
  visitor: 'v-1',
}

/** Facts with fixed values that count every getter called, by field. */
function countingFacts(values: Partial<FactValues> = {}) {
  const v = { ...GERMAN_IPHONE, ...values }
  const calls: Record<string, number> = {}
  const hit = <T>(name: string, value: T) => {
    calls[name] = (calls[name] ?? 0) + 1
    return value
  }
  const facts: VisitFacts = {
    country: () => hit('country', v.country),
    continent: () => hit('continent', v.continent),
    city: () => hit('city', v.city),
    device: () => hit('device', v.device),
    os: () => hit('os', v.os),
    browser: () => hit('browser', v.browser),
    language: () => hit('language', v.language),
    locale: () => hit('locale', v.locale),
    referrer: () => hit('referrer', v.referrer),
    ip: () => hit('ip', v.ip),
    time: () => hit('time', v.time),
    query: (name) => hit('query', Object.hasOwn(v.query, name) ? v.query[name]! : null),
    trigger: () => hit('trigger', v.trigger),
    visitor: () => hit('visitor', v.visitor),
  }
  return { facts, calls }
}

const rule = (id: string, conditions: RoutingCondition[], match: 'all' | 'any' = 'all'): RoutingRule => ({
  id,
  name: null,
  match,
  conditions,
  destinationUrl: `https://example.com/${id}`,
})
const linkWith = (rules: RoutingRule[] | null, variants: Variant[] | null = null): RoutedLink => ({
  destinationUrl: 'https://example.com/default',
  routingRules: rules,
  variants,
})
/** Whether one condition holds for the facts. */
const holds = (c: RoutingCondition, values: Partial<FactValues> = {}) => route(linkWith([rule('rr_1', [c])]), countingFacts(values).facts).ruleId === 'rr_1'

describe('conditions: every field and operator', () => {
  const cases: [RoutingCondition, boolean, Partial<FactValues>?][] = [
    [{ field: 'country', op: 'eq', value: 'DE' }, true],
    [{ field: 'country', op: 'eq', value: 'de' }, false],
    [{ field: 'country', op: 'neq', value: 'US' }, true],
    [{ field: 'country', op: 'neq', value: 'US' }, false, { country: null }],
    [{ field: 'country', op: 'in', value: ['AT', 'CH', 'DE'] }, true],
    [{ field: 'country', op: 'nin', value: ['AT', 'CH', 'DE'] }, false],
    [{ field: 'country', op: 'nin', value: ['US'] }, false, { country: null }],
    [{ field: 'country', op: 'exists' }, true],
    [{ field: 'country', op: 'exists' }, false, { country: null }],
    [{ field: 'country', op: 'not_exists' }, true, { country: null }],
    [{ field: 'continent', op: 'eq', value: 'EU' }, true],
    [{ field: 'continent', op: 'in', value: ['NA', 'SA'] }, false],
    [{ field: 'city', op: 'eq', value: 'Berlin' }, true],
    [{ field: 'city', op: 'starts_with', value: 'Ber' }, true],
    [{ field: 'city', op: 'contains', value: 'erl' }, true],
    [{ field: 'city', op: 'not_contains', value: 'erl' }, false],
    [{ field: 'city', op: 'not_contains', value: 'x' }, false, { city: null }],
    [{ field: 'device', op: 'eq', value: 'mobile' }, true],
    [{ field: 'device', op: 'in', value: ['desktop', 'tablet'] }, false],
    [{ field: 'os', op: 'eq', value: 'ios' }, true],
    [{ field: 'os', op: 'neq', value: 'android' }, true],
    [{ field: 'browser', op: 'in', value: ['safari', 'chrome'] }, true],
    [{ field: 'browser', op: 'nin', value: ['safari'] }, false],
    [{ field: 'language', op: 'eq', value: 'de' }, true],
    [{ field: 'language', op: 'eq', value: 'de' }, false, { language: null }],
    [{ field: 'locale', op: 'eq', value: 'de-at' }, true],
    [{ field: 'locale', op: 'starts_with', value: 'de-' }, true],
    [{ field: 'referrer', op: 'eq', value: 'news.example.org' }, true],
    [{ field: 'referrer', op: 'contains', value: 'example' }, true],
    [{ field: 'referrer', op: 'not_exists' }, false],
    [{ field: 'ip', op: 'in', value: ['198.51.100.0/24'] }, true],
    [{ field: 'ip', op: 'in', value: ['198.51.100.8', '2001:db8::/32'] }, false],
    [{ field: 'ip', op: 'in', value: ['2001:db8::/32'] }, true, { ip: '2001:db8::42' }],
    [{ field: 'ip', op: 'in', value: ['198.51.100.0/24'] }, true, { ip: '::ffff:198.51.100.9' }],
    [{ field: 'ip', op: 'nin', value: ['10.0.0.0/8'] }, true],
    [{ field: 'ip', op: 'nin', value: ['198.51.100.7'] }, false],
    [{ field: 'ip', op: 'nin', value: ['10.0.0.0/8'] }, false, { ip: null }],
    [{ field: 'ip', op: 'in', value: ['198.51.100.0/24'] }, false, { ip: null }],
    [{ field: 'time', op: 'gte', value: '2026-06-01T12:00:00Z' }, true],
    [{ field: 'time', op: 'gt', value: '2026-06-01T12:00:00Z' }, false],
    [{ field: 'time', op: 'lt', value: '2026-06-01T14:00:00+02:00' }, false],
    [{ field: 'time', op: 'lte', value: '2026-06-01T14:00:00+02:00' }, true],
    [{ field: 'time', op: 'lt', value: '2026-06-02T00:00:00Z' }, true],
    [{ field: 'query.ref', op: 'eq', value: 'newsletter' }, true],
    [{ field: 'query.ref', op: 'eq', value: 'Newsletter' }, false],
    [{ field: 'query.ref', op: 'in', value: ['ads', 'newsletter'] }, true],
    [{ field: 'query.empty', op: 'exists' }, true],
    [{ field: 'query.empty', op: 'eq', value: '' }, true],
    [{ field: 'query.missing', op: 'not_exists' }, true],
    [{ field: 'query.missing', op: 'neq', value: 'x' }, false],
    [{ field: 'trigger', op: 'eq', value: 'link' }, true],
    [{ field: 'trigger', op: 'eq', value: 'qr' }, true, { trigger: 'qr' }],
    [{ field: 'trigger', op: 'neq', value: 'qr' }, false, { trigger: 'qr' }],
    // A field this version does not know reads as missing.
    [{ field: 'planet', op: 'not_exists' }, true],
    [{ field: 'planet', op: 'neq', value: 'mars' }, false],
  ]
  for (const [c, expected, values] of cases) {
    test(`${c.field} ${c.op} ${JSON.stringify(c.value ?? null)}${values ? ` with ${JSON.stringify(values)}` : ''} → ${expected}`, () => {
      expect(holds(c, values)).toBe(expected)
    })
  }

  test('every condition reads only its own fact', () => {
    const { facts, calls } = countingFacts()
    route(linkWith([rule('rr_1', [{ field: 'query.ref', op: 'eq', value: 'newsletter' }])]), facts)
    expect(calls).toEqual({ query: 1 })
  })
})

describe('order of evaluation', () => {
  const toIos = rule('rr_ios', [{ field: 'os', op: 'eq', value: 'ios' }])
  const toGerman = rule('rr_de', [{ field: 'language', op: 'eq', value: 'de' }])
  const variants: Variant[] = [
    { id: 'var_a', destinationUrl: 'https://example.com/a', weight: 50 },
    { id: 'var_b', destinationUrl: 'https://example.com/b', weight: 50 },
  ]

  test('the first matching rule wins and later rules are not evaluated', () => {
    const { facts, calls } = countingFacts()
    expect(route(linkWith([toIos, toGerman]), facts)).toEqual({ destinationUrl: 'https://example.com/rr_ios', ruleId: 'rr_ios', variantId: null })
    expect(calls).toEqual({ os: 1 })
    expect(route(linkWith([toGerman, toIos]), countingFacts().facts).ruleId).toBe('rr_de')
    expect(route(linkWith([toIos, toGerman]), countingFacts({ os: 'android' }).facts).ruleId).toBe('rr_de')
  })

  test('all needs every condition, any one of them', () => {
    const conditions: RoutingCondition[] = [
      { field: 'country', op: 'eq', value: 'DE' },
      { field: 'device', op: 'eq', value: 'desktop' },
    ]
    expect(route(linkWith([rule('rr_all', conditions, 'all')]), countingFacts().facts).ruleId).toBeNull()
    expect(route(linkWith([rule('rr_all', conditions, 'all')]), countingFacts({ device: 'desktop' }).facts).ruleId).toBe('rr_all')
    expect(route(linkWith([rule('rr_any', conditions, 'any')]), countingFacts().facts).ruleId).toBe('rr_any')
    expect(route(linkWith([rule('rr_any', conditions, 'any')]), countingFacts({ country: 'FR' }).facts).ruleId).toBeNull()
    // `any` stops at the first condition that holds, `all` at the first that fails.
    const anyCalls = countingFacts()
    route(linkWith([rule('rr_any', conditions, 'any')]), anyCalls.facts)
    expect(anyCalls.calls).toEqual({ country: 1 })
    const allCalls = countingFacts({ country: 'FR' })
    route(linkWith([rule('rr_all', conditions, 'all')]), allCalls.facts)
    expect(allCalls.calls).toEqual({ country: 1 })
  })

  test('no rule matching: a variant; no variants: the destination', () => {
    const { facts, calls } = countingFacts({ os: 'android', language: 'fr' })
    const routed = route(linkWith([toIos, toGerman], variants), facts)
    expect(routed.ruleId).toBeNull()
    expect(['var_a', 'var_b']).toContain(routed.variantId!)
    expect(calls.visitor).toBe(1)
    expect(route(linkWith([toIos]), countingFacts({ os: 'android' }).facts)).toEqual({
      destinationUrl: 'https://example.com/default',
      ruleId: null,
      variantId: null,
    })
  })

  test('a matching rule wins over the variants; the visitor is not hashed', () => {
    const { facts, calls } = countingFacts()
    expect(route(linkWith([toIos], variants), facts).ruleId).toBe('rr_ios')
    expect(calls.visitor).toBeUndefined()
  })

  test('a link with neither rules nor variants never touches the facts', () => {
    const { facts, calls } = countingFacts()
    expect(route(linkWith(null, null), facts)).toEqual({ destinationUrl: 'https://example.com/default', ruleId: null, variantId: null })
    expect(explain(linkWith(null, null), facts)).toEqual({ destinationUrl: 'https://example.com/default', ruleId: null, variantId: null, trace: [] })
    expect(calls).toEqual({})
  })

  test('explain: each rule up to the first match, every condition of each', () => {
    const mixed = rule('rr_mixed', [
      { field: 'country', op: 'eq', value: 'DE' },
      { field: 'device', op: 'eq', value: 'desktop' },
      { field: 'language', op: 'eq', value: 'de' },
    ])
    const after = rule('rr_after', [{ field: 'country', op: 'exists' }])
    const result = explain(linkWith([mixed, toGerman, after]), countingFacts().facts)
    expect(result).toEqual({
      destinationUrl: 'https://example.com/rr_de',
      ruleId: 'rr_de',
      variantId: null,
      trace: [
        { ruleId: 'rr_mixed', matched: false, conditions: [true, false, true] },
        { ruleId: 'rr_de', matched: true, conditions: [true] },
      ],
    })
    const none = explain(linkWith([toIos], variants), countingFacts({ os: 'android' }).facts)
    expect(none.trace).toEqual([{ ruleId: 'rr_ios', matched: false, conditions: [false] }])
    expect(none.variantId).toBe(route(linkWith([toIos], variants), countingFacts({ os: 'android' }).facts).variantId)
  })
})

describe('variants: weighted rendezvous hashing', () => {
  const key = randomBytes(32)
  /** 10,000 distinct visitors as the redirect knows them: the keyed hash of address and user agent. */
  const visitors = Array.from({ length: 10_000 }, (_, i) =>
    visitorHash(key, `198.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, i % 3 ? UA.chrome : UA.iphone),
  )
  const make = (weights: number[]): Variant[] => weights.map((weight, i) => ({ id: `var_${i}`, destinationUrl: `https://example.com/${i}`, weight }))
  const shares = (variants: Variant[]) => {
    const counts = new Map<string, number>()
    for (const v of visitors) {
      const id = pickVariant(variants, v).id
      counts.set(id, (counts.get(id) ?? 0) + 1)
    }
    return variants.map((v) => (100 * (counts.get(v.id) ?? 0)) / visitors.length)
  }

  for (const weights of [
    [50, 30, 20],
    [50, 50],
    [90, 10],
    [1, 99],
    [25, 25, 25, 25],
    [10, 20, 30, 40],
    [100, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  ]) {
    test(`weights ${weights.join('/')}: each share within 3 points of weight over sum`, () => {
      const sum = weights.reduce((a, b) => a + b, 0)
      const got = shares(make(weights))
      got.forEach((share, i) => {
        expect(Math.abs(share - (100 * weights[i]!) / sum)).toBeLessThanOrEqual(3)
      })
    })
  }

  test('deterministic: the same visitor gets the same variant, whatever the order of the list', () => {
    const variants = make([50, 30, 20])
    const reversed = [...variants].reverse()
    for (const v of visitors.slice(0, 2_000)) {
      const id = pickVariant(variants, v).id
      expect(pickVariant(variants, v).id).toBe(id)
      expect(pickVariant(reversed, v).id).toBe(id)
      expect(pickVariant(make([50, 30, 20]), v).id).toBe(id)
    }
  })

  test('removing a variant moves only its own visitors; adding one moves visitors only to it', () => {
    const three = make([50, 30, 20])
    const before = visitors.map((v) => pickVariant(three, v).id)
    const withoutMiddle = three.filter((v) => v.id !== 'var_1')
    let moved = 0
    visitors.forEach((v, i) => {
      const after = pickVariant(withoutMiddle, v).id
      if (before[i] !== 'var_1') expect(after).toBe(before[i]!)
      else moved++
    })
    expect(moved).toBeGreaterThan(2_000)
    const four = [...three, { id: 'var_new', destinationUrl: 'https://example.com/new', weight: 25 }]
    let gained = 0
    visitors.forEach((v, i) => {
      const after = pickVariant(four, v).id
      if (after !== before[i]) {
        expect(after).toBe('var_new')
        gained++
      }
    })
    // var_new's share is 25/125: about 2,000 of 10,000 move to it, no one else moves.
    expect(Math.abs(gained - 2_000)).toBeLessThan(300)
  })

  test('changing one weight moves visitors only to or from that variant', () => {
    const before = make([50, 30, 20])
    const after = make([50, 30, 40])
    visitors.forEach((v) => {
      const a = pickVariant(before, v).id
      const b = pickVariant(after, v).id
      if (a !== b) expect(b).toBe('var_2')
    })
  })
})
