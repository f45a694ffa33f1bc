import { describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { t } from 'elysia'
import { EVENT_CATALOGUE } from '../../../src/modules/webhooks/model'
import { exampleData, sampleEnvelope } from '../../../src/modules/automations/example'

const NOW = Date.UTC(2026, 2, 14, 9, 30)

describe('synthetic samples from the catalogue', () => {
  test.each(EVENT_CATALOGUE.map((e) => [e.type, e] as const))('%s: the sample data validates against the event schema', (_, def) => {
    const data = exampleData(def, NOW)
    const errors = [...Value.Errors(def.data, data)].map((e) => `${e.path}: ${e.message}`)
    expect(errors).toEqual([])
    expect(Value.Check(def.data, data)).toBe(true)
  })

  test("the envelope: fixed id per type, sample flag, the caller's mode, the clock's time", () => {
    const def = EVENT_CATALOGUE.find((e) => e.type === 'link.clicked')!
    const env = sampleEnvelope(def, 'test', NOW)
    expect(env).toMatchObject({ id: 'evt_sample_link_clicked', type: 'link.clicked', timestamp: '2026-03-14T09:30:00.000Z', mode: 'test', sample: true })
    expect(Object.keys(env)).toEqual(['id', 'type', 'timestamp', 'mode', 'sample', 'data'])
    expect(sampleEnvelope(EVENT_CATALOGUE.find((e) => e.type === 'bridge_page.created')!, 'live', NOW).id).toBe('evt_sample_bridge_page_created')
  })

  test('deterministic: two calls with the same clock give the same envelopes; only timestamps follow the clock', () => {
    for (const def of EVENT_CATALOGUE) {
      expect(sampleEnvelope(def, 'live', NOW)).toEqual(sampleEnvelope(def, 'live', NOW))
      const later = JSON.stringify(sampleEnvelope(def, 'live', NOW + 60_000))
      expect(later.replaceAll('2026-03-14T09:31:00.000Z', '2026-03-14T09:30:00.000Z')).toBe(JSON.stringify(sampleEnvelope(def, 'live', NOW)))
    }
  })

  test('plausible values: prefixed ids, URLs, dates from the clock, a currency code, nullable fields filled', () => {
    const clicked = exampleData(EVENT_CATALOGUE.find((e) => e.type === 'link.clicked')!, NOW) as any
    expect(clicked.click.id).toMatch(/^clk_[0-9A-Za-z]{20}$/)
    expect(clicked.click.timestamp).toBe('2026-03-14T09:30:00.000Z')
    expect(clicked.link.shortUrl).toMatch(/^https:\/\//)
    expect(clicked.link.destinationUrl).toMatch(/^https:\/\//)
    expect(clicked.click.referrer).not.toBeNull()

    const conversion = exampleData(EVENT_CATALOGUE.find((e) => e.type === 'conversion.created')!, NOW) as any
    expect(conversion.conversion.id).toMatch(/^cnv_/)
    expect(conversion.conversion.clickId).toBe(clicked.click.id)
    expect(conversion.conversion.currency).toMatch(/^[A-Z]{3}$/)
    expect(typeof conversion.conversion.value).toBe('number')
    expect(conversion.workspaceId).toMatch(/^ws_/)
    expect(conversion.link.id).toBe(clicked.link.id)

    const created = exampleData(EVENT_CATALOGUE.find((e) => e.type === 'link.created')!, NOW) as any
    expect(created.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(created.id).toBe(clicked.link.id)
    expect(created.createdAt).toBe('2026-03-14T09:30:00.000Z')
    expect(created.tags.length).toBeGreaterThan(0)
    expect(typeof created.totalClicks).toBe('number')

    expect((exampleData(EVENT_CATALOGUE.find((e) => e.type === 'domain.created')!, NOW) as any).id).toMatch(/^dom_/)
    const page = exampleData(EVENT_CATALOGUE.find((e) => e.type === 'bridge_page.updated')!, NOW) as any
    expect(page.id).toMatch(/^bp_/)
    expect(page.theme.dark.background).toMatch(/^#[0-9a-fA-F]{6}$/)
    expect(page.theme.dark.background).not.toBe(page.theme.light.background)
    expect(page.changes.length).toBeGreaterThan(0)
  })

  test('generic rules for shapes the catalogue does not use yet: each result still validates', () => {
    const data = t.Object({
      code: t.String({ pattern: '^[a-z]+-[0-9]+$' }),
      short: t.String({ minLength: 12, maxLength: 14 }),
      level: t.Union([t.Literal('low'), t.Literal('high')]),
      ratio: t.Number({ exclusiveMinimum: 0, maximum: 0.5 }),
      count: t.Integer({ minimum: 5 }),
      extra: t.Record(t.String(), t.Integer()),
      both: t.Intersect([t.Object({ a: t.String() }), t.Object({ b: t.Boolean() })]),
      maybe: t.Optional(t.Nullable(t.String({ format: 'email' }))),
      list: t.Array(t.Object({ webhookUrl: t.String() }), { minItems: 2 }),
    })
    const def = { type: 'thing.happened', description: '', data }
    const value = exampleData(def, NOW) as any
    expect([...Value.Errors(data, value)].map((e) => `${e.path}: ${e.message}`)).toEqual([])
    expect(value.level).toBe('low')
    expect(value.count).toBe(5)
    expect(value.maybe).toBe('jane@example.com')
    expect(value.list).toHaveLength(2)
    expect(value.list[0].webhookUrl).toMatch(/^https:\/\//)
  })

  test('a pattern no candidate matches is refused loudly (the catalogue test then names the type)', () => {
    const def = { type: 'thing.happened', description: '', data: t.Object({ odd: t.String({ pattern: '^zz[0-9]{9}$' }) }) }
    expect(() => exampleData(def, NOW)).toThrow(/pattern/)
  })
})
