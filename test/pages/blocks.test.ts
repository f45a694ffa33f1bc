// The block catalogue: schemas, defaults, checks, Markdown, video addresses, vCards, and renderers that stay
// inert whatever the fields hold.
import { describe, expect, test } from 'bun:test'
import { BLOCK_TYPES, blockType, mergeDefaults, validateFields, type BlockType, type RenderContext } from '../../src/modules/pages/blocks'
import { renderMarkdown } from '../../src/modules/pages/blocks/markdown'
import { buildVCard, foldLine } from '../../src/modules/pages/blocks/vcard'
import { parseVideoUrl } from '../../src/modules/pages/blocks/video'

const ctx = (over: Partial<RenderContext> = {}): RenderContext => ({
  blockId: 'blk_1',
  trackedHref: (i) => (i === undefined ? '/_/b/blk_1' : `/_/b/blk_1?i=${i}`),
  linkUrl: (id) => (id === 'gone' ? null : `https://sho.rt/${id}`),
  primaryHeading: false,
  ...over,
})

const type = (name: string): BlockType => {
  const found = blockType(name)
  if (!found) throw new Error(`no block type ${name}`)
  return found
}
const valid = (name: string, fields: Record<string, unknown>) => validateFields(type(name), mergeDefaults(type(name), fields))
const render = (name: string, fields: Record<string, unknown> = {}, over: Partial<RenderContext> = {}) =>
  type(name).render(mergeDefaults(type(name), fields), ctx(over))
const paths = (issues: { path: string }[]) => issues.map((i) => i.path)

/** The tags a renderer may write; anything else in the output came from a field. */
const TAGS = new Set(['div', 'p', 'h1', 'h2', 'h3', 'img', 'a', 'ul', 'li', 'strong', 'em', 'code', 'br', 'hr', 'figure', 'figcaption', 'iframe', 'span'])

function expectInert(html: string) {
  expect(html).not.toMatch(/<\s*script/i)
  for (const tag of html.match(/<\/?[a-z][^>]*>/gi) ?? []) {
    expect(TAGS.has(/^<\/?([a-z0-9]+)/i.exec(tag)![1]!.toLowerCase())).toBe(true)
    // Attribute names only: quoted values are escaped text (a payload may sit inside an href, inert).
    const names = tag.replace(/"[^"]*"/g, '""')
    expect(names).not.toMatch(/\son[a-z]+\s*=/i)
    expect(names).not.toMatch(/\sstyle\s*=/i)
    expect(names).not.toMatch(/'/)
    for (const m of tag.matchAll(/\s(?:href|src)="([^"]*)"/gi)) {
      expect(m[1]!).not.toMatch(/^\s*(?:javascript|vbscript|file):/i)
      if (m[1]!.startsWith('data:')) expect(m[1]!).toStartWith('data:text/vcard;charset=utf-8,')
    }
  }
}

const PAYLOADS = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', 'javascript:alert(1)']

/** Every string in the fields, as [path, setter] pairs (list items included). */
function stringSlots(fields: Record<string, unknown>): ((f: Record<string, unknown>, v: string) => void)[] {
  const slots: ((f: Record<string, unknown>, v: string) => void)[] = []
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value === 'string' || value === null) slots.push((f, v) => (f[key] = v))
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        for (const [k, v] of Object.entries(item as Record<string, unknown>)) {
          if (typeof v === 'string') slots.push((f, x) => ((f[key] as Record<string, unknown>[])[i]![k] = x))
        }
      })
    }
  }
  return slots
}

