// Bridge pages and their blocks (spec 4.4): plain functions shared by HTTP and tests. Every change is
// computed on a copy of the page's tree and written whole, guarded by the page's version (repo.save), so a
// change is all or nothing and concurrent editors never lose each other's work; the serving cache hears of
// it on the bus after the commit.
import type { Deps } from '../../context'
import type { EventBus } from '../../events/bus'
import type { PublishInput } from '../../events/outbox'
import { iso } from '../../platform/clock'
import { Issues } from '../../platform/errors'
import type { KeyedQueue } from '../../platform/keyed-queue'
import { newId, randomId } from '../../platform/random'
import { slugify } from '../../platform/slugify'
import { domainOutOfScope, inDomainScope, unusableDomainMessage, usableDomain, type ServedDomains } from '../domains'
import { type Caller, listedMode, sandboxHides, type ModeFilter } from '../identity'
import { shortUrl } from '../links/model'
import { BLOCK_TYPES, blockType, mergeDefaults, validateFields } from './blocks'
import type { BlockType } from './blocks/types'
import { blockFieldsInvalid, blockNotFound, blockTypeImmutable, pageBusy, pageInUse, pageNotFound, pageSlugTaken, unknownBlockType } from './errors'
import { layoutSections, placeBlock, readingOrder, sectionsWithIds, withoutIds } from './layout'
import { mergePatch } from './merge-patch'
import type { AppendBlockInput, CreatePageInput, UpdatePageInput } from './model'
import { MAX_BLOCKS_PER_PAGE } from './model'
import { DEFAULT_THEME, themeIssues } from './render/theme'
import type { PageCounts, PageRow, PagePatch, PagesRepo, SavedTemplateRow } from './port'
import { resolveTemplate, toSaved } from './templates-service'
import type { Theme, TreeSection } from './tree'

export interface PagesCtx extends Deps {
  pages: PagesRepo
  served: Pick<ServedDomains, 'get'>
  bus: Pick<EventBus, 'emit'>
  /** Changes to one page take turns in this process; across processes the version guard decides. */
  editing: KeyedQueue
}

/** Who acts: a caller of the API (the admin CLI would pass a live, unscoped one). */
export type Who = Pick<Caller, 'workspace' | 'mode'> & { key: Pick<Caller['key'], 'scopeFilters'> }

/** How often a change is recomputed when another writer moved the page on in between. */
const SAVE_ATTEMPTS = 5

export const pageUrl = (ctx: Pick<Deps, 'config'>, page: Pick<PageRow, 'domain' | 'slug'>) => shortUrl(ctx, { domain: page.domain, slug: `p/${page.slug}` })

