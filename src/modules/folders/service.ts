// Folders (contract 7.3): list with link counts, read, create, rename and describe, delete (refused while it
// holds links, unless they are moved or deleted with it). Folders are shared by live and test links, like
// domains: a test key reads them and files its test links in them, only a live key changes them. A key whose
// scope filters name folders sees and changes only those and cannot create one.
import type { Deps } from '../../context'
import type { EventBus } from '../../events/bus'
import type { PublishInput } from '../../events/outbox'
import { iso } from '../../platform/clock'
import { Issues } from '../../platform/errors'
import { newId } from '../../platform/random'
import type { Caller } from '../identity'
import { type LinkRow, toLink } from '../links'
import { folderNotEmpty, folderNotFound, folderOutOfScope, linksOutOfScope, scopedKeyCreatesFolder, testKeyChangesFolder } from './errors'
import { type CreateFolderInput, type FolderView, isFolderId, type UpdateFolderInput } from './model'
import type { FolderRow, FoldersRepo, LinkScope, LinksOnDelete } from './port'

export interface FoldersCtx extends Deps {
  folders: FoldersRepo
  /** Announces changed links after commit, so caches of them (the redirect's) drop them. */
  bus: Pick<EventBus, 'emit'>
}

export type Who = Pick<Caller, 'workspace' | 'mode'> & { key: Pick<Caller['key'], 'scopeFilters'> }

const folderScope = (caller: Who) => (caller.key.scopeFilters?.folders?.length ? caller.key.scopeFilters.folders : undefined)
const inFolderScope = (caller: Who, id: string) => folderScope(caller)?.includes(id) ?? true
const linkScope = (caller: Who): LinkScope => ({ workspaceId: caller.workspace.id, isTest: caller.mode === 'test', scope: caller.key.scopeFilters })

function refuseTestKey(caller: Who) {
  if (caller.mode === 'test') throw testKeyChangesFolder()
}

const eventData = (row: FolderRow) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  createdAt: iso(row.createdAt),
  updatedAt: iso(row.updatedAt),
})

const toFolder = (row: FolderRow, linkCount: number): FolderView => ({ ...eventData(row), linkCount })

async function withCounts(ctx: FoldersCtx, caller: Who, rows: FolderRow[]): Promise<FolderView[]> {
  const counts = await ctx.folders.linkCounts(
    rows.map((r) => r.id),
    linkScope(caller),
  )
  return rows.map((r) => toFolder(r, counts.get(r.id) ?? 0))
}

/** A folder of the caller's workspace: outside the key's folder scope it does not exist for reads (404) and is refused for writes (403). */
async function findOwn(ctx: FoldersCtx, caller: Who, id: string, purpose: 'read' | 'write'): Promise<FolderRow> {
  const row = isFolderId(id) ? await ctx.folders.find(caller.workspace.id, id) : undefined
  if (!row) throw folderNotFound(id)
  if (!inFolderScope(caller, row.id)) throw purpose === 'read' ? folderNotFound(id) : folderOutOfScope(row.id)
  return row
}

function checkName(issues: Issues, name: string | undefined): string | undefined {
  if (name === undefined) return undefined
  const trimmed = name.trim()
  if (!trimmed) issues.add('name', 'must not be blank')
  return trimmed
}

export async function listFolders(ctx: FoldersCtx, caller: Who): Promise<FolderView[]> {
  return withCounts(ctx, caller, await ctx.folders.list(caller.workspace.id, folderScope(caller)))
}

export async function getFolder(ctx: FoldersCtx, caller: Who, id: string): Promise<FolderView> {
  const [view] = await withCounts(ctx, caller, [await findOwn(ctx, caller, id, 'read')])
  return view!
}

const folderEvent = (type: string, row: FolderRow, extra: Record<string, unknown> = {}): PublishInput => ({
  type,
  workspaceId: row.workspaceId,
  // Folders belong to no mode; their events go to the workspace's live subscribers.
  mode: 'live',
  data: { ...eventData(row), ...extra },
})

export async function createFolder(ctx: FoldersCtx, caller: Who, input: CreateFolderInput): Promise<FolderView> {
  refuseTestKey(caller)
  if (folderScope(caller)) throw scopedKeyCreatesFolder()
  const issues = new Issues()
  const name = checkName(issues, input.name)!
  issues.throwIfAny()
  const now = ctx.clock.now()
  const row: FolderRow = { id: newId('fld'), workspaceId: caller.workspace.id, name, description: input.description ?? null, createdAt: now, updatedAt: now }
  await ctx.folders.insert(row, folderEvent('folder.created', row), now)
  return toFolder(row, 0)
}

