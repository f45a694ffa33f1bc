// Text: a few paragraphs in a small Markdown subset (see markdown.ts for what it understands).
// Classes: b-text, and inside it b-text-link (links) and b-text-list (bullet lists).
import { t, type Static } from 'elysia'
import { fieldsSchema, text as plain } from './fields'
import { markdownLinkIssues, renderMarkdown } from './markdown'
import type { BlockType } from './types'

const schema = fieldsSchema(
  'text',
  {
    markdown: t.String({
      minLength: 1,
      maxLength: 5000,
      description:
        'Paragraphs separated by a blank line; a single newline is a line break; **bold**, *italic*, `code`, [label](https://…) links (http, https, ' +
        'mailto, tel) and lines starting with "- " as a bullet list. Anything else shows as typed.',
    }),
  },
  'Paragraphs of text with a little formatting',
)
export type TextFields = Static<typeof schema>

export const text: BlockType<TextFields> = {
  type: 'text',
  title: 'Text',
  description: 'Paragraphs with bold, italic, code, links and bullet lists (a small Markdown subset).',
  schema,
  defaults: { markdown: 'Say a little more here. **Bold**, *italic* and [links](https://example.com) work.' },
  check: (f) => markdownLinkIssues('markdown', f.markdown),
  render: (f) => `<div class="b-text">${renderMarkdown(plain(f.markdown))}</div>`,
}