describe('catalogue', () => {
  test('lists the ten types in catalogue order and finds them by name', () => {
    expect(BLOCK_TYPES.map((b) => b.type)).toEqual(['profile', 'heading', 'text', 'button', 'social_links', 'image', 'video', 'divider', 'spacer', 'contact'])
    expect(blockType('button')?.title).toBe('Button')
    expect(blockType('marquee')).toBeUndefined()
  })

  test('every schema is a closed, titled object with a description on every field', () => {
    const walk = (schema: Record<string, unknown>, where: string) => {
      expect(schema.additionalProperties, where).toBe(false)
      for (const [name, prop] of Object.entries(schema.properties as Record<string, Record<string, unknown>>)) {
        expect(typeof prop.description, `${where}.${name}`).toBe('string')
        const items = prop.items as Record<string, unknown> | undefined
        if (items?.type === 'object') walk(items, `${where}.${name}[]`)
        if (prop.type === 'string') expect(typeof prop.maxLength, `${where}.${name}`).toBe('number')
      }
    }
    for (const b of BLOCK_TYPES) {
      expect(b.schema.title).toBe(`BlockFields_${b.type}`)
      expect(b.schema.$id).toBeUndefined()
      walk(b.schema as Record<string, unknown>, b.type)
    }
  })

  test("every type's defaults validate alone and render without throwing", () => {
    for (const b of BLOCK_TYPES) {
      expect(validateFields(b, b.defaults), b.type).toEqual([])
      expect(typeof b.render(mergeDefaults(b), ctx()), b.type).toBe('string')
      expectInert(b.render(mergeDefaults(b), ctx()))
    }
  })

  test('schema issues carry slash paths, one per path, before any check', () => {
    const long = 'https://example.com/' + 'a'.repeat(2048)
    const items = [0, 1, 2].map(() => ({ network: 'website', url: 'https://example.com', label: '' }))
    items[2]!.url = long
    expect(paths(valid('social_links', { items }))).toEqual(['items/2/url'])
    expect(paths(valid('heading', { level: 1 }))).toEqual(['level'])
    expect(paths(valid('button', { colour: 'red' }))).toEqual(['colour'])
    expect(paths(validateFields(type('button'), 'not an object'))).toEqual([''])
    // A schema problem hides the checks: the label is too long, and the bad url is not reported yet.
    expect(paths(valid('button', { label: 'x'.repeat(81), url: 'ftp://example.com' }))).toEqual(['label'])
  })

  test('mergeDefaults overlays, ignores id, type and null, and never shares the defaults', () => {
    const b = type('social_links')
    const merged = mergeDefaults(b, { id: 'blk_x', type: 'button', items: null })
    expect(merged).toEqual(b.defaults)
    ;(merged.items as unknown[]).push('changed')
    expect((b.defaults.items as unknown[]).length).toBe(1)
    expect(mergeDefaults(type('button'), { label: 'Go' }).label).toBe('Go')
  })
})

describe('checks', () => {
  test('profile: the picture is https', () => {
    expect(paths(valid('profile', { avatarUrl: 'http://example.com/a.png' }))).toEqual(['avatarUrl'])
    expect(valid('profile', { avatarUrl: 'https://example.com/a.png' })).toEqual([])
  })

  test('text: links use http, https, mailto or tel', () => {
    expect(paths(valid('text', { markdown: 'see [this](javascript:alert(1))' }))).toEqual(['markdown'])
    expect(paths(valid('text', { markdown: '[a](data:text/html,x) and [b](vbscript:x)' }))).toEqual(['markdown', 'markdown'])
    expect(valid('text', { markdown: '[mail](mailto:a@example.com), [call](tel:+15550100), [web](https://example.com)' })).toEqual([])
    // Brackets that are not a link are prose, not a mistake; a code span shows its text as typed.
    expect(valid('text', { markdown: 'see note [1](see below) and `[x](javascript:y)`' })).toEqual([])
  })

  test('button: an http(s) url unless a workspace link is named', () => {
    for (const url of ['javascript:alert(1)', 'ftp://example.com', 'data:text/html,x', 'https://exa mple.com', 'https://']) {
      expect(paths(valid('button', { url })), url).toEqual(['url'])
    }
    expect(valid('button', { url: 'http://example.com/a?b=c' })).toEqual([])
    expect(valid('button', { url: 'javascript:alert(1)', linkId: '0190a1b2-0000-7000-8000-000000000000' })).toEqual([])
  })

  test("social links: each item's url is http(s), named by its index", () => {
    const items = [
      { network: 'github', url: 'https://example.com/me', label: '' },
      { network: 'x', url: 'javascript:alert(1)', label: '' },
    ]
    expect(paths(valid('social_links', { items }))).toEqual(['items/1/url'])
    items[1]!.url = 'https://example.com/x'
    expect(valid('social_links', { items })).toEqual([])
    expect(paths(valid('social_links', { items: [] }))).toEqual(['items'])
  })

  test('image: alt unless decorative, https source, http(s) link', () => {
    expect(paths(valid('image', { src: 'https://example.com/a.png', alt: '  ' }))).toEqual(['alt'])
    expect(valid('image', { src: 'https://example.com/a.png', alt: '', decorative: true })).toEqual([])
    expect(paths(valid('image', { src: 'http://example.com/a.png' }))).toEqual(['src'])
    expect(paths(valid('image', { src: 'data:image/png;base64,AAAA' }))).toEqual(['src'])
    expect(paths(valid('image', { url: 'javascript:alert(1)' }))).toEqual(['url'])
    expect(valid('image', { src: 'https://example.com/a.png', alt: 'A red door', url: 'https://example.com' })).toEqual([])
  })

  test('video: only the four services, named in the issue', () => {
    const issues = valid('video', { url: 'https://www.dailymotion.com/video/x7tgad0' })
    expect(paths(issues)).toEqual(['url'])
    for (const name of ['YouTube', 'Vimeo', 'Spotify', 'SoundCloud']) expect(issues[0]!.message).toContain(name)
    expect(valid('video', { url: 'https://youtu.be/dQw4w9WgXcQ' })).toEqual([])
  })

  test('contact: e-mail, phone and website', () => {
    expect(paths(valid('contact', { email: 'not an address', phone: 'call me', website: 'javascript:alert(1)' }))).toEqual(['email', 'phone', 'website'])
    expect(valid('contact', { email: 'a.b+c@example.co.uk', phone: '+44 (0)20 7946 0000', website: '' })).toEqual([])
  })
})

