import { describe, expect, test } from 'bun:test'
import { EVENT_CATALOGUE } from '../../../src/modules/webhooks/model'
import {
  eventMatches,
  matchesFilters,
  validateEventPatterns,
  validateFilters,
  type FilterRule,
  type WebhookFilters,
} from '../../../src/modules/webhooks/filters'

const envelope = {
  id: 'evt_1',
  type: 'link.clicked',
  timestamp: '2026-03-01T12:00:00.000Z',
  mode: 'live',
  data: {
    click: { id: 'clk_1', unique: true, referrer: null, userAgent: 'Mozilla/5.0', timestamp: '2026-03-01T12:00:00.000Z' },
    link: { id: 'l1', domain: 'go.example.com', slug: 'Promo', tags: ['sale', 'spring', 3], clicks: 42, meta: { a: 1, b: [1, 2] } },
  },
}

const one = (rule: FilterRule) => matchesFilters({ match: 'all', events: null, rules: [rule] }, envelope)

describe('matchesFilters: every operator', () => {
  const cases: [FilterRule, boolean][] = [
    // eq / neq: structural, case-sensitive; null is a value
    [{ field: 'data.link.domain', op: 'eq', value: 'go.example.com' }, true],
    [{ field: 'data.link.domain', op: 'eq', value: 'GO.example.com' }, false],
    [{ field: 'data.link.clicks', op: 'eq', value: 42 }, true],
    [{ field: 'data.link.clicks', op: 'eq', value: '42' }, false],
    [{ field: 'data.link.meta', op: 'eq', value: { b: [1, 2], a: 1 } }, true],
    [{ field: 'data.click.referrer', op: 'eq', value: null }, true],
    [{ field: 'data.link.domain', op: 'neq', value: 'other.example' }, true],
    [{ field: 'data.link.domain', op: 'neq', value: 'go.example.com' }, false],
    [{ field: 'data.click.referrer', op: 'neq', value: 'x' }, true],
    [{ field: 'mode', op: 'eq', value: 'live' }, true],
    [{ field: 'type', op: 'eq', value: 'link.clicked' }, true],
    // in / nin
    [{ field: 'data.link.slug', op: 'in', value: ['Promo', 'other'] }, true],
    [{ field: 'data.link.slug', op: 'in', value: ['promo'] }, false],
    [{ field: 'data.click.referrer', op: 'in', value: [null] }, true],
    [{ field: 'data.link.tags', op: 'in', value: ['sale'] }, false], // an array is not a scalar
    [{ field: 'data.link.slug', op: 'nin', value: ['a', 'b'] }, true],
    [{ field: 'data.link.slug', op: 'nin', value: ['Promo'] }, false],
    // contains / not_contains: substring of a string, element of an array
    [{ field: 'data.click.userAgent', op: 'contains', value: 'zilla' }, true],
    [{ field: 'data.click.userAgent', op: 'contains', value: 'ZILLA' }, false],
    [{ field: 'data.link.tags', op: 'contains', value: 'sale' }, true],
    [{ field: 'data.link.tags', op: 'contains', value: 3 }, true],
    [{ field: 'data.link.tags', op: 'contains', value: 'sal' }, false],
    [{ field: 'data.link.clicks', op: 'contains', value: 4 }, false],
    [{ field: 'data.click.userAgent', op: 'not_contains', value: 'bot' }, true],
    [{ field: 'data.click.userAgent', op: 'not_contains', value: 'Mozilla' }, false],
    [{ field: 'data.link.tags', op: 'not_contains', value: 'winter' }, true],
    [{ field: 'data.link.tags', op: 'not_contains', value: 'spring' }, false],
    [{ field: 'data.link.clicks', op: 'not_contains', value: 4 }, false], // neither a string nor an array
    [{ field: 'data.click.referrer', op: 'not_contains', value: 'x' }, false], // null is neither
    // starts_with
    [{ field: 'data.link.domain', op: 'starts_with', value: 'go.' }, true],
    [{ field: 'data.link.domain', op: 'starts_with', value: 'Go.' }, false],
    [{ field: 'data.link.clicks', op: 'starts_with', value: '4' }, false],
    // gt / gte / lt / lte: numbers and instants
    [{ field: 'data.link.clicks', op: 'gt', value: 41 }, true],
    [{ field: 'data.link.clicks', op: 'gt', value: 42 }, false],
    [{ field: 'data.link.clicks', op: 'gte', value: 42 }, true],
    [{ field: 'data.link.clicks', op: 'gte', value: 43 }, false],
    [{ field: 'data.link.clicks', op: 'lt', value: 43 }, true],
    [{ field: 'data.link.clicks', op: 'lt', value: 42 }, false],
    [{ field: 'data.link.clicks', op: 'lte', value: 42 }, true],
    [{ field: 'data.link.clicks', op: 'lte', value: 41.5 }, false],
    [{ field: 'timestamp', op: 'gt', value: '2026-03-01T11:59:59Z' }, true],
    [{ field: 'timestamp', op: 'gt', value: '2026-03-01T13:00:00+02:00' }, true], // 11:00Z: compared as instants
    [{ field: 'timestamp', op: 'lt', value: '2026-03-01T12:00:00.001Z' }, true],
    [{ field: 'timestamp', op: 'lte', value: '2026-03-01T12:00:00Z' }, true],
    [{ field: 'timestamp', op: 'gte', value: '2026-03-01T12:00:01Z' }, false],
    [{ field: 'data.link.clicks', op: 'gt', value: '2020-01-01T00:00:00Z' }, false], // kinds differ
    [{ field: 'data.link.domain', op: 'gt', value: 1 }, false],
    // exists / not_exists: null is present
    [{ field: 'data.click.referrer', op: 'exists' }, true],
    [{ field: 'data.link.domain', op: 'exists' }, true],
    [{ field: 'data.link.nope', op: 'exists' }, false],
    [{ field: 'data.link.nope', op: 'not_exists' }, true],
    [{ field: 'data.click.referrer', op: 'not_exists' }, false],
    // array indexes
    [{ field: 'data.link.tags.1', op: 'eq', value: 'spring' }, true],
    [{ field: 'data.link.tags.9', op: 'not_exists' }, true],
    [{ field: 'data.link.meta.b.0', op: 'eq', value: 1 }, true],
  ]
  for (const [rule, expected] of cases) {
    test(`${rule.field} ${rule.op} ${JSON.stringify(rule.value)} → ${expected}`, () => expect(one(rule)).toBe(expected))
  }

  test('a missing field satisfies only not_exists', () => {
    const values: Record<string, unknown> = {
      eq: 'x',
      neq: 'x',
      in: ['x'],
      nin: ['x'],
      contains: 'x',
      not_contains: 'x',
      starts_with: 'x',
      gt: 1,
      gte: 1,
      lt: 1,
      lte: 1,
    }
    for (const op of Object.keys(values)) {
      expect(one({ field: 'data.nothing.here', op: op as FilterRule['op'], value: values[op] })).toBe(false)
    }
    expect(one({ field: 'data.nothing.here', op: 'exists' })).toBe(false)
    expect(one({ field: 'data.nothing.here', op: 'not_exists' })).toBe(true)
  })

  test('prototype properties are never reached', () => {
    expect(one({ field: 'data.constructor', op: 'exists' })).toBe(false)
    expect(one({ field: 'data.link.__proto__', op: 'exists' })).toBe(false)
    expect(one({ field: 'data.link.tags.length', op: 'exists' })).toBe(false)
  })
})

