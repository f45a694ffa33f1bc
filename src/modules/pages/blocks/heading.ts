// Heading: a section title. Level 2 or 3 only: the page's one <h1> is the profile's (or the page title's).
// Classes: b-heading, b-heading-2, b-heading-3.
import { t, type Static } from 'elysia'
import { esc, fieldsSchema, text } from './fields'
import type { BlockType } from './types'

const schema = fieldsSchema(
  'heading',
  {
    text: t.String({ minLength: 1, maxLength: 200, description: 'The heading text' }),
    level: t.Union([t.Literal(2), t.Literal(3)], { description: '2 for a section title, 3 for a title inside a section' }),
  },
  'A section title',
)
export type HeadingFields = Static<typeof schema>

export const heading: BlockType<HeadingFields> = {
  type: 'heading',
  title: 'Heading',
  description: 'A section title (level 2 or 3).',
  schema,
  defaults: { text: 'Section title', level: 2 },
  render(f) {
    const level = f.level === 3 ? 3 : 2
    return `<h${level} class="b-heading b-heading-${level}">${esc(text(f.text))}</h${level}>`
  },
}