describe('rendering', () => {
  test("profile: <h1> only for the page's primary heading", () => {
    expect(render('profile', {}, { primaryHeading: true })).toContain('<h1 class="b-profile-name">Your name</h1>')
    expect(render('profile')).toContain('<h2 class="b-profile-name">Your name</h2>')
    const withPicture = render('profile', { avatarUrl: 'https://example.com/me.jpg', avatarAlt: '' })
    expect(withPicture).toContain('<img class="b-profile-avatar" src="https://example.com/me.jpg" alt=""')
    expect(render('profile', { avatarUrl: 'http://example.com/me.jpg' })).not.toContain('<img')
  })

  test('heading: level 2 or 3', () => {
    expect(render('heading', { text: 'Dates', level: 3 })).toBe('<h3 class="b-heading b-heading-3">Dates</h3>')
    expect(render('heading', { level: 1 })).toStartWith('<h2')
  })

  test('button: a workspace link through its short URL, a URL through the tracked redirect', () => {
    const b = type('button')
    const linked = mergeDefaults(b, { linkId: 'abc', label: 'Shop' })
    expect(b.render(linked, ctx())).toBe('<a class="b-button b-button-filled" href="https://sho.rt/abc">Shop</a>')
    expect(b.linkIds!(linked)).toEqual(['abc'])
    expect(b.outboundUrl!(linked, 0)).toBeNull()
    expect(b.render(mergeDefaults(b, { linkId: 'gone' }), ctx())).toBe('')
    const raw = mergeDefaults(b, { url: 'https://example.com/x', variant: 'outline' })
    expect(b.render(raw, ctx())).toBe('<a class="b-button b-button-outline" href="/_/b/blk_1">Visit my website</a>')
    expect(b.linkIds!(raw)).toEqual([])
    expect(b.outboundUrl!(raw, 0)).toBe('https://example.com/x')
    expect(b.outboundUrl!(raw, 1)).toBeNull()
    expect(b.outboundUrl!(mergeDefaults(b, { url: 'javascript:alert(1)' }), 0)).toBeNull()
  })

  test("social links: one tracked href per item, its index the outbound URL's", () => {
    const b = type('social_links')
    const fields = mergeDefaults(b, {
      items: [
        { network: 'github', url: 'https://example.com/gh', label: '' },
        { network: 'mastodon', url: 'https://example.com/@me', label: 'Fediverse' },
      ],
    })
    const html = b.render(fields, ctx())
    expect(html).toContain('<a class="b-social-link b-social-github" href="/_/b/blk_1?i=0">GitHub</a>')
    expect(html).toContain('<a class="b-social-link b-social-mastodon" href="/_/b/blk_1?i=1">Fediverse</a>')
    expect(b.outboundUrl!(fields, 1)).toBe('https://example.com/@me')
    expect(b.outboundUrl!(fields, 2)).toBeNull()
    // An unknown network (stored before a rename, say) is drawn as a plain link, never as a raw class name.
    expect(b.render({ items: [{ network: '"><x', url: 'https://example.com', label: '' }] }, ctx())).toContain('b-social-other')
  })

  test('image: alt, lazy loading, size, link and caption; nothing without a source', () => {
    expect(render('image')).toBe('')
    const html = render('image', {
      src: 'https://example.com/a.png',
      alt: 'A red door',
      width: 640,
      height: 480,
      caption: 'Our door',
      url: 'https://example.com',
    })
    expect(html).toBe(
      '<figure class="b-image"><a class="b-image-link" href="/_/b/blk_1"><img class="b-image-img" src="https://example.com/a.png" alt="A red door" ' +
        'width="640" height="480" loading="lazy"></a><figcaption class="b-image-caption">Our door</figcaption></figure>',
    )
    expect(render('image', { src: 'https://example.com/a.png', alt: 'ignored', decorative: true })).toContain('alt=""')
    expect(type('image').outboundUrl!(mergeDefaults(type('image'), { url: 'https://example.com/z' }), 0)).toBe('https://example.com/z')
  })

  test('video: a sandboxed, lazy, titled frame and a plain link to the original', () => {
    expect(render('video')).toBe('')
    const html = render('video', { url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1m5s', title: 'Music video' })
    expect(html).toContain('src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ?start=65"')
    expect(html).toContain('title="Music video"')
    expect(html).toContain('loading="lazy"')
    expect(html).toContain('sandbox="allow-scripts allow-same-origin allow-presentation allow-popups"')
    expect(html).toContain('referrerpolicy="strict-origin-when-cross-origin"')
    expect(html).toContain('<a class="b-video-link" href="https://www.youtube.com/watch?v=dQw4w9WgXcQ&#38;t=65s">Open on YouTube: Music video</a>')
    expect(html).toContain('b-video-wide')
    expect(render('video', { url: 'https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC' })).toContain('b-video-audio')
  })

  test('contact: mailto and tel links, a tracked website and a vCard download', () => {
    const html = render('contact', {
      name: 'Your name',
      email: 'you@example.com',
      phone: '+1 (555) 0100',
      website: 'https://example.com/about/',
      address: '1 Example Street\nYour town',
      title: 'Role',
      organisation: 'Org',
    })
    expect(html).toContain('<a class="b-contact-link" href="mailto:you@example.com">you@example.com</a>')
    expect(html).toContain('<a class="b-contact-link" href="tel:+15550100">+1 (555) 0100</a>')
    expect(html).toContain('<a class="b-contact-link" href="/_/b/blk_1">example.com/about</a>')
    expect(html).toContain('1 Example Street<br>Your town')
    expect(html).toContain('<p class="b-contact-role">Role · Org</p>')
    const save = /<a class="b-contact-save" href="([^"]+)" download="your-name.vcf">Save contact<\/a>/.exec(html)
    expect(save).not.toBeNull()
    const prefix = 'data:text/vcard;charset=utf-8,'
    expect(save![1]!).toStartWith(prefix)
    const card = decodeURIComponent(save![1]!.slice(prefix.length))
    expect(card).toContain('FN:Your name\r\n')
    expect(card).toContain('TEL;TYPE=VOICE:+1 (555) 0100\r\n')
    expect(card).toContain('ADR;TYPE=WORK:;;1 Example Street\\nYour town;;;;\r\n')
    expect(type('contact').outboundUrl!(mergeDefaults(type('contact'), { website: 'https://example.com/about/' }), 0)).toBe('https://example.com/about/')
    expect(render('contact', { saveButton: false })).not.toContain('b-contact-save')
  })

  test('divider and spacer are decoration', () => {
    expect(render('divider', { variant: 'dots' })).toBe('<hr class="b-divider b-divider-dots" aria-hidden="true">')
    expect(render('spacer', { size: 'large' })).toBe('<div class="b-spacer b-spacer-large" aria-hidden="true"></div>')
    expect(render('spacer', { size: '"><script>' })).toContain('b-spacer-medium')
  })
})

