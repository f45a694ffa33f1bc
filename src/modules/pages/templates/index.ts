// The built-in templates (compiled in, listed publicly) and what a page made from one starts with.
import { blockType, mergeDefaults } from '../blocks'
import { LAYOUT_WIDTHS, type SectionLayout } from '../tree'
import { appDownload } from './builtin/app-download'
import { businessCard } from './builtin/business-card'
import { creatorShop } from './builtin/creator-shop'
import { event } from './builtin/event'
import { leavingNotice } from './builtin/leaving-notice'
import { linkInBio } from './builtin/link-in-bio'
import { localBusiness } from './builtin/local-business'
import { musicianRelease } from './builtin/musician-release'
import type { Template } from './template'

export { TEMPLATE_CATEGORIES, type Template, type TemplateBlock, type TemplateCategory, type TemplateSection } from './template'

export const BUILTIN_TEMPLATES: readonly Template[] = [linkInBio, musicianRelease, creatorShop, businessCard, localBusiness, event, appDownload, leavingNotice]

const BY_SLUG = new Map(BUILTIN_TEMPLATES.map((t) => [t.slug, t]))

export const findTemplate = (slug: string): Template | undefined => BY_SLUG.get(slug)

export interface TemplateQuery {
  category?: string
  tag?: string
  /** Matches name, description and tags, ignoring case. */
  q?: string
  limit?: number
  offset?: number
}

export function listTemplates(query: TemplateQuery = {}): { items: Template[]; total: number } {
  const q = query.q?.trim().toLowerCase()
  const tag = query.tag?.trim().toLowerCase()
  const matches = BUILTIN_TEMPLATES.filter(
    (t) =>
      (!query.category || t.category === query.category) &&
      (!tag || t.tags.some((x) => x.toLowerCase() === tag)) &&
      (!q || [t.name, t.description, ...t.tags].some((s) => s.toLowerCase().includes(q))),
  )
  const offset = Math.max(0, query.offset ?? 0)
  const limit = Math.max(0, query.limit ?? matches.length)
  return { items: matches.slice(offset, offset + limit), total: matches.length }
}

export interface BuiltSection {
  layout: SectionLayout
  columns: { width: number; blocks: { type: string; fields: Record<string, unknown> }[] }[]
}

/** The template's sections with column widths and every block's fields complete (defaults merged), without ids. */
export function buildTemplateSections(t: Template): BuiltSection[] {
  return t.sections.map((s) => ({
    layout: s.layout,
    columns: LAYOUT_WIDTHS[s.layout].map((width, i) => ({
      width,
      blocks: (s.columns[i]?.blocks ?? []).map((b) => {
        const type = blockType(b.type)
        // Templates are code: an unknown type is a programming error the templates test catches.
        if (!type) throw new Error(`template ${t.slug}: unknown block type ${b.type}`)
        return { type: b.type, fields: mergeDefaults(type, b.fields) }
      }),
    })),
  }))
}