describe('matchesFilters: combining', () => {
  const yes: FilterRule = { field: 'mode', op: 'eq', value: 'live' }
  const no: FilterRule = { field: 'mode', op: 'eq', value: 'test' }
  const f = (match: 'all' | 'any', rules: FilterRule[], events: string[] | null = null): WebhookFilters => ({ match, events, rules })
  test('all needs every rule, any needs one, none always matches', () => {
    expect(matchesFilters(f('all', [yes, yes]), envelope)).toBe(true)
    expect(matchesFilters(f('all', [yes, no]), envelope)).toBe(false)
    expect(matchesFilters(f('any', [no, yes]), envelope)).toBe(true)
    expect(matchesFilters(f('any', [no, no]), envelope)).toBe(false)
    expect(matchesFilters(f('any', []), envelope)).toBe(true)
    expect(matchesFilters(f('all', []), envelope)).toBe(true)
    expect(matchesFilters(null, envelope)).toBe(true)
  })
  test('filters.events must match the type as well', () => {
    expect(matchesFilters(f('all', [yes], ['link.*']), envelope)).toBe(true)
    expect(matchesFilters(f('all', [yes], ['link.created']), envelope)).toBe(false)
    expect(matchesFilters(f('any', [], ['conversion.*']), envelope)).toBe(false)
  })
})

