// What a built-in template is: a page to start from, as data compiled into the binary. Blocks name only the
// fields that differ from their type's defaults; buildTemplateSections() fills in the rest.
import type { SectionLayout, Theme } from '../tree'

export const TEMPLATE_CATEGORIES = ['personal', 'music', 'commerce', 'business', 'events', 'apps', 'announcements'] as const
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number]

export interface TemplateBlock {
  type: string
  /** Merged over the type's defaults. */
  fields: Record<string, unknown>
}

export interface TemplateSection {
  layout: SectionLayout
  /** One list of blocks per column of the layout, left to right. */
  columns: { blocks: TemplateBlock[] }[]
}

export interface Template {
  slug: string
  name: string
  description: string
  category: TemplateCategory
  tags: string[]
  theme: Theme
  /** The title a page made from the template starts with. */
  title: string
  /** BCP 47; English when absent. */
  lang?: string
  sections: TemplateSection[]
}

export const block = (type: string, fields: Record<string, unknown> = {}): TemplateBlock => ({ type, fields })

/** A section whose columns hold the given blocks, left to right. */
export const section = (layout: SectionLayout, ...columns: TemplateBlock[][]): TemplateSection => ({
  layout,
  columns: columns.map((blocks) => ({ blocks })),
})