describe('XSS payloads render inert', () => {
  for (const b of BLOCK_TYPES) {
    test(b.type, () => {
      const slots = stringSlots(b.defaults)
      if (b.type !== 'divider' && b.type !== 'spacer') expect(slots.length).toBeGreaterThan(0)
      for (const payload of PAYLOADS) {
        // One field at a time, so a field that hides the others (an invalid url) hides nothing.
        for (const set of slots) {
          const fields = mergeDefaults(b)
          set(fields, payload)
          const html = b.render(fields, ctx({ primaryHeading: true }))
          expectInert(html)
          expect(html).not.toContain('<img src=x')
        }
        const all = mergeDefaults(b)
        for (const set of slots) set(all, payload)
        expectInert(b.render(all, ctx()))
        for (let i = 0; i < 3; i++) expect(b.outboundUrl?.(all, i) ?? null).toBeNull()
      }
    })
  }

  test('the payloads show as text, escaped', () => {
    expect(render('heading', { text: PAYLOADS[0] })).toContain('&#60;script&#62;alert(1)&#60;/script&#62;')
    expect(render('text', { markdown: PAYLOADS[1] })).toBe('<div class="b-text"><p>&#34;&#62;&#60;img src=x onerror=alert(1)&#62;</p></div>')
  })

  test('URL fields refuse javascript:, data:, vbscript: and file:', () => {
    const urlFields: [string, Record<string, unknown>][] = [
      ['profile', { avatarUrl: '' }],
      ['button', { url: '' }],
      ['image', { src: '' }],
      ['image', { url: '' }],
      ['video', { url: '' }],
      ['contact', { website: '' }],
    ]
    for (const scheme of [
      'javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'JaVaScRiPt:alert(1)',
      ' javascript:alert(1)',
    ]) {
      for (const [name, f] of urlFields) {
        const key = Object.keys(f)[0]!
        expect(paths(valid(name, { [key]: scheme })), `${name}.${key} ${scheme}`).toEqual([key])
      }
    }
  })
})

