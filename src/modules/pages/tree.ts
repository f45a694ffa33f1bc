// The shape of a bridge page as the catalogue, the templates, the renderer and the service share it: a page
// holds sections, a section holds columns whose widths sum to 12, a column holds blocks in order.
export const SECTION_LAYOUTS = ['full', '1-1', '2-1', '1-2', '1-1-1'] as const
export type SectionLayout = (typeof SECTION_LAYOUTS)[number]

/** The column widths (of 12) each layout has, left to right. */
export const LAYOUT_WIDTHS: Record<SectionLayout, number[]> = {
  full: [12],
  '1-1': [6, 6],
  '2-1': [8, 4],
  '1-2': [4, 8],
  '1-1-1': [4, 4, 4],
}

/** Colours as #rrggbb. `dark` is what a visitor who prefers a dark scheme sees. */
export interface ThemeColors {
  background: string
  text: string
  /** Buttons' fill and the colour of links in text. */
  accent: string
  /** Text on an accent fill. */
  accentText: string
}

export interface Theme {
  light: ThemeColors
  dark: ThemeColors
  font: 'system' | 'serif' | 'mono'
  buttonShape: 'rounded' | 'pill' | 'square'
}

export interface TreeBlock {
  id: string
  type: string
  fields: Record<string, unknown>
}

export interface TreeColumn {
  id: string
  width: number
  blocks: TreeBlock[]
}

export interface TreeSection {
  id: string
  layout: SectionLayout
  columns: TreeColumn[]
}

/** Everything the renderer needs to draw a page. */
export interface PageTree {
  title: string
  description: string | null
  /** BCP 47 tag for <html lang>. */
  lang: string
  theme: Theme
  ogImageUrl: string | null
  sections: TreeSection[]
}

/** A layout without ids, as built-in and saved templates hold it. */
export type BareSections = { layout: SectionLayout; columns: { width: number; blocks: { type: string; fields: Record<string, unknown> }[] }[] }[]
