// Tags as resources (contract 7.3): list with link counts, create, rename or recolour, delete. Tags belong to
// the workspace, shared by its live and test links: every key lists them (counting the links of its mode), a
// test key may create one (its test links do too), and only a live key changes or deletes one, since a rename
// or deletion rewrites live links. A key with tag scope filters sees and touches only those tags; a key limited
// to some domains or folders cannot rename or delete (that reaches links in every domain and folder).
import type { Deps } from '../../context'
import { newId } from '../../platform/random'
import { type Caller, listedMode, type ModeFilter } from '../identity'
import { blankTagName, tagChangeNeedsLiveKey, tagExists, tagNotFound, tagOutOfScope } from './errors'
import type { CreateTagInput, TagView, UpdateTagInput } from './model'
import type { CountFilter, TagRow, TagsRepo } from './port'
import { tagData, toTag } from './view'

export interface TagsCtx extends Deps {
  tags: TagsRepo
}

export interface TagListQuery {
  page: number
  perPage: number
  mode?: ModeFilter
}

const tagScope = (caller: Caller) => (caller.key.scopeFilters?.tags?.length ? caller.key.scopeFilters.tags : undefined)
const domainScope = (caller: Caller) => (caller.key.scopeFilters?.domains?.length ? caller.key.scopeFilters.domains : undefined)
const folderScope = (caller: Caller) => (caller.key.scopeFilters?.folders?.length ? caller.key.scopeFilters.folders : undefined)
/** Why a key limited to some links may not rewrite a tag on all of them, or null when it may. */
const partialScope = (caller: Caller) => (domainScope(caller) ? 'domain' : folderScope(caller) ? 'folder' : null)

/** The links a caller's linkCount counts: those of the listed mode, on its scoped domains, in its scoped folders. */
function countFilter(caller: Caller, mode: ModeFilter | undefined): CountFilter {
  const listed = listedMode(caller, mode, 'links')
  return { isTest: listed === undefined ? undefined : listed === 'test', domains: domainScope(caller), folders: folderScope(caller) }
}

async function withCount(ctx: TagsCtx, caller: Caller, row: TagRow): Promise<TagView> {
  const counts = await ctx.tags.counts(caller.workspace.id, [row.name], countFilter(caller, undefined))
  return toTag(row, counts.get(row.name) ?? 0)
}

/** Trimmed like a link's tag names (links/fields.ts), so a tag and a link's tag of one spelling are one. */
function cleanName(name: string): string {
  const trimmed = name.trim()
  if (!trimmed) throw blankTagName()
  return trimmed
}

const cleanColor = (color: string | null | undefined) => (typeof color === 'string' ? color.toLowerCase() : color)

export async function listTags(ctx: TagsCtx, caller: Caller, q: TagListQuery) {
  const filter = countFilter(caller, q.mode)
  const { rows, total } = await ctx.tags.list(caller.workspace.id, tagScope(caller), q.page, q.perPage)
  const counts = await ctx.tags.counts(
    caller.workspace.id,
    rows.map((r) => r.name),
    filter,
  )
  const items = rows.map((r) => toTag(r, counts.get(r.name) ?? 0))
  return { items, pagination: { page: q.page, perPage: q.perPage, total, totalPages: Math.ceil(total / q.perPage) } }
}

export async function createTag(ctx: TagsCtx, caller: Caller, input: CreateTagInput): Promise<TagView> {
  const name = cleanName(input.name)
  const scope = tagScope(caller)
  if (scope && !scope.includes(name)) throw tagOutOfScope(`"${name}" is outside the key's tag scope filters`)
  const now = ctx.clock.now()
  const row: TagRow = { id: newId('tag'), workspaceId: caller.workspace.id, name, color: cleanColor(input.color) ?? null, createdAt: now, updatedAt: now }
  const created = await ctx.tags.create(row, (r) => ({ type: 'tag.created', workspaceId: r.workspaceId, mode: caller.mode, data: tagData(r) }), now)
  if (created === 'exists') throw tagExists(name)
  return withCount(ctx, caller, created)
}

/** A tag of the caller's workspace that the caller may change. */
async function findForChange(ctx: TagsCtx, caller: Caller, id: string): Promise<TagRow> {
  if (caller.mode === 'test') throw tagChangeNeedsLiveKey()
  const row = await ctx.tags.find(caller.workspace.id, id)
  if (!row) throw tagNotFound(id)
  const scope = tagScope(caller)
  if (scope && !scope.includes(row.name)) throw tagOutOfScope(`The tag "${row.name}" is outside the key's tag scope filters`)
  return row
}

export async function updateTag(ctx: TagsCtx, caller: Caller, id: string, body: UpdateTagInput): Promise<TagView> {
  const current = await findForChange(ctx, caller, id)
  const name = body.name === undefined ? undefined : cleanName(body.name)
  const renamed = name !== undefined && name !== current.name
  if (renamed) {
    const scope = tagScope(caller)
    if (scope && !scope.includes(name)) throw tagOutOfScope(`"${name}" is outside the key's tag scope filters`)
    const partial = partialScope(caller)
    if (partial) throw tagOutOfScope(`A rename reaches links in every ${partial}, beyond the key's ${partial} scope filters`)
  }
  const color = cleanColor(body.color)
  // Nothing to change: no write, no event.
  if (!renamed && (color === undefined || color === current.color)) return withCount(ctx, caller, current)
  const now = ctx.clock.now()
  const changes = Object.keys(body)
  const outcome = await ctx.tags.update(
    caller.workspace.id,
    current.id,
    { name, color },
    (o) => ({
      type: 'tag.updated',
      workspaceId: o.after.workspaceId,
      mode: caller.mode,
      data: { ...tagData(o.after), changes, previousName: o.before.name, linksChanged: o.linksChanged },
    }),
    now,
  )
  if (outcome === 'exists') throw tagExists(name!)
  if (!outcome) throw tagNotFound(id)
  return withCount(ctx, caller, outcome.after)
}

export async function deleteTag(ctx: TagsCtx, caller: Caller, id: string) {
  const current = await findForChange(ctx, caller, id)
  const partial = partialScope(caller)
  if (partial) throw tagOutOfScope(`Deleting a tag reaches links in every ${partial}, beyond the key's ${partial} scope filters`)
  const outcome = await ctx.tags.delete(
    caller.workspace.id,
    current.id,
    (o) => ({ type: 'tag.deleted', workspaceId: o.before.workspaceId, mode: caller.mode, data: { ...tagData(o.before), linksChanged: o.linksChanged } }),
    ctx.clock.now(),
  )
  if (!outcome) throw tagNotFound(id)
  return { id: current.id, deleted: true as const, linksChanged: outcome.linksChanged }
}