export async function updateFolder(ctx: FoldersCtx, caller: Who, id: string, input: UpdateFolderInput): Promise<FolderView> {
  refuseTestKey(caller)
  const current = await findOwn(ctx, caller, id, 'write')
  const issues = new Issues()
  const name = checkName(issues, input.name)
  issues.throwIfAny()
  const changes = Object.keys(input)
  if (!changes.length) return getFolder(ctx, caller, current.id)
  const now = ctx.clock.now()
  const patch = { ...(name !== undefined && { name }), ...(input.description !== undefined && { description: input.description }), updatedAt: now }
  const row = await ctx.folders.update(current.workspaceId, current.id, patch, (r) => folderEvent('folder.updated', r, { changes }), now)
  if (!row) throw folderNotFound(id)
  const [view] = await withCounts(ctx, caller, [row])
  return view!
}

export interface DeleteFolderOptions {
  moveTo?: string
  deleteLinks: boolean
}

/** Where the links go, after checking the target and that the key may touch every link of the folder. */
async function linksOnDelete(ctx: FoldersCtx, caller: Who, folder: FolderRow, o: DeleteFolderOptions): Promise<LinksOnDelete> {
  const issues = new Issues('query')
  if (o.moveTo !== undefined && o.deleteLinks) issues.add('moveTo', 'send moveTo or deleteLinks=true, not both')
  else if (o.moveTo !== undefined) {
    if (o.moveTo === folder.id) issues.add('moveTo', 'must be another folder than the one deleted')
    else if (!isFolderId(o.moveTo) || !(await ctx.folders.find(caller.workspace.id, o.moveTo)))
      issues.add('moveTo', `${o.moveTo} is not a folder of this workspace (GET /folders lists them)`)
  }
  issues.throwIfAny()
  if (o.moveTo === undefined && !o.deleteLinks) return { kind: 'refuse' }
  if (o.moveTo !== undefined && !inFolderScope(caller, o.moveTo)) throw folderOutOfScope(o.moveTo)
  const outside = await ctx.folders.linksOutsideScope(caller.workspace.id, folder.id, caller.key.scopeFilters)
  if (outside > 0) throw linksOutOfScope(folder.id, outside)
  const mode = (row: LinkRow) => (row.isTest ? ('test' as const) : ('live' as const))
  if (o.moveTo !== undefined)
    return {
      kind: 'move',
      to: o.moveTo,
      event: (row) => ({ type: 'link.updated', workspaceId: row.workspaceId, mode: mode(row), data: { ...toLink(ctx, row), changes: ['folderId'] } }),
    }
  return {
    kind: 'delete',
    event: (row) => {
      const view = toLink(ctx, row)
      const data = { id: view.id, slug: view.slug, domain: view.domain, shortUrl: view.shortUrl, destinationUrl: view.destinationUrl }
      return { type: 'link.deleted', workspaceId: row.workspaceId, mode: mode(row), data }
    },
  }
}

export async function deleteFolder(ctx: FoldersCtx, caller: Who, id: string, o: DeleteFolderOptions) {
  refuseTestKey(caller)
  const folder = await findOwn(ctx, caller, id, 'write')
  const onLinks = await linksOnDelete(ctx, caller, folder, o)
  const moveTo = onLinks.kind === 'move' ? onLinks.to : null
  const outcome = await ctx.folders.delete(
    folder.workspaceId,
    folder.id,
    onLinks,
    (row, movedLinks, deletedLinks) => folderEvent('folder.deleted', row, { movedLinks, deletedLinks, moveTo }),
    ctx.clock.now(),
  )
  if (!outcome.ok) {
    if (outcome.reason === 'not_empty') throw folderNotEmpty(folder.id, outcome.links)
    if (outcome.reason === 'target_gone') {
      const issues = new Issues('query')
      issues.add('moveTo', `${moveTo} is not a folder of this workspace (GET /folders lists them)`)
      issues.throwIfAny()
    }
    throw folderNotFound(id)
  }
  for (const link of [...outcome.moved, ...outcome.deleted]) ctx.bus.emit('link.changed', { domain: link.domain, slug: link.slug })
  return { id: folder.id, deleted: true as const, movedLinks: outcome.moved.length, deletedLinks: outcome.deleted.length }
}