describe('markdown', () => {
  const md = (s: string) => renderMarkdown(s)

  test('paragraphs and line breaks', () => {
    expect(md('one\ntwo\n\nthree')).toBe('<p>one<br>two</p><p>three</p>')
    expect(md('a\r\n\r\n\r\nb')).toBe('<p>a</p><p>b</p>')
    expect(md('')).toBe('')
  })

  test('bold, italic and code', () => {
    expect(md('**bold** and *italic* and `x < y`')).toBe('<p><strong>bold</strong> and <em>italic</em> and <code>x &#60; y</code></p>')
    expect(md('*an **inner** word*')).toBe('<p><em>an <strong>inner</strong> word</em></p>')
    expect(md('`**not bold**`')).toBe('<p><code>**not bold**</code></p>')
  })

  test('links with allowed schemes only', () => {
    expect(md('[site](https://example.com/a?b=1&c=2)')).toBe('<p><a class="b-text-link" href="https://example.com/a?b=1&#38;c=2">site</a></p>')
    expect(md('[**mail**](mailto:a@example.com)')).toBe('<p><a class="b-text-link" href="mailto:a@example.com"><strong>mail</strong></a></p>')
    expect(md('[x](javascript:alert(1))')).toBe('<p>[x](javascript:alert(1))</p>')
    expect(md('[x](data:text/html,hi)')).toBe('<p>[x](data:text/html,hi)</p>')
    expect(md('[[nested](https://example.com)]')).toBe('<p>[<a class="b-text-link" href="https://example.com">nested</a>]</p>')
  })

  test('bullet lists', () => {
    expect(md('Intro\n- one\n- **two**\n\nAfter')).toBe('<p>Intro</p><ul class="b-text-list"><li>one</li><li><strong>two</strong></li></ul><p>After</p>')
  })

  test('unknown syntax stays literal', () => {
    expect(md('# Not a heading')).toBe('<p># Not a heading</p>')
    expect(md('2 * 3 * 4')).toBe('<p>2 * 3 * 4</p>')
    expect(md('**unclosed')).toBe('<p>**unclosed</p>')
    expect(md('<b>raw</b> &amp;')).toBe('<p>&#60;b&#62;raw&#60;/b&#62; &#38;amp;</p>')
    expect(md('1. first\n* star')).toBe('<p>1. first<br>* star</p>')
    expect(md('![img](https://example.com/a.png)')).toBe('<p>!<a class="b-text-link" href="https://example.com/a.png">img</a></p>')
  })
})

