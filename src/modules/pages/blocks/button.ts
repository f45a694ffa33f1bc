// Button: a call to action. With `linkId` it leads to that workspace link through its short URL (so the
// link's own rules and analytics apply); otherwise to `url` through the page's tracked redirect
// (/_/b/{blockId}), which counts the click. A raw URL never appears in the page.
// Classes: b-button, b-button-filled, b-button-outline.
import { t, type Static } from 'elysia'
import { esc, fieldsSchema, safeUrl, text, UrlString, urlIssue } from './fields'
import type { BlockType } from './types'

const schema = fieldsSchema(
  'button',
  {
    label: t.String({ minLength: 1, maxLength: 80, description: 'The text on the button' }),
    url: UrlString('Where the button leads (http or https), used when linkId is null'),
    linkId: t.Union([t.String({ minLength: 1, maxLength: 64 }), t.Null()], {
      description: 'A link of the workspace to lead to through its short URL; when set it wins over url. null: use url',
    }),
    variant: t.Union([t.Literal('filled'), t.Literal('outline')], { description: 'filled: the accent colour; outline: an accent border' }),
  },
  'A button leading to a workspace link or a URL',
)
export type ButtonFields = Static<typeof schema>

export const button: BlockType<ButtonFields> = {
  type: 'button',
  title: 'Button',
  description: 'A button leading to a link of the workspace (through its short URL) or to a URL (clicks are counted).',
  schema,
  defaults: { label: 'Visit my website', url: 'https://example.com', linkId: null, variant: 'filled' },
  check: (f) => (f.linkId ? [] : urlIssue('url', f.url)),
  render(f, ctx) {
    const href = f.linkId ? ctx.linkUrl(f.linkId) : ctx.trackedHref()
    // A button whose link is gone leads nowhere: visitors see nothing rather than a dead control.
    if (!href) return ''
    const variant = f.variant === 'outline' ? 'outline' : 'filled'
    return `<a class="b-button b-button-${variant}" href="${esc(href)}">${esc(text(f.label))}</a>`
  },
  linkIds: (f) => (f.linkId ? [f.linkId] : []),
  outboundUrl: (f, index) => (index === 0 && !f.linkId ? safeUrl(f.url) : null),
}