/** The page as events carry it: without the counters, which change without events. */
function pageData(ctx: Pick<Deps, 'config'>, row: PageRow, blockCount: number) {
  return {
    id: row.id,
    title: row.title,
    slug: row.slug,
    domain: row.domain,
    url: pageUrl(ctx, row),
    description: row.description,
    lang: row.lang,
    theme: row.theme,
    ogImageUrl: row.ogImageUrl,
    isTest: row.isTest,
    version: row.version,
    templateSlug: row.templateSlug,
    savedTemplateId: row.savedTemplateId,
    blockCount,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

export type PageView = ReturnType<typeof pageData> & { views: number; buttonClicks: number }

function toPage(ctx: Pick<Deps, 'config'>, row: PageRow, blockCount: number, counts: PageCounts | undefined): PageView {
  return { ...pageData(ctx, row, blockCount), views: counts?.views ?? 0, buttonClicks: counts?.buttonClicks ?? 0 }
}

const blockCountOf = (tree: TreeSection[]) => tree.reduce((n, s) => n + s.columns.reduce((m, c) => m + c.blocks.length, 0), 0)
const modeOf = (row: Pick<PageRow, 'isTest'>) => (row.isTest ? 'test' : 'live') as 'test' | 'live'

/** A page the caller may see: of its workspace, its sandbox and its domain scope. */
async function findOwn(ctx: PagesCtx, caller: Who, id: string): Promise<PageRow> {
  const row = await ctx.pages.find(caller.workspace.id, id)
  if (!row || sandboxHides(caller, row) || !inDomainScope(caller, row.domain)) throw pageNotFound(id)
  return row
}

function checkTheme(issues: Issues, theme: Theme | undefined) {
  if (theme) for (const i of themeIssues(theme)) issues.add(i.path.replace(/\//g, '.'), i.message)
}

function checkOgImage(issues: Issues, value: string | null | undefined) {
  if (value == null) return
  let url: URL | null = null
  try {
    url = new URL(value)
  } catch {
    /* reported below */
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    issues.add('ogImageUrl', 'must be an absolute http(s) URL such as https://example.com/preview.png')
}

function checkDomain(ctx: PagesCtx, caller: Who, issues: Issues, domain: string | undefined): string {
  const chosen = usableDomain(ctx.config, ctx.served, caller.workspace.id, domain)
  if (!chosen.usable) issues.add('domain', unusableDomainMessage(ctx.config, domain))
  else if (!inDomainScope(caller, chosen.domain)) throw domainOutOfScope(chosen.domain)
  return chosen.domain
}

/** A slug from the title ("Spring Sale!" → spring-sale), with a random tail when that one is taken. */
async function generateSlug(ctx: PagesCtx, domain: string, title: string): Promise<string> {
  const base = slugify(title).replace(/-+$/, '') || 'page'
  const candidates = [base, ...Array.from({ length: 8 }, () => `${base}-${randomId(5).toLowerCase()}`)]
  const taken = await ctx.pages.slugsInUse(domain, candidates)
  return candidates.find((c) => !taken.has(c)) ?? `${base}-${randomId(12).toLowerCase()}`
}

/** Problems of one block's fields (schema, the type's own rules, the links it names), with paths inside fields. */
async function blockIssues(ctx: PagesCtx, page: Pick<PageRow, 'workspaceId' | 'isTest'>, type: BlockType, fields: Record<string, unknown>) {
  const issues = validateFields(type, fields)
  if (issues.length || !type.linkIds) return issues
  const ids = [...new Set(type.linkIds(fields))]
  const found = new Map((await ctx.pages.linkTargets(page.workspaceId, ids)).map((l) => [l.id, l]))
  for (const id of ids) {
    const link = found.get(id)
    if (!link) issues.push({ path: 'linkId', message: `${id} is not a link of this workspace` })
    else if (link.isTest !== page.isTest) {
      const [its, pages] = [link.isTest ? 'test' : 'live', page.isTest ? 'test' : 'live']
      issues.push({ path: 'linkId', message: `${id} is a ${its} link; a ${pages} page's buttons use ${pages} links` })
    }
  }
  return issues
}

function knownType(type: string): BlockType {
  const found = blockType(type)
  if (!found)
    throw unknownBlockType(
      type,
      BLOCK_TYPES.map((b) => b.type),
    )
  return found
}

// --- pages ---------------------------------------------------------------------------------------------

export async function listPages(ctx: PagesCtx, caller: Who, q: { page: number; perPage: number; mode?: ModeFilter }) {
  const mode = listedMode(caller, q.mode, 'bridge pages')
  const domains = caller.key.scopeFilters?.domains
  const { rows, total } = await ctx.pages.list(
    caller.workspace.id,
    { isTest: mode === undefined ? undefined : mode === 'test', domains },
    (q.page - 1) * q.perPage,
    q.perPage,
  )
  const ids = rows.map((r) => r.id)
  const [blocks, counts] = await Promise.all([ctx.pages.blockCounts(ids), ctx.pages.counts(ids)])
  return {
    items: rows.map((r) => toPage(ctx, r, blocks.get(r.id) ?? 0, counts.get(r.id))),
    pagination: { page: q.page, perPage: q.perPage, total, totalPages: Math.ceil(total / q.perPage) },
  }
}

async function withTree(ctx: PagesCtx, row: PageRow, tree?: TreeSection[]) {
  const sections = tree ?? (await ctx.pages.tree(row.id))
  const counts = (await ctx.pages.counts([row.id])).get(row.id)
  return { ...toPage(ctx, row, blockCountOf(sections), counts), sections }
}

export async function getPage(ctx: PagesCtx, caller: Who, id: string) {
  return withTree(ctx, await findOwn(ctx, caller, id))
}

export async function createPage(ctx: PagesCtx, caller: Who, input: CreatePageInput) {
  const issues = new Issues()
  const start = await resolveTemplate(ctx, caller, input, issues)
  const domain = checkDomain(ctx, caller, issues, input.domain)
  const theme = input.theme ?? start?.theme ?? DEFAULT_THEME
  checkTheme(issues, input.theme)
  checkOgImage(issues, input.ogImageUrl)
  issues.throwIfAny()
  const title = input.title ?? start?.title ?? 'Untitled page'
  const now = ctx.clock.now()
  const isTest = caller.mode === 'test'
  const tree = sectionsWithIds(start?.sections ?? [])
  const row: PageRow = {
    id: newId('bp'),
    workspaceId: caller.workspace.id,
    isTest,
    domain,
    slug: input.slug ?? (await generateSlug(ctx, domain, title)),
    title,
    description: input.description ?? null,
    lang: input.lang ?? start?.lang ?? 'en',
    theme,
    ogImageUrl: input.ogImageUrl ?? null,
    templateSlug: start?.templateSlug ?? null,
    savedTemplateId: start?.savedTemplateId ?? null,
    version: 1,
    createdAt: now,
    updatedAt: now,
  }
  // Built-in templates name no workspace link, and a saved one only links of this workspace (a button whose
  // link is gone or of another mode simply does not show).
  const outcome = await ctx.pages.insert(row, tree, (r) => ({
    type: 'bridge_page.created',
    workspaceId: r.workspaceId,
    mode: modeOf(r),
    data: pageData(ctx, r, blockCountOf(tree)),
  }))
  if (!outcome.ok) throw pageSlugTaken(row.slug, domain)
  ctx.bus.emit('page.changed', { id: row.id })
  return withTree(ctx, outcome.row, tree)
}

interface Change {
  patch?: PagePatch
  tree?: TreeSection[] | null
  /** What the event's `changes` lists. */
  changes: string[]
}

/** Works out a change from the page and a copy of its tree (which it may change and return). */
type Compute = (page: PageRow, tree: TreeSection[]) => Promise<Change>

/**
 * Reads the page, lets `compute` work out the change from what it read, and writes it if nobody changed the
 * page in between (another process may have); otherwise starts again from the newer page.
 */
function change(ctx: PagesCtx, caller: Who, id: string, compute: Compute) {
  return ctx.editing.run(id, () => changeNow(ctx, caller, id, compute))
}

async function changeNow(ctx: PagesCtx, caller: Who, id: string, compute: Compute): Promise<{ row: PageRow; tree: TreeSection[] }> {
  for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
    const page = await findOwn(ctx, caller, id)
    const tree = await ctx.pages.tree(id)
    const c = await compute(page, structuredClone(tree))
    const next = c.tree ?? tree
    const now = Math.max(ctx.clock.now(), page.updatedAt)
    const outcome = await ctx.pages.save(id, caller.workspace.id, page.version, c.patch ?? {}, c.tree ?? null, now, (r) => ({
      type: 'bridge_page.updated',
      workspaceId: r.workspaceId,
      mode: modeOf(r),
      data: { ...pageData(ctx, r, blockCountOf(next)), changes: c.changes },
    }))
    if (outcome.ok) {
      ctx.bus.emit('page.changed', { id })
      return { row: outcome.row, tree: next }
    }
    if (outcome.reason === 'gone') throw pageNotFound(id)
    if (outcome.reason === 'slug_taken') throw pageSlugTaken(c.patch!.slug ?? page.slug, c.patch!.domain ?? page.domain)
  }
  throw pageBusy(id)
}

export async function updatePage(ctx: PagesCtx, caller: Who, id: string, input: UpdatePageInput) {
  const { row, tree } = await change(ctx, caller, id, async (page, tree) => {
    if (input.version !== undefined && input.version !== page.version) throw pageBusy(id)
    const issues = new Issues()
    const patch: PagePatch = {}
    if (input.domain !== undefined) patch.domain = checkDomain(ctx, caller, issues, input.domain)
    if (input.slug !== undefined) patch.slug = input.slug
    if (input.title !== undefined) patch.title = input.title
    if (input.description !== undefined) patch.description = input.description
    if (input.lang !== undefined) patch.lang = input.lang
    if (input.theme !== undefined) patch.theme = input.theme
    if (input.ogImageUrl !== undefined) patch.ogImageUrl = input.ogImageUrl
    checkTheme(issues, input.theme)
    checkOgImage(issues, input.ogImageUrl)
    const arranged = input.layout === undefined ? null : layoutSections(tree, input.layout, issues)
    issues.throwIfAny()
    return { patch, tree: arranged, changes: Object.keys(input).filter((k) => k !== 'version') }
  })
  return withTree(ctx, row, tree)
}

export async function deletePage(ctx: PagesCtx, caller: Who, id: string) {
  const row = await findOwn(ctx, caller, id)
  const outcome = await ctx.pages.delete(id, caller.workspace.id, {
    type: 'bridge_page.deleted',
    workspaceId: row.workspaceId,
    mode: modeOf(row),
    data: { id: row.id, slug: row.slug, domain: row.domain, url: pageUrl(ctx, row), title: row.title },
  } satisfies PublishInput)
  if (!outcome.ok && outcome.reason === 'gone') throw pageNotFound(id)
  if (!outcome.ok && outcome.reason === 'in_use') throw pageInUse(id, outcome.links)
  ctx.bus.emit('page.changed', { id })
  return { id, deleted: true as const }
}

// --- blocks --------------------------------------------------------------------------------------------

function blockViews(tree: TreeSection[], counts: PageCounts | undefined) {
  return readingOrder(tree).map((b) => ({ ...b, clicks: counts?.blocks[b.id] ?? 0 }))
}

export async function listBlocks(ctx: PagesCtx, caller: Who, pageId: string) {
  await findOwn(ctx, caller, pageId)
  const [tree, counts] = await Promise.all([ctx.pages.tree(pageId), ctx.pages.counts([pageId])])
  return blockViews(tree, counts.get(pageId))
}

export async function getBlock(ctx: PagesCtx, caller: Who, pageId: string, blockId: string) {
  const block = (await listBlocks(ctx, caller, pageId)).find((b) => b.id === blockId)
  if (!block) throw blockNotFound(blockId)
  return block
}

async function blockAnswer(ctx: PagesCtx, pageId: string, tree: TreeSection[], blockId: string) {
  const counts = (await ctx.pages.counts([pageId])).get(pageId)
  return blockViews(tree, counts).find((b) => b.id === blockId)!
}

export async function appendBlock(ctx: PagesCtx, caller: Who, pageId: string, input: AppendBlockInput) {
  const type = knownType(input.type)
  const blockId = newId('blk')
  // Spec rule 1: id and type inside fields are ignored.
  const { id: _id, type: _type, ...given } = input.fields ?? {}
  const fields = mergeDefaults(type, given)
  const { tree } = await change(ctx, caller, pageId, async (page, tree) => {
    const issues = await blockIssues(ctx, page, type, fields)
    if (issues.length) throw blockFieldsInvalid(issues)
    const check = new Issues()
    if (blockCountOf(tree) >= MAX_BLOCKS_PER_PAGE) check.add('type', `a page holds at most ${MAX_BLOCKS_PER_PAGE} blocks; delete some first`)
    else placeBlock(tree, { id: blockId, type: type.type, fields }, input, check)
    check.throwIfAny()
    return { tree, changes: ['blocks'] }
  })
  return blockAnswer(ctx, pageId, tree, blockId)
}

export async function updateBlock(ctx: PagesCtx, caller: Who, pageId: string, blockId: string, body: Record<string, unknown>) {
  const { tree } = await change(ctx, caller, pageId, async (page, tree) => {
    const block = tree.flatMap((s) => s.columns.flatMap((c) => c.blocks)).find((b) => b.id === blockId)
    if (!block) throw blockNotFound(blockId)
    // Spec rule 2: the type never changes; the same type sent back is harmless.
    if (body.type !== undefined && body.type !== block.type) throw blockTypeImmutable(block.type, body.type)
    const type = knownType(block.type)
    const { id: _id, type: _type, ...patch } = body
    // null removes a field (RFC 7396); the defaults then fill it back in.
    block.fields = mergeDefaults(type, mergePatch(block.fields, patch) as Record<string, unknown>)
    const issues = await blockIssues(ctx, page, type, block.fields)
    if (issues.length) throw blockFieldsInvalid(issues)
    return { tree, changes: ['blocks'] }
  })
  return blockAnswer(ctx, pageId, tree, blockId)
}

export async function deleteBlock(ctx: PagesCtx, caller: Who, pageId: string, blockId: string) {
  await change(ctx, caller, pageId, async (_page, tree) => {
    const column = tree.flatMap((s) => s.columns).find((c) => c.blocks.some((b) => b.id === blockId))
    if (!column) throw blockNotFound(blockId)
    column.blocks = column.blocks.filter((b) => b.id !== blockId)
    return { tree, changes: ['blocks'] }
  })
}

export function listBlockTypes() {
  return BLOCK_TYPES.map((b) => ({
    type: b.type,
    title: b.title,
    description: b.description,
    schema: b.schema as unknown as Record<string, unknown>,
    defaults: b.defaults,
  }))
}

// --- saved templates -----------------------------------------------------------------------------------

/**
 * Saves a page's layout, blocks and theme as a private template. Buttons naming workspace links keep them:
 * the template stays within the workspace that owns those links.
 */
export async function saveTemplate(ctx: PagesCtx, caller: Who, input: { pageId: string; name: string; description?: string | null }) {
  const row = await findOwn(ctx, caller, input.pageId)
  const saved: SavedTemplateRow = {
    id: newId('tpl'),
    workspaceId: caller.workspace.id,
    name: input.name,
    description: input.description ?? null,
    sourcePageId: row.id,
    title: row.title,
    lang: row.lang,
    theme: row.theme,
    sections: withoutIds(await ctx.pages.tree(row.id)),
    createdAt: ctx.clock.now(),
  }
  await ctx.pages.insertSavedTemplate(saved)
  return toSaved(saved)
}
