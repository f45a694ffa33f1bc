import { describe, expect, test } from 'bun:test'
import { flatten } from '../../../src/modules/automations/flatten'

describe('flatten (Zapier naming, flat=1)', () => {
  test('nested object keys are joined with __ at every depth', () => {
    expect(flatten({ id: 'evt_1', data: { link: { id: 'l1', slug: 'a' }, workspaceId: 'ws_1' } })).toEqual({
      id: 'evt_1',
      data__link__id: 'l1',
      data__link__slug: 'a',
      data__workspaceId: 'ws_1',
    })
  })

  test('arrays of primitives stay arrays, untouched', () => {
    expect(flatten({ data: { tags: ['spring', 'newsletter'], counts: [1, 2], empty: [] } })).toEqual({
      data__tags: ['spring', 'newsletter'],
      data__counts: [1, 2],
      data__empty: [],
    })
  })

  test('arrays of objects stay arrays, each item flattened the same way', () => {
    const out = flatten({
      data: {
        records: [
          { type: 'TXT', check: { ok: true, seen: ['v'] } },
          { type: 'A', check: { ok: null, seen: null } },
        ],
      },
    })
    expect(out).toEqual({
      data__records: [
        { type: 'TXT', check__ok: true, check__seen: ['v'] },
        { type: 'A', check__ok: null, check__seen: null },
      ],
    })
  })

  test('null is a value of its own key, never a nested object', () => {
    expect(flatten({ data: { httpCheck: null, link: { title: null } } })).toEqual({ data__httpCheck: null, data__link__title: null })
  })

  test('an empty object stays {} under its own key (the field is still offered), at the top it is {}', () => {
    expect(flatten({ data: { metadata: {}, other: { inner: {} } } })).toEqual({ data__metadata: {}, data__other__inner: {} })
    expect(flatten({})).toEqual({})
    expect(flatten({ items: [{}] })).toEqual({ items: [{}] })
  })

  test('already flat input is unchanged, and the input is not modified', () => {
    const input = { id: 'x', n: 1, ok: false, nested: { a: 1 } }
    const copy = structuredClone(input)
    expect(flatten({ id: 'x', n: 1, ok: false })).toEqual({ id: 'x', n: 1, ok: false })
    flatten(input)
    expect(input).toEqual(copy)
  })
})