describe('video addresses', () => {
  const cases: [string, string | null][] = [
    ['https://www.youtube.com/watch?v=dQw4w9WgXcQ', 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ'],
    ['https://m.youtube.com/watch?feature=share&v=dQw4w9WgXcQ', 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ'],
    ['https://youtu.be/dQw4w9WgXcQ?t=42', 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ?start=42'],
    ['https://www.youtube.com/shorts/dQw4w9WgXcQ', 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ'],
    ['https://vimeo.com/76979871', 'https://player.vimeo.com/video/76979871'],
    ['https://vimeo.com/76979871/abcdef1234', 'https://player.vimeo.com/video/76979871?h=abcdef1234'],
    ['https://open.spotify.com/album/1DFixLWuPkv3KT3TnV35m3', 'https://open.spotify.com/embed/album/1DFixLWuPkv3KT3TnV35m3'],
    ['https://open.spotify.com/intl-de/track/4uLU6hMCjMI75M1A2tKUQC?si=x', 'https://open.spotify.com/embed/track/4uLU6hMCjMI75M1A2tKUQC'],
    ['https://open.spotify.com/show/2mTUnDkuKUkhiueKcVWoP0', 'https://open.spotify.com/embed/show/2mTUnDkuKUkhiueKcVWoP0'],
    ['https://soundcloud.com/some-artist/some-track', 'https://w.soundcloud.com/player/?url=https%3A%2F%2Fsoundcloud.com%2Fsome-artist%2Fsome-track'],
    ['https://www.youtube.com/watch?v=short', null],
    ['https://www.youtube.com/channel/UC123', null],
    ['https://youtube.com.evil.example/watch?v=dQw4w9WgXcQ', null],
    ['https://evil.example/?u=https://youtu.be/dQw4w9WgXcQ', null],
    ['https://open.spotify.com/artist/0OdUWJ0sBjDrqHygGUXeCF', null],
    ['https://soundcloud.com/some-artist', null],
    ['https://vimeo.com/about', null],
    ['javascript:alert(1)//youtu.be/dQw4w9WgXcQ', null],
    ['', null],
  ]
  for (const [url, embed] of cases) {
    test(url || '(empty)', () => {
      expect(parseVideoUrl(url)?.embedUrl ?? null).toBe(embed)
    })
  }
})

describe('vCard', () => {
  test('escapes backslashes, commas, semicolons and newlines in text values', () => {
    const card = buildVCard({ name: 'Doe, Jane; "J"', organisation: 'A\\B', note: 'line one\nline two\r\nthree', email: 'jane@example.com' })
    expect(card).toStartWith('BEGIN:VCARD\r\nVERSION:3.0\r\n')
    expect(card).toEndWith('END:VCARD\r\n')
    expect(card).toContain('FN:Doe\\, Jane\\; "J"\r\n')
    expect(card).toContain('N:;Doe\\, Jane\\; "J";;;\r\n')
    expect(card).toContain('ORG:A\\\\B\r\n')
    expect(card).toContain('NOTE:line one\\nline two\\nthree\r\n')
    expect(card).not.toContain('TEL')
    expect(
      card
        .split('\r\n')
        .slice(0, -1)
        .every((l) => !l.includes('\n')),
    ).toBe(true)
  })

  test('folds long lines at 75 octets without splitting a character', () => {
    const note = 'é'.repeat(100) + 'x'.repeat(50)
    const card = buildVCard({ name: 'A', note })
    const physical = card.split('\r\n')
    for (const line of physical) expect(new TextEncoder().encode(line).length).toBeLessThanOrEqual(75)
    const unfolded = card.replace(/\r\n /g, '')
    expect(unfolded).toContain(`NOTE:${note}\r\n`)
    expect(foldLine('short')).toBe('short')
  })
})
