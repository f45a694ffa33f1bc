import { describe, expect, test } from 'bun:test'
import { renderTemplate, validateTemplate } from '../../../src/modules/webhooks/template'

const event = {
  id: 'evt_9',
  type: 'link.created',
  mode: 'live',
  data: { shortUrl: 'https://go.example/x', clicks: 7, active: true, title: null, tags: ['a', 'b'], meta: { k: 'v' } },
}

describe('renderTemplate', () => {
  test('a string that is exactly one placeholder keeps the type; missing becomes null', () => {
    const out = renderTemplate(
      {
        n: '{{data.clicks}}',
        b: '{{ data.active }}',
        o: '{{data.meta}}',
        a: '{{ data.tags }}',
        t: '{{data.title}}',
        m: '{{ data.nope }}',
        first: '{{data.tags.0}}',
      },
      event,
    )
    expect(out).toEqual({ n: 7, b: true, o: { k: 'v' }, a: ['a', 'b'], t: null, m: null, first: 'a' })
  })

  test('other strings interpolate: objects as JSON, null and missing as empty', () => {
    const out = renderTemplate(
      {
        text: 'New {{type}}: {{ data.shortUrl }} ({{data.clicks}} clicks, {{data.tags}}, {{data.meta}}) [{{data.title}}|{{data.nope}}]',
        pad: ' {{data.clicks}}',
      },
      event,
    )
    expect(out).toEqual({ text: 'New link.created: https://go.example/x (7 clicks, ["a","b"], {"k":"v"}) [|]', pad: ' 7' })
  })

  test('walks nested objects and arrays; keys and non-strings are left alone', () => {
    const out = renderTemplate({ '{{type}}': { list: ['{{id}}', 1, false, null, { deep: '{{mode}}' }] } }, event)
    expect(out).toEqual({ '{{type}}': { list: ['evt_9', 1, false, null, { deep: 'live' }] } })
  })

  test('a __proto__ key stays data, and prototype paths read nothing', () => {
    const template = JSON.parse('{"__proto__": {"polluted": "{{id}}"}, "c": "{{constructor}}", "l": "{{data.tags.length}}"}')
    const out = renderTemplate(template, event) as Record<string, unknown>
    expect(Object.hasOwn(out, '__proto__')).toBe(true)
    expect(JSON.parse(JSON.stringify(out))).toEqual(JSON.parse('{"__proto__": {"polluted": "evt_9"}, "c": null, "l": null}'))
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  test('text that only looks like code is copied, never run', () => {
    expect(renderTemplate({ x: '{{ data.clicks + 1 }}', y: '${process.env.HOME}' }, event)).toEqual({ x: '{{ data.clicks + 1 }}', y: '${process.env.HOME}' })
  })
})

describe('validateTemplate', () => {
  test('accepts a plain object with well-formed placeholders', () => {
    expect(validateTemplate({ text: 'Hi {{ data.link.shortUrl }} and {{data.tags.0}}', n: 1, list: [null, true, { a: '{{id}}' }] })).toEqual([])
  })

  test('refuses anything but a plain object', () => {
    for (const bad of [null, [], 'x', 3, new Date()]) expect(validateTemplate(bad)).toEqual([{ path: '/transform/template', message: 'must be a JSON object' }])
  })

  test('malformed placeholders are named by pointer path', () => {
    const issues = validateTemplate({ a: 'open {{ data.x', b: { 'c/d': ['ok', '{{ a b }}'] }, e: '{{}}', f: '{{ a..b }}', g: 'x }} y' })
    expect(issues.map((i) => i.path)).toEqual(['/transform/template/a', '/transform/template/b/c~1d/1', '/transform/template/e', '/transform/template/f'])
    expect(issues[0]!.message).toStartWith('has a malformed placeholder')
  })

  test('depth at most 10', () => {
    const nest = (n: number): Record<string, unknown> => (n === 1 ? { leaf: 1 } : { d: nest(n - 1) })
    expect(validateTemplate(nest(10))).toEqual([])
    const issues = validateTemplate(nest(11))
    expect(issues).toHaveLength(1)
    expect(issues[0]!.message).toBe('nests deeper than 10 levels')
  })

  test('at most 16 KiB as JSON', () => {
    expect(validateTemplate({ t: 'x'.repeat(16 * 1024 - 20) })).toEqual([])
    const issues = validateTemplate({ t: 'x'.repeat(16 * 1024) })
    expect(issues).toHaveLength(1)
    expect(issues[0]!.message).toMatch(/^is \d+ bytes as JSON; at most 16384$/)
  })

  test('non-JSON numbers are refused', () => {
    expect(validateTemplate({ n: Number.NaN })).toEqual([{ path: '/transform/template/n', message: 'must be a finite number' }])
  })
})
