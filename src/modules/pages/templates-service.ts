// Templates: the public catalogue of built-ins (compiled into the binary) and a workspace's saved ones. A
// page made from either starts with the template's theme, title and a copy of its sections with new ids.
import { iso } from '../../platform/clock'
import type { Issues } from '../../platform/errors'
import type { CreatePageInput } from './model'
import { savedTemplateNotFound, templateNotFound } from './errors'
import type { PagesRepo, SavedTemplateRow } from './port'
import { buildTemplateSections, findTemplate, listTemplates, type Template } from './templates'
import type { BareSections, Theme } from './tree'
import type { Deps } from '../../context'
import type { Caller } from '../identity'

type Ctx = Deps & { pages: PagesRepo }
type Who = Pick<Caller, 'workspace' | 'mode'>

const blocksIn = (sections: BareSections) => sections.reduce((n, s) => n + s.columns.reduce((m, c) => m + c.blocks.length, 0), 0)

function summary(t: Template, sections: BareSections) {
  return { slug: t.slug, name: t.name, description: t.description, category: t.category, tags: t.tags, blockCount: blocksIn(sections) }
}

export function listPublicTemplates(q: { category?: string; tag?: string; q?: string; limit: number; offset: number }) {
  const { items, total } = listTemplates(q)
  return {
    items: items.map((t) => summary(t, buildTemplateSections(t))),
    pagination: { page: Math.floor(q.offset / q.limit) + 1, perPage: q.limit, total, totalPages: Math.ceil(total / q.limit) },
  }
}

export function getPublicTemplate(slug: string) {
  const t = findTemplate(slug)
  if (!t) throw templateNotFound(slug)
  const sections = buildTemplateSections(t)
  return { ...summary(t, sections), title: t.title, lang: t.lang ?? 'en', theme: t.theme, sections }
}

export interface PageStart {
  title: string
  lang: string
  theme: Theme
  sections: BareSections
  templateSlug: string | null
  savedTemplateId: string | null
}

/** What a new page starts from: a built-in template, a saved one, or nothing. */
export async function resolveTemplate(
  ctx: Ctx,
  caller: Who,
  input: Pick<CreatePageInput, 'templateSlug' | 'savedTemplateId'>,
  issues: Issues,
): Promise<PageStart | null> {
  if (input.templateSlug !== undefined && input.savedTemplateId !== undefined) {
    issues.add('savedTemplateId', 'give templateSlug or savedTemplateId, not both')
    return null
  }
  if (input.templateSlug !== undefined) {
    const t = findTemplate(input.templateSlug)
    if (!t) {
      issues.add('templateSlug', `"${input.templateSlug}" is not a template; GET /templates lists them`)
      return null
    }
    return { title: t.title, lang: t.lang ?? 'en', theme: t.theme, sections: buildTemplateSections(t), templateSlug: t.slug, savedTemplateId: null }
  }
  if (input.savedTemplateId !== undefined) {
    const saved = await ctx.pages.findSavedTemplate(caller.workspace.id, input.savedTemplateId)
    if (!saved) {
      issues.add('savedTemplateId', `${input.savedTemplateId} is not a saved template of this workspace; GET /saved-templates lists them`)
      return null
    }
    return { title: saved.title, lang: saved.lang, theme: saved.theme, sections: saved.sections, templateSlug: null, savedTemplateId: saved.id }
  }
  return null
}

export function toSaved(row: SavedTemplateRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    sourcePageId: row.sourcePageId,
    title: row.title,
    lang: row.lang,
    theme: row.theme,
    sections: row.sections,
    blockCount: blocksIn(row.sections),
    createdAt: iso(row.createdAt),
  }
}

export async function listSavedTemplates(ctx: Ctx, caller: Who) {
  return (await ctx.pages.listSavedTemplates(caller.workspace.id)).map(toSaved)
}

export async function deleteSavedTemplate(ctx: Ctx, caller: Who, id: string) {
  if (!(await ctx.pages.deleteSavedTemplate(caller.workspace.id, id))) throw savedTemplateNotFound(id)
  return { id, deleted: true as const }
}
