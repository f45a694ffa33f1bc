// Bridge pages in a real browser: headless Chromium against a loopback server answering renderPage() of every
// built-in template, at phone (390×844) and desktop (1280×800) widths, light and dark. Each page is
// screenshotted (LNK_SCREENSHOT_DIR keeps them), checked by axe-core (no serious or critical violations),
// for CSP complaints, its one <h1>, 44 px targets and horizontal overflow; and a page built from XSS
// payloads renders inert. Image URLs stay https; the browser helper answers them locally, so no request
// leaves the machine.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import { BLOCK_TYPES, blockType, mergeDefaults } from '../../src/modules/pages/blocks/index'
import { BUILTIN_TEMPLATES, buildTemplateSections } from '../../src/modules/pages/templates/index'
import { renderPage, type RenderedPage } from '../../src/modules/pages/render/page'
import { DEFAULT_THEME } from '../../src/modules/pages/render/theme'
import type { PageTree, SectionLayout, Theme, TreeSection } from '../../src/modules/pages/tree'
import { LAYOUT_WIDTHS } from '../../src/modules/pages/tree'
import { requireChromium } from '../browser'
import { withPagesBrowser, type PagesBrowser } from './_browser'


const keep = process.env.LNK_SCREENSHOT_DIR
const shots = keep ?? mkdtempSync(join(tmpdir(), 'lnk-page-shots-'))
const AXE = readFileSync(join(import.meta.dir, '../../node_modules/axe-core/axe.min.js'), 'utf8')
const XSS_TEXT = `<script>window.__xss=1</script>"><img src=x onerror="window.__xss=1">`
const XSS_URL = 'javascript:window.__xss=1'

interface Fixture {
  slug: string
  tree: PageTree
}

let n = 0
const blk = (type: string, fields: Record<string, unknown> = {}) => ({ id: `blk_test_${++n}`, type, fields: mergeDefaults(blockType(type)!, fields) })
const section = (layout: SectionLayout, columns: ReturnType<typeof blk>[][]): TreeSection => ({
  id: `sec_test_${++n}`,
  layout,
  columns: LAYOUT_WIDTHS[layout].map((width, i) => ({ id: `col_test_${++n}`, width, blocks: columns[i] ?? [] })),
})

const sample = (slug: string, theme: Theme, sections: TreeSection[]): Fixture => ({
  slug,
  tree: { title: `Sample ${slug}`, description: 'A sample page', lang: 'en', theme, ogImageUrl: null, sections },
})

const FIXTURES: Fixture[] = [
  sample('showcase', DEFAULT_THEME, [
    section('full', [[blk('profile', { avatarUrl: 'https://img.invalid/avatar.png', avatarAlt: 'Portrait placeholder' }), blk('social_links', { items: [{ network: 'website', url: 'https://example.com', label: '' }, { network: 'github', url: 'https://example.com/gh', label: '' }] })]]),
    section('1-1', [[blk('heading', { text: 'Left' }), blk('text', { markdown: 'Some **text** with [a link](https://example.com) in it.\n\n- one\n- two' })], [blk('image', { src: 'https://img.invalid/pic.png', url: 'https://example.com' })]]),
    section('2-1', [[blk('button')], [blk('button', { variant: 'outline', label: 'Outline' })]]),
    section('1-2', [[blk('video', { url: 'https://www.youtube.com/watch?v=aqz-KE-bpKQ', title: 'A sample video' })], [blk('contact', { name: 'Your name', email: 'you@example.com', phone: '+1 555 0100', website: 'https://example.com' })]]),
    section('1-1-1', [[blk('divider')], [blk('spacer')], [blk('text')]]),
  ]),
]