describe('eventMatches', () => {
  test('star, exact, and prefix patterns', () => {
    expect(eventMatches(['*'], 'link.clicked')).toBe(true)
    expect(eventMatches(['link.clicked'], 'link.clicked')).toBe(true)
    expect(eventMatches(['link.created'], 'link.clicked')).toBe(false)
    expect(eventMatches(['link.*'], 'link.deleted')).toBe(true)
    expect(eventMatches(['link.*'], 'linkx.deleted')).toBe(false)
    expect(eventMatches(['conversion.*', 'webhook.test'], 'webhook.test')).toBe(true)
    expect(eventMatches([], 'link.clicked')).toBe(false)
  })
})

describe('validateEventPatterns', () => {
  const known = EVENT_CATALOGUE.map((e) => e.type)
  test('accepts *, known types and prefixes of known types', () => {
    expect(validateEventPatterns(['*', 'link.clicked', 'link.*', 'conversion.*'], known)).toEqual([])
  })
  test('refuses unknown names and prefixes, with pointer paths', () => {
    expect(validateEventPatterns(['link.*', 'link.exploded', 'nope.*', 7, '.*'], known)).toEqual([
      { path: '/events/1', message: '"link.exploded" is not a known event type (use *, an exact type, or a prefix such as link.*)' },
      { path: '/events/2', message: '"nope.*" matches no known event type' },
      { path: '/events/3', message: 'must be a string' },
      { path: '/events/4', message: '".*" matches no known event type' },
    ])
    expect(validateEventPatterns('link.*', known)).toEqual([{ path: '/events', message: 'must be an array of event names' }])
  })
})

