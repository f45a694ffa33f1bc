// The page renderer and theme rules, without a browser: escaping of the head, one <h1>, the CSP's style
// hash, unknown blocks, the test banner, and the WCAG checks of themes.
import { describe, expect, test } from 'bun:test'
import type { BlockType, RenderContext } from '../../src/modules/pages/blocks/types'
import { pageCsp, renderPage, type RenderOptions } from '../../src/modules/pages/render/page'
import { contrastRatio, DEFAULT_THEME, themeIssues } from '../../src/modules/pages/render/theme'
import type { PageTree, Theme, TreeBlock } from '../../src/modules/pages/tree'

const esc = (s: unknown) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

// Stand-ins for the catalogue: the renderer's contract is only the BlockType interface.
const seen: RenderContext[] = []
const fake = (type: string, render: (f: Record<string, unknown>, ctx: RenderContext) => string): BlockType => ({
  type,
  title: type,
  description: type,
  schema: {} as BlockType['schema'],
  defaults: {},
  render(fields, ctx) {
    seen.push(ctx)
    return render(fields, ctx)
  },
})
const TYPES: Record<string, BlockType> = {
  profile: fake(
    'profile',
    (f, ctx) => `<div class="b-profile"><${ctx.primaryHeading ? 'h1' : 'h2'}>${esc(f.name)}</${ctx.primaryHeading ? 'h1' : 'h2'}></div>`,
  ),
  text: fake('text', (f) => `<p class="b-text">${esc(f.text)}</p>`),
  button: fake('button', (f, ctx) => `<a class="b-button" href="${esc(ctx.trackedHref())}">${esc(f.label)}</a>`),
  broken: fake('broken', () => {
    throw new Error('cannot draw')
  }),
}

const options = (over: Partial<RenderOptions> = {}): RenderOptions => ({
  url: 'https://s.example/p/hello',
  isTest: false,
  linkUrl: () => null,
  blockType: (t) => TYPES[t],
  ...over,
})

let n = 0
const block = (type: string, fields: Record<string, unknown> = {}): TreeBlock => ({ id: `blk_unit_${++n}`, type, fields })
const tree = (blocks: TreeBlock[], over: Partial<PageTree> = {}): PageTree => ({
  title: 'My page',
  description: 'About me',
  lang: 'en',
  theme: DEFAULT_THEME,
  ogImageUrl: null,
  sections: [{ id: 'sec_1', layout: 'full', columns: [{ id: 'col_1', width: 12, blocks }] }],
  ...over,
})

const count = (html: string, re: RegExp) => html.match(re)?.length ?? 0
const styleOf = (html: string) => html.match(/<style>([\s\S]*?)<\/style>/)![1]!

describe('head and escaping', () => {
  const evil = `"><script>window.__xss=1</script>&'`
  test('title, description, OG values and lang are escaped; no raw markup of them survives', () => {
    const { html } = renderPage(
      tree([], { title: `T ${evil}`, description: `D ${evil}`, lang: `en"><x`, ogImageUrl: `https://img.example/a.png?${evil}` }),
      options({ url: `https://s.example/p/x?${evil}` }),
    )
    expect(html).not.toContain('<script')
    expect(html).not.toContain('"><script')
    expect(html).toContain(`<title>T ${esc(evil)}</title>`)
    expect(html).toContain(`<meta property="og:title" content="T ${esc(evil)}">`)
    expect(html).toContain(`<meta name="description" content="D ${esc(evil)}">`)
    expect(html).toContain(`<meta property="og:description" content="D ${esc(evil)}">`)
    expect(html).toContain(`<meta property="og:image" content="https://img.example/a.png?${esc(evil)}">`)
    expect(html).toContain(`<meta property="og:url" content="https://s.example/p/x?${esc(evil)}">`)
    expect(html).toContain(`<html lang="en&#34;&#62;&#60;x">`)
    expect(html).toContain('<meta name="twitter:card" content="summary_large_image">')
  })

  test('OG and Twitter tags, canonical link and description', () => {
    const { html } = renderPage(tree([]), options())
    expect(html).toContain('<meta property="og:type" content="website">')
    expect(html).toContain('<meta property="og:url" content="https://s.example/p/hello">')
    expect(html).toContain('<link rel="canonical" href="https://s.example/p/hello">')
    expect(html).toContain('<meta name="twitter:card" content="summary">')
    expect(html).not.toContain('og:image')
    expect(html).toContain('<a class="skip" href="#main">')
    expect(html).toContain('<main id="main"')
  })

  test('an og:image that is not http(s) is left out; an empty description writes no description tags', () => {
    const { html } = renderPage(tree([], { ogImageUrl: 'javascript:alert(1)', description: ' ' }), options())
    expect(html).not.toContain('og:image')
    expect(html).not.toContain('javascript:')
    expect(html).not.toContain('description')
  })
})

