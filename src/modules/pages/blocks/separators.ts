// Divider and spacer: room between blocks. Both are decoration, hidden from assistive technology.
// Classes: b-divider, b-divider-line, b-divider-dots; b-spacer, b-spacer-small, b-spacer-medium, b-spacer-large.
import { t, type Static } from 'elysia'
import { fieldsSchema } from './fields'
import type { BlockType } from './types'

const dividerSchema = fieldsSchema(
  'divider',
  { variant: t.Union([t.Literal('line'), t.Literal('dots')], { description: 'line: a thin rule; dots: three spaced dots' }) },
  'A horizontal rule between blocks',
)
export type DividerFields = Static<typeof dividerSchema>

export const divider: BlockType<DividerFields> = {
  type: 'divider',
  title: 'Divider',
  description: 'A thin rule or a row of dots between blocks.',
  schema: dividerSchema,
  defaults: { variant: 'line' },
  render: (f) => `<hr class="b-divider b-divider-${f.variant === 'dots' ? 'dots' : 'line'}" aria-hidden="true">`,
}

const SIZES = ['small', 'medium', 'large'] as const
const spacerSchema = fieldsSchema(
  'spacer',
  {
    size: t.Union(
      SIZES.map((s) => t.Literal(s)),
      { description: 'small (1rem), medium (2rem) or large (4rem) of empty space' },
    ),
  },
  'Empty vertical space',
)
export type SpacerFields = Static<typeof spacerSchema>

export const spacer: BlockType<SpacerFields> = {
  type: 'spacer',
  title: 'Spacer',
  description: 'Empty vertical space.',
  schema: spacerSchema,
  defaults: { size: 'medium' },
  render: (f) => `<div class="b-spacer b-spacer-${SIZES.includes(f.size) ? f.size : 'medium'}" aria-hidden="true"></div>`,
}