// The built-in templates, each as a page; their empty picture slots get an https URL the browser helper answers.
const withPictures = (fields: Record<string, unknown>): Record<string, unknown> => ({
  ...fields,
  ...('src' in fields && !fields.src ? { src: `https://img.invalid/${++n}.png` } : {}),
  ...('avatarUrl' in fields && !fields.avatarUrl ? { avatarUrl: `https://img.invalid/${++n}.png` } : {}),
})
for (const t of BUILTIN_TEMPLATES) {
  const sections: TreeSection[] = buildTemplateSections(t).map((s) => ({
    id: `sec_test_${++n}`,
    layout: s.layout,
    columns: s.columns.map((c) => ({ id: `col_test_${++n}`, width: c.width, blocks: c.blocks.map((b) => ({ id: `blk_test_${++n}`, type: b.type, fields: withPictures(b.fields) })) })),
  }))
  FIXTURES.push({ slug: t.slug, tree: { title: t.title, description: t.description, lang: 'en', theme: t.theme, ogImageUrl: null, sections } })
}
/** Every text field carries markup payloads and every URL-ish field a javascript: URL, past all validation. */
function poisoned(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return /url|href|src/i.test(key) ? XSS_URL : XSS_TEXT
  if (Array.isArray(value)) return value.map((v) => poisoned(v, key))
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, poisoned(v, k)]))
  return value
}
const XSS_TREE: PageTree = {
  title: XSS_TEXT,
  description: XSS_TEXT,
  lang: XSS_TEXT,
  theme: DEFAULT_THEME,
  ogImageUrl: XSS_URL,
  sections: [
    section('full', [
      BLOCK_TYPES.flatMap((t) => [
        { id: `blk_test_${++n}`, type: t.type, fields: poisoned(t.defaults) as Record<string, unknown> },
        { id: `blk_test_${++n}`, type: t.type, fields: { ...(poisoned(t.defaults) as Record<string, unknown>), url: XSS_URL, src: XSS_URL, avatarUrl: XSS_URL, linkId: null, markdown: `[x](${XSS_URL}) ${XSS_TEXT}` } },
      ]),
    ]),
  ],
}

const pages = new Map<string, RenderedPage>()
let server: ReturnType<typeof Bun.serve>
let origin = ''

beforeAll(() => {
  mkdirSync(shots, { recursive: true })
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const page = pages.get(new URL(req.url).pathname)
      return page ? new Response(page.html, { headers: page.headers }) : new Response('not found', { status: 404 })
    },
  })
  origin = `http://127.0.0.1:${server.port}`
  const render = (tree: PageTree, slug: string) =>
    pages.set(`/p/${slug}`, renderPage(tree, { url: `${origin}/p/${slug}`, isTest: slug === 'showcase', linkUrl: (id) => `${origin}/${id}`, blockType }))
  for (const f of FIXTURES) render(f.tree, f.slug)
  render(XSS_TREE, 'xss')
})
afterAll(() => {
  server?.stop(true)
  if (!keep) rmSync(shots, { recursive: true, force: true })
})

/**
 * The bottom-left pixel (page background: the main column keeps a margin there) and the share of pixels
 * that differ clearly from it (text, buttons, pictures).
 */
function inkOf(file: string) {
  const png = PNG.sync.read(readFileSync(file))
  const d = png.data
  const bg = (png.height - 1) * png.width * 4
  const far = (i: number) => Math.abs(d[i]! - d[bg]!) + Math.abs(d[i + 1]! - d[bg + 1]!) + Math.abs(d[i + 2]! - d[bg + 2]!) > 120
  let ink = 0
  for (let i = 0; i < d.length; i += 4) if (far(i)) ink++
  return { width: png.width, height: png.height, corner: `#${[d[bg]!, d[bg + 1]!, d[bg + 2]!].map((c) => c.toString(16).padStart(2, '0')).join('')}`, ink: ink / (png.width * png.height) }
}

const AXE_RUN = `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations
  .filter((v) => v.impact === 'serious' || v.impact === 'critical')
  .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((x) => x.target.join(' ') + ' :: ' + x.failureSummary) })))`

const SMALL_TARGETS = `[...document.querySelectorAll('a,button')].map((e) => ({ text: e.textContent.trim().slice(0, 40), cls: e.className, h: e.getBoundingClientRect().height })).filter((t) => t.h < 44)`

/** Everything one page must pass, in the scheme the browser currently emulates. */
async function checkScheme(page: PagesBrowser, f: Fixture, width: number, scheme: 'light' | 'dark') {
  const file = join(shots, `page-${f.slug}-${width}-${scheme}.png`)
  await page.screenshot(file)
  const ink = inkOf(file)
  expect({ file, width: ink.width, height: ink.height, corner: ink.corner }).toEqual({ file, width, height: ink.height, corner: f.tree.theme[scheme].background })
  expect(ink.ink).toBeGreaterThan(0.003)
  const violations = await page.evaluate<unknown[]>(AXE_RUN)
  if (violations.length) console.error(`axe: ${f.slug} at ${width} px, ${scheme}:`, JSON.stringify(violations, null, 2))
  expect(violations).toEqual([])
}