describe('validateFilters', () => {
  test('null and undefined mean no filters', () => {
    expect(validateFilters(null)).toEqual({ ok: true, value: null })
    expect(validateFilters(undefined)).toEqual({ ok: true, value: null })
  })

  test('a valid filter comes back normalised', () => {
    const r = validateFilters({
      match: 'any',
      events: ['link.*'],
      rules: [
        { field: 'data.link.domain', op: 'eq', value: 'go.example.com' },
        { field: 'data.link.tags.0', op: 'in', value: ['a', 1, true, null] },
        { field: 'timestamp', op: 'gte', value: '2026-01-01T00:00:00Z' },
        { field: 'data.link.clicks', op: 'lt', value: 10 },
        { field: 'data.link.tags', op: 'contains', value: 3 },
        { field: 'data.click.referrer', op: 'exists', value: null },
        { field: 'x', op: 'not_exists' },
        { field: 'data.link.slug', op: 'starts_with', value: 'pro' },
      ],
    })
    expect(r.ok).toBe(true)
    if (r.ok) {
      expect(r.value!.match).toBe('any')
      expect(r.value!.rules[5]).toEqual({ field: 'data.click.referrer', op: 'exists' })
      expect(r.value!.rules).toHaveLength(8)
    }
    expect(validateFilters({ rules: [] })).toEqual({ ok: true, value: { match: 'all', events: null, rules: [] } })
  })

  const issues = (input: unknown) => {
    const r = validateFilters(input)
    if (r.ok) throw new Error(`expected issues for ${JSON.stringify(input)}`)
    return r.issues
  }

  test('each bad rule is named by index and path', () => {
    const found = issues({
      match: 'all',
      rules: [
        { field: 'data.ok', op: 'eq', value: 1 },
        { field: 'data.ok', op: 'matches', value: '.*' },
        { field: 'data.ok', op: 'in', value: [] },
        { field: 'data..x', op: 'exists' },
        { field: 'data.ok', op: 'gt', value: 'yesterday' },
        { field: 'data.ok', op: 'exists', value: 3 },
        { field: 'data.ok', op: 'contains', value: { a: 1 } },
        { field: 'data.ok', op: 'starts_with', value: 5 },
        { field: 'data.ok', op: 'nin', value: [{ a: 1 }] },
        { field: '', op: 'eq', value: 1 },
        { field: 'data.ok', op: 'eq' },
        'not a rule',
        { field: 'data.ok', op: 'eq', value: 1, extra: true },
        { field: 'x'.repeat(201), op: 'exists' },
        { field: 'data.ok', op: 'lt', value: '2026-01-01T00:00:00' },
      ],
    })
    const at = (path: string) => found.find((i) => i.path === path)?.message
    expect(at('/filters/rules/0/op')).toBeUndefined()
    expect(at('/filters/rules/1/op')).toStartWith('rule 1: op must be one of eq, neq, in')
    expect(at('/filters/rules/2/value')).toBe('rule 2: in needs a non-empty array of strings, numbers, booleans or null')
    expect(at('/filters/rules/3/field')).toStartWith('rule 3: field "data..x" has an empty segment')
    expect(at('/filters/rules/4/value')).toBe('rule 4: gt needs a number or an ISO 8601 date-time with a zone')
    expect(at('/filters/rules/5/value')).toBe('rule 5: exists takes no value')
    expect(at('/filters/rules/6/value')).toStartWith('rule 6: contains needs a string')
    expect(at('/filters/rules/7/value')).toBe('rule 7: starts_with needs a string')
    expect(at('/filters/rules/8/value')).toBe('rule 8: nin values must be strings, numbers, booleans or null')
    expect(at('/filters/rules/9/field')).toBe('rule 9: field must be 1-200 characters')
    expect(at('/filters/rules/10/value')).toBe('rule 10: eq needs a value')
    expect(at('/filters/rules/11')).toBe('rule 11: must be an object with field, op and value')
    expect(at('/filters/rules/12/extra')).toBe('rule 12: unknown property "extra"')
    expect(at('/filters/rules/13/field')).toBe('rule 13: field must be 1-200 characters')
    expect(at('/filters/rules/14/value')).toBe('rule 14: lt needs a number or an ISO 8601 date-time with a zone')
    expect(found).toHaveLength(14)
  })

  test('shape of the filter object itself', () => {
    expect(issues({ match: 'some' })).toEqual([{ path: '/filters/match', message: 'match must be "all" or "any"' }])
    expect(issues([])).toEqual([{ path: '/filters', message: 'must be an object with match, events and rules, or null' }])
    expect(issues({ rules: {} })).toEqual([{ path: '/filters/rules', message: 'rules must be an array' }])
    expect(issues({ rules: Array.from({ length: 51 }, () => ({ field: 'a', op: 'exists' })) })).toEqual([
      { path: '/filters/rules', message: 'at most 50 rules' },
    ])
    expect(validateFilters({ rules: Array.from({ length: 50 }, () => ({ field: 'a', op: 'exists' })) }).ok).toBe(true)
    expect(issues({ events: ['link.nope'] })[0]!.path).toBe('/filters/events/0')
    expect(issues({ events: [] })).toEqual([{ path: '/filters/events', message: 'must list at least one event, or be null for all' }])
    expect(issues({ regex: 'x' })).toEqual([{ path: '/filters/regex', message: 'unknown property "regex"' }])
  })
})
