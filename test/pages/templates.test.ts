// The built-in templates: complete, valid pages to start from, with accessible themes, and the catalogue's
// filters and paging.
import { describe, expect, test } from 'bun:test'
import { blockType, validateFields } from '../../src/modules/pages/blocks'
import { themeIssues } from '../../src/modules/pages/render/theme'
import { BUILTIN_TEMPLATES, buildTemplateSections, findTemplate, listTemplates, TEMPLATE_CATEGORIES, type Template } from '../../src/modules/pages/templates'
import { LAYOUT_WIDTHS, SECTION_LAYOUTS } from '../../src/modules/pages/tree'

const REQUIRED = ['link-in-bio', 'musician-release', 'creator-shop', 'business-card', 'local-business', 'event', 'app-download', 'leaving-notice']
const slugs = (items: Template[]) => items.map((t) => t.slug)

describe('built-in templates', () => {
  test('the eight required templates exist, with unique slugs and known categories', () => {
    expect(slugs([...BUILTIN_TEMPLATES])).toEqual(expect.arrayContaining(REQUIRED))
    expect(new Set(slugs([...BUILTIN_TEMPLATES])).size).toBe(BUILTIN_TEMPLATES.length)
    for (const t of BUILTIN_TEMPLATES) {
      expect(TEMPLATE_CATEGORIES as readonly string[], t.slug).toContain(t.category)
      expect(t.slug).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/)
      expect(t.name && t.description && t.title, t.slug).toBeTruthy()
      expect(t.tags.length, t.slug).toBeGreaterThan(0)
      expect(findTemplate(t.slug)).toBe(t)
    }
    expect(findTemplate('nope')).toBeUndefined()
  })

  for (const t of BUILTIN_TEMPLATES) {
    describe(t.slug, () => {
      test('every block validates once the defaults are merged', () => {
        for (const [si, s] of buildTemplateSections(t).entries()) {
          for (const [ci, c] of s.columns.entries()) {
            for (const [bi, b] of c.blocks.entries()) {
              const type = blockType(b.type)
              expect(type, `${si}/${ci}/${bi}`).toBeDefined()
              expect(validateFields(type!, b.fields), `${t.slug} section ${si} column ${ci} block ${bi} (${b.type})`).toEqual([])
            }
          }
        }
      })

      test('columns match their layouts, and not every section is full width', () => {
        for (const s of t.sections) {
          expect(SECTION_LAYOUTS).toContain(s.layout)
          expect(s.columns.length, s.layout).toBe(LAYOUT_WIDTHS[s.layout].length)
          expect(
            s.columns.every((c) => c.blocks.length > 0),
            s.layout,
          ).toBe(true)
        }
        expect(t.sections.some((s) => s.layout !== 'full')).toBe(true)
        const built = buildTemplateSections(t)
        for (const [i, s] of built.entries()) expect(s.columns.map((c) => c.width)).toEqual(LAYOUT_WIDTHS[t.sections[i]!.layout])
      })

      test('the page opens with a profile, which carries its one <h1>', () => {
        const blocks = buildTemplateSections(t).flatMap((s) => s.columns.flatMap((c) => c.blocks))
        expect(blocks[0]!.type).toBe('profile')
        expect(blocks.filter((b) => b.type === 'heading').every((b) => b.fields.level === 2 || b.fields.level === 3)).toBe(true)
      })

      test('the theme reaches WCAG AA in light and dark', () => {
        expect(themeIssues(t.theme)).toEqual([])
      })

      test('placeholders are honest: links go to example.com, nothing loads from elsewhere', () => {
        const json = JSON.stringify(t.sections)
        for (const url of json.match(/(?:https?|mailto):[^"\s)]+/g) ?? [])
          expect(url, url).toMatch(/^(?:https:\/\/example\.com(?:[/?#]|$)|mailto:[^@]+@example\.com$)/)
        for (const b of buildTemplateSections(t).flatMap((s) => s.columns.flatMap((c) => c.blocks))) {
          if (b.type === 'image') expect(b.fields.src).toBe('')
          if (b.type === 'video') expect(b.fields.url).toBe('')
          if (b.type === 'profile') expect(b.fields.avatarUrl).toBe('')
        }
      })
    })
  }

  test('building answers fresh fields: a change to one page never reaches the template', () => {
    const t = findTemplate('link-in-bio')!
    const first = buildTemplateSections(t)
    ;(first[0]!.columns[0]!.blocks[1]!.fields.items as unknown[]).length = 0
    expect((buildTemplateSections(t)[0]!.columns[0]!.blocks[1]!.fields.items as unknown[]).length).toBe(3)
  })

  test('an unknown block type in a template is an error, not a silent gap', () => {
    const broken: Template = { ...findTemplate('event')!, sections: [{ layout: 'full', columns: [{ blocks: [{ type: 'marquee', fields: {} }] }] }] }
    expect(() => buildTemplateSections(broken)).toThrow('unknown block type marquee')
  })
})

describe('listTemplates', () => {
  test('all of them by default, in catalogue order', () => {
    const { items, total } = listTemplates()
    expect(total).toBe(BUILTIN_TEMPLATES.length)
    expect(slugs(items)).toEqual(slugs([...BUILTIN_TEMPLATES]))
  })

  test('filters by category, tag and text', () => {
    expect(slugs(listTemplates({ category: 'business' }).items)).toEqual(['business-card', 'local-business'])
    expect(listTemplates({ category: 'unknown' })).toEqual({ items: [], total: 0 })
    expect(slugs(listTemplates({ tag: 'VCARD' }).items)).toEqual(['business-card'])
    expect(slugs(listTemplates({ tag: 'vcar' }).items)).toEqual([])
    // q matches the name, the description or a tag, ignoring case.
    expect(slugs(listTemplates({ q: 'SHOP' }).items)).toEqual(['creator-shop', 'local-business'])
    expect(slugs(listTemplates({ q: 'app store' }).items)).toEqual(['app-download'])
    expect(slugs(listTemplates({ q: 'interstitial' }).items)).toEqual(['leaving-notice'])
    expect(slugs(listTemplates({ category: 'music', q: 'tour' }).items)).toEqual(['musician-release'])
  })

  test('pages with limit and offset; total counts every match', () => {
    const all = slugs([...BUILTIN_TEMPLATES])
    expect(listTemplates({ limit: 3 })).toEqual({ items: BUILTIN_TEMPLATES.slice(0, 3), total: all.length })
    expect(slugs(listTemplates({ limit: 3, offset: 3 }).items)).toEqual(all.slice(3, 6))
    expect(slugs(listTemplates({ limit: 3, offset: 6 }).items)).toEqual(all.slice(6, 9))
    expect(listTemplates({ limit: 5, offset: 100 })).toEqual({ items: [], total: all.length })
    expect(listTemplates({ category: 'business', limit: 1, offset: 1 })).toEqual({ items: [findTemplate('local-business')!], total: 2 })
  })
})