async function checkPage(page: PagesBrowser, f: Fixture, width: number) {
  await page.colorScheme('light')
  await page.goto(`${origin}/p/${f.slug}`)
  expect(await page.evaluate<number>('document.querySelectorAll("h1").length')).toBe(1)
  expect(await page.evaluate(SMALL_TARGETS)).toEqual([])
  // Readable at this width: nothing pushes the page sideways.
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width)
  // Keyboard users: the skip link slides into view when focused, and focused links show a ring.
  const focus = await page.evaluate(`(() => {
    const skip = document.querySelector('.skip'); skip.focus()
    const shown = skip.getBoundingClientRect().top >= 0 && getComputedStyle(skip).outlineStyle
    const link = document.querySelector('main a'); link?.focus()
    const ring = link ? getComputedStyle(link).outlineStyle : 'solid'
    document.activeElement.blur()
    return { shown, ring }
  })()`)
  expect(focus).toEqual({ shown: 'solid', ring: 'solid' })
  await page.evaluate(AXE)
  await checkScheme(page, f, width, 'light')
  await page.colorScheme('dark')
  expect(await page.evaluate<boolean>('matchMedia("(prefers-color-scheme: dark)").matches')).toBe(true)
  await checkScheme(page, f, width, 'dark')
}

test('Chromium is installed (CI installs it; locally: apt-get install -y chromium)', () => {
  expect(requireChromium()).toBeTruthy()
})

describe('every page in headless Chromium', () => {
  test('the pages are the sample and every built-in template', () => {
    expect(FIXTURES.map((f) => f.slug)).toEqual(['showcase', ...BUILTIN_TEMPLATES.map((t) => t.slug)])
    expect(BUILTIN_TEMPLATES.length).toBeGreaterThanOrEqual(8)
  })

  for (const [width, height] of [
    [390, 844],
    [1280, 800],
  ] as const) {
    test(`at ${width}×${height}: screenshots with ink, no serious axe violations (light and dark), one h1, 44 px targets, no CSP complaint, nothing fetched from outside`, async () => {
      await withPagesBrowser({ width, height, timeoutMs: 45_000 }, async (page) => {
        for (const f of FIXTURES) await checkPage(page, f, width)
        expect(page.messages.filter((m) => /Content.Security.Policy|Refused to/i.test(m))).toEqual([])
        // Only images and embeds were asked of other hosts, and the helper answered them itself.
        expect(page.outside.filter((r) => r.type !== 'Image' && r.type !== 'Document')).toEqual([])
      })
    }, 60_000)
  }
})

describe('XSS payloads', () => {
  test('the HTML, as a parser reads it, holds no script, no event handler attribute and no javascript: URL', async () => {
    const { html } = pages.get('/p/xss')!
    const tags: string[] = []
    const bad: string[] = []
    await new HTMLRewriter()
      .on('*', {
        element(e) {
          tags.push(e.tagName)
          for (const [name, value] of e.attributes) {
            if (/^on/i.test(name) || name === 'style' || /^\s*(javascript|vbscript|data):/i.test(value)) bad.push(`${e.tagName} ${name}=${value.slice(0, 15)}`)
          }
        },
      })
      .transform(new Response(html))
      .text()
    expect(tags).toContain('h1')
    expect(tags.filter((t) => t === 'script' || t === 'iframe' || t === 'object' || t === 'embed')).toEqual([])
    // The data: URLs a page carries: its empty icon (so no /favicon.ico request) and the contact cards' vCards.
    expect(bad).toEqual(['link href=data:,', 'a href=data:text/vcard', 'a href=data:text/vcard'])
    expect(html).toContain('&#60;script&#62;window.__xss=1&#60;/script&#62;')
  })

  test('in the browser the page is inert: no script element, no on* attribute, no javascript: link, window.__xss unset', async () => {
    await withPagesBrowser({ width: 390, height: 844, timeoutMs: 30_000 }, async (page) => {
      await page.goto(`${origin}/p/xss`)
      const found = await page.evaluate<Record<string, unknown>>(`({
        scripts: document.querySelectorAll('script').length,
        handlers: [...document.querySelectorAll('*')].flatMap((e) => [...e.attributes].filter((a) => /^on/i.test(a.name)).map((a) => e.tagName + ' ' + a.name)),
        jsUrls: [...document.querySelectorAll('[href],[src]')].map((e) => e.getAttribute('href') ?? e.getAttribute('src')).filter((u) => /^\\s*javascript:/i.test(u)),
        xss: typeof window.__xss,
        shown: document.body.textContent.includes('<script>window.__xss=1</script>'),
      })`)
      expect(found).toEqual({ scripts: 0, handlers: [], jsUrls: [], xss: 'undefined', shown: true })
      // Every link leads somewhere harmless: this host (tracked redirects, the skip link) or a vCard download.
      const targets = await page.evaluate<string[]>(`[...new Set([...document.querySelectorAll('a[href]')].map((a) => a.protocol + (a.protocol === 'data:' ? a.href.slice(5, 15) : a.host)))]`)
      expect(targets.sort()).toEqual([`http:${new URL(origin).host}`, 'data:text/vcard'].sort())
    })
  }, 45_000)
})
