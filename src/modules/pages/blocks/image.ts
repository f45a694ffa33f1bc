// Image: a picture with its alternative text, optionally a link (through the page's tracked redirect) and
// a caption. An empty src renders nothing, so a template can hold the place without loading anything.
// Classes: b-image, b-image-img, b-image-link, b-image-caption.
import { t, type Static } from 'elysia'
import { esc, fieldsSchema, imageUrlIssue, safeHttpsUrl, safeUrl, text, urlIssue } from './fields'
import type { BlockType, FieldIssue } from './types'

const Dimension = (what: string) =>
  t.Union([t.Integer({ minimum: 1, maximum: 10000 }), t.Null()], {
    description: `The picture's ${what} in pixels, so the page does not jump while it loads; null when unknown`,
  })

const schema = fieldsSchema(
  'image',
  {
    src: t.String({ maxLength: 2048, description: 'An https URL of the picture; empty: nothing is shown yet' }),
    alt: t.String({ maxLength: 300, description: 'What the picture shows, for people who cannot see it; required unless decorative' }),
    decorative: t.Boolean({ description: 'true when the picture adds nothing to the text around it (it gets an empty alt)' }),
    width: Dimension('width'),
    height: Dimension('height'),
    caption: t.String({ maxLength: 300, description: 'A line under the picture; empty for none' }),
    url: t.Union([t.String({ minLength: 1, maxLength: 2048 }), t.Null()], {
      description: 'Where the picture leads when clicked (http or https); null: not a link',
    }),
  },
  'A picture with its alternative text',
)
export type ImageFields = Static<typeof schema>

export const image: BlockType<ImageFields> = {
  type: 'image',
  title: 'Image',
  description: 'A picture (https) with alternative text, an optional caption and an optional link.',
  schema,
  defaults: { src: '', alt: 'Describe what the picture shows', decorative: false, width: null, height: null, caption: '', url: null },
  check(f) {
    const issues: FieldIssue[] = []
    if (f.src) issues.push(...imageUrlIssue('src', f.src))
    if (!f.decorative && !f.alt.trim()) issues.push({ path: 'alt', message: 'Describe the picture, or set decorative to true' })
    if (f.url !== null) issues.push(...urlIssue('url', f.url))
    return issues
  },
  render(f, ctx) {
    const src = safeHttpsUrl(f.src)
    if (!src) return ''
    const alt = f.decorative ? '' : text(f.alt)
    const size = Number.isInteger(f.width) && Number.isInteger(f.height) ? ` width="${f.width}" height="${f.height}"` : ''
    let img = `<img class="b-image-img" src="${esc(src)}" alt="${esc(alt)}"${size} loading="lazy">`
    if (safeUrl(f.url)) img = `<a class="b-image-link" href="${esc(ctx.trackedHref())}">${img}</a>`
    const caption = text(f.caption) ? `<figcaption class="b-image-caption">${esc(text(f.caption))}</figcaption>` : ''
    return `<figure class="b-image">${img}${caption}</figure>`
  },
  outboundUrl: (f, index) => (index === 0 ? safeUrl(f.url) : null),
}