describe('one <h1>', () => {
  test('the first profile block carries it; the page title is not a heading then', () => {
    const { html } = renderPage(tree([block('text', { text: 'hi' }), block('profile', { name: 'First' }), block('profile', { name: 'Second' })]), options())
    expect(count(html, /<h1/g)).toBe(1)
    expect(html).toContain('<h1>First</h1>')
    expect(html).toContain('<h2>Second</h2>')
    expect(html).not.toContain('class="page-title"')
  })

  test('without a profile block the page title is the <h1>', () => {
    const { html } = renderPage(tree([block('text', { text: 'hi' })], { title: 'Only <title>' }), options())
    expect(count(html, /<h1/g)).toBe(1)
    expect(html).toContain('<h1 class="page-title">Only &#60;title&#62;</h1>')
  })
})

describe('the stylesheet and the CSP', () => {
  test("the CSP's style hash is the sha256 of the <style> element's text, and the headers are set", () => {
    const { html, headers } = renderPage(tree([block('button', { label: 'Go' })]), options())
    const css = styleOf(html)
    const hash = new Bun.CryptoHasher('sha256').update(css).digest('base64')
    const csp = headers['content-security-policy']!
    expect(csp).toContain(`style-src 'sha256-${hash}'`)
    expect(csp).toBe(pageCsp(css))
    expect(csp.split('; ')).toEqual([
      "default-src 'none'",
      `style-src 'sha256-${hash}'`,
      'img-src https: data:',
      'frame-src https://www.youtube-nocookie.com https://player.vimeo.com https://open.spotify.com https://w.soundcloud.com',
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ])
    expect(headers['content-type']).toBe('text/html; charset=utf-8')
    expect(headers['x-content-type-options']).toBe('nosniff')
    expect(headers['referrer-policy']).toBe('strict-origin-when-cross-origin')
    expect(count(html, /<style/g)).toBe(1)
    expect(html).not.toMatch(/\sstyle=/)
    expect(html).not.toContain('<script')
  })

  test('framing: only the origin given (the console on the API origin) may frame the page, else nobody', () => {
    const css = styleOf(renderPage(tree([]), options()).html)
    const allowed = renderPage(tree([]), options({ frameAncestor: 'https://lnk.example.com' })).headers['content-security-policy']!
    expect(allowed.split('; ')).toContain('frame-ancestors https://lnk.example.com')
    expect(allowed).toBe(pageCsp(css, 'https://lnk.example.com'))
    expect(pageCsp(css).split('; ')).toContain("frame-ancestors 'none'")
  })

  test('the theme becomes custom properties with a dark override; a different theme changes the hash', () => {
    const theme: Theme = {
      light: { background: '#fffdf5', text: '#202020', accent: '#8a2be2', accentText: '#ffffff' },
      dark: { background: '#101820', text: '#f0f0f0', accent: '#ffb3c7', accentText: '#101820' },
      font: 'serif',
      buttonShape: 'pill',
    }
    const a = renderPage(tree([], { theme }), options())
    const css = styleOf(a.html)
    expect(css).toContain('--bg:#fffdf5;--fg:#202020;--ac:#8a2be2;--on:#ffffff')
    expect(css).toMatch(/@media \(prefers-color-scheme:dark\)\{:root\{color-scheme:dark;--bg:#101820;--fg:#f0f0f0;--ac:#ffb3c7;--on:#101820\}\}/)
    expect(css).toContain('Georgia')
    expect(css).toContain('--r:999px')
    const b = renderPage(tree([]), options())
    expect(b.headers['content-security-policy']).not.toBe(a.headers['content-security-policy'])
  })

  test('a colour that is not #rrggbb never reaches the stylesheet (the default stands in)', () => {
    const theme = { ...DEFAULT_THEME, light: { ...DEFAULT_THEME.light, background: 'red}</style><script>window.__xss=1</script>' } }
    const { html } = renderPage(tree([], { theme }), options())
    expect(html).not.toContain('<script')
    expect(styleOf(html)).toContain(`--bg:${DEFAULT_THEME.light.background}`)
  })

  test('sections become grid rows of 12 columns with width classes', () => {
    const t = tree([], {
      sections: [
        {
          id: 'sec_a',
          layout: '2-1',
          columns: [
            { id: 'c1', width: 8, blocks: [block('text', { text: 'left' })] },
            { id: 'c2', width: 4, blocks: [block('text', { text: 'right' })] },
          ],
        },
      ],
    })
    const { html } = renderPage(t, options())
    expect(html).toContain(
      '<section class="s s-2-1"><div class="c w-8"><p class="b-text">left</p></div><div class="c w-4"><p class="b-text">right</p></div></section>',
    )
    expect(styleOf(html)).toContain('grid-template-columns:repeat(12,minmax(0,1fr))')
    expect(styleOf(html)).toContain('.w-8{grid-column:span 8}')
  })
})

describe('blocks', () => {
  test('an unknown block type, or a block whose renderer throws, renders nothing; the rest of the page does', () => {
    const { html } = renderPage(
      tree([block('text', { text: 'before' }), block('no_such_type', { text: 'ghost' }), block('broken'), block('text', { text: 'after' })]),
      options(),
    )
    expect(html).toContain('<div class="c w-12"><p class="b-text">before</p><p class="b-text">after</p></div>')
    expect(html).not.toContain('ghost')
  })

  test('each block gets its id, tracked hrefs under /_/b/, the link resolver and primaryHeading', () => {
    seen.length = 0
    const b = block('button', { label: 'Go' })
    const { html } = renderPage(tree([b]), options({ linkUrl: (id) => (id === 'lnk_1' ? 'https://s.example/abc' : null) }))
    expect(html).toContain(`<a class="b-button" href="/_/b/${b.id}">Go</a>`)
    const ctx = seen[0]!
    expect(ctx.blockId).toBe(b.id)
    expect(ctx.trackedHref(2)).toBe(`/_/b/${b.id}?i=2`)
    expect(ctx.linkUrl('lnk_1')).toBe('https://s.example/abc')
    expect(ctx.linkUrl('lnk_2')).toBeNull()
    expect(ctx.primaryHeading).toBe(false)
  })
})

describe('test pages', () => {
  test('a test page shows a visible banner and asks not to be indexed; a public page does neither', () => {
    const t = renderPage(tree([]), options({ isTest: true }))
    expect(t.html).toContain('<header class="test-banner"><p>Test page — not public</p></header>')
    expect(t.html).toContain('<meta name="robots" content="noindex,nofollow">')
    expect(t.headers['x-robots-tag']).toBe('noindex')
    const p = renderPage(tree([]), options())
    expect(p.html).not.toContain('Test page')
    expect(p.html).not.toContain('noindex')
    expect(p.headers['x-robots-tag']).toBeUndefined()
  })
})

describe('themes (WCAG AA)', () => {
  test('contrast ratios are those of WCAG', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5)
    expect(contrastRatio('#ffffff', '#ffffff')).toBe(1)
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2)
  })

  test('the default theme passes', () => {
    expect(themeIssues(DEFAULT_THEME)).toEqual([])
  })

  test('low contrast is named by scheme and colour, in both schemes', () => {
    const theme: Theme = {
      light: { background: '#ffffff', text: '#999999', accent: '#0b57d0', accentText: '#ffffff' },
      dark: { background: '#121212', text: '#ececec', accent: '#333333', accentText: '#3a3a3a' },
      font: 'system',
      buttonShape: 'rounded',
    }
    const issues = themeIssues(theme)
    expect(issues.map((i) => i.path)).toEqual(['theme/light/text', 'theme/dark/accentText', 'theme/dark/accent'])
    expect(issues[0]!.message).toContain('4.5:1')
  })

  test('an accent that reads on its button but not as a link on the background is refused', () => {
    const theme: Theme = { ...DEFAULT_THEME, light: { background: '#ffffff', text: '#000000', accent: '#ffd700', accentText: '#000000' } }
    expect(themeIssues(theme).map((i) => i.path)).toEqual(['theme/light/accent'])
  })

  test('colours must be #rrggbb; fonts and shapes from their lists', () => {
    const theme = {
      light: { background: '#fff', text: 'black', accent: '#0b57d0', accentText: '#ffffff' },
      dark: { background: '#121212', text: '#ececec', accent: 'rgb(1,2,3)', accentText: '#0b1d3a' },
      font: 'comic',
      buttonShape: 'blob',
    } as unknown as Theme
    expect(themeIssues(theme).map((i) => i.path)).toEqual([
      'theme/light/background',
      'theme/light/text',
      'theme/dark/accent',
      'theme/font',
      'theme/buttonShape',
    ])
    expect(themeIssues({ ...DEFAULT_THEME, dark: undefined } as unknown as Theme).map((i) => i.path)).toEqual(['theme/dark'])
  })
})
