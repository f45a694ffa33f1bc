// Identity logic shared by HTTP, the admin CLI and jobs: bootstrap, keys, and the views they answer with.
import { iso, isoOrNull, utcMonth } from '../../platform/clock'
import type { Deps } from '../../context'
import type { Caller } from './caller'
import {
  badKeyName,
  badPermissions,
  notAnEmail,
  userNotFound,
  workspaceHasNoOwner,
  workspaceNameUnusable,
  workspaceNotFound,
  workspaceSlugTaken,
} from './errors'
import { newId } from '../../platform/random'
import { generateKey, type KeyMode } from './keys'
import { parseGrants, type Grant } from './permissions'
import type { ApiKeyRow, IdentityRepo, UserRow, WorkspaceRow } from './port'
import { HOUR_MS } from '../../platform/time'
import { slugify } from '../../platform/slugify'

export interface IdentityCtx extends Deps {
  identity: IdentityRepo
}

export const toUser = (u: UserRow) => ({ id: u.id, email: u.email, name: u.name, createdAt: iso(u.createdAt) })

export const toWorkspace = (w: WorkspaceRow) => ({ id: w.id, slug: w.slug, name: w.name, createdAt: iso(w.createdAt) })

/** Spec 2.7. Never the secret or its hash. */
export function toApiKey(k: ApiKeyRow, now: number) {
  const rotating = k.previousKeyHash != null && (k.previousKeyExpiresAt ?? 0) > now
  return {
    id: k.id,
    name: k.name,
    keyPrefix: k.keyPrefix,
    mode: k.mode,
    permissions: k.permissions,
    allowedIps: k.allowedIps,
    scopeFilters: k.scopeFilters ?? null,
    schedule: k.schedule ?? null,
    monthlyCallCap: k.monthlyCallCap,
    rateLimitOverride: k.rateLimitOverride,
    expiresAt: isoOrNull(k.expiresAt),
    lastUsedAt: isoOrNull(k.lastUsedAt),
    lastUsedIp: k.lastUsedIp,
    pausedAt: isoOrNull(k.pausedAt),
    pausedReason: k.pausedReason,
    revokedAt: isoOrNull(k.revokedAt),
    revokedReason: k.revokedReason,
    rotating,
    graceHoursRemaining: rotating ? Math.ceil(((k.previousKeyExpiresAt ?? 0) - now) / HOUR_MS) : 0,
    workspaceId: k.workspaceId,
    createdAt: iso(k.createdAt),
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export async function bootstrap(ctx: IdentityCtx, input: { email: string; name?: string; workspace: string }) {
  const email = parseEmail(input.email)
  const workspaceName = input.workspace.trim()
  const slug = slugify(workspaceName)
  if (!slug) throw workspaceNameUnusable()
  if (await ctx.identity.findWorkspace(slug)) throw workspaceSlugTaken(slug)
  const now = ctx.clock.now()
  const secret = generateKey('live')
  const { user, workspace, key } = await ctx.identity.bootstrap({
    now,
    user: { id: newId('usr'), email, name: input.name?.trim() || null, createdAt: now },
    workspace: { id: newId('ws'), slug, name: workspaceName, createdAt: now },
    key: {
      id: newId('key'),
      workspaceId: '',
      userId: '',
      name: 'Bootstrap key',
      keyHash: secret.hash,
      keyPrefix: secret.prefix,
      mode: 'live',
      permissions: ['*'],
      allowedIps: [],
      createdAt: now,
    },
  })
  return { user: toUser(user), workspace: toWorkspace(workspace), apiKey: { id: key.id, key: secret.key, keyPrefix: key.keyPrefix, mode: key.mode } }
}

function parseEmail(value: string) {
  const email = value.trim().toLowerCase()
  if (!EMAIL.test(email)) throw notAnEmail(value)
  return email
}

/** A new workspace owned by an existing user (admin CLI). */
export async function createWorkspace(ctx: IdentityCtx, input: { name: string; ownerEmail: string }) {
  const owner = await ctx.identity.findUserByEmail(parseEmail(input.ownerEmail))
  if (!owner) throw userNotFound(input.ownerEmail)
  const name = input.name.trim()
  const slug = slugify(name)
  if (!slug) throw workspaceNameUnusable()
  if (await ctx.identity.findWorkspace(slug)) throw workspaceSlugTaken(slug)
  const now = ctx.clock.now()
  return toWorkspace(await ctx.identity.insertWorkspace({ id: newId('ws'), slug, name, createdAt: now }, owner.id))
}

/** Adds a user (created if new) to a workspace (admin CLI). */
export async function addMember(ctx: IdentityCtx, input: { workspace: string; email: string; name?: string; role?: 'owner' | 'member' }) {
  const workspace = await ctx.identity.findWorkspace(input.workspace)
  if (!workspace) throw workspaceNotFound(input.workspace)
  const now = ctx.clock.now()
  const role = input.role ?? 'member'
  const user = await ctx.identity.addMember(
    workspace.id,
    { id: newId('usr'), email: parseEmail(input.email), name: input.name?.trim() || null, createdAt: now },
    role,
    now,
  )
  return { user: toUser(user), workspace: toWorkspace(workspace), role }
}

/** Creates a key for the workspace's owner (admin CLI). */
export async function createKey(ctx: IdentityCtx, input: { workspace: string; name: string; mode?: KeyMode; permissions?: string }) {
  const workspace = await ctx.identity.findWorkspace(input.workspace)
  if (!workspace) throw workspaceNotFound(input.workspace)
  const owner = await ctx.identity.workspaceOwner(workspace.id)
  if (!owner) throw workspaceHasNoOwner(workspace.slug)
  let permissions: Grant[]
  try {
    permissions = parseGrants(input.permissions ?? '*')
  } catch (err) {
    throw badPermissions((err as Error).message)
  }
  const name = input.name.trim()
  if (!name || name.length > 100) throw badKeyName()
  const mode = input.mode ?? 'live'
  const secret = generateKey(mode)
  const now = ctx.clock.now()
  const key = await ctx.identity.insertKey({
    id: newId('key'),
    workspaceId: workspace.id,
    userId: owner,
    name,
    keyHash: secret.hash,
    keyPrefix: secret.prefix,
    mode,
    permissions,
    allowedIps: [],
    createdAt: now,
  })
  return { id: key.id, key: secret.key, keyPrefix: key.keyPrefix, mode: key.mode, permissions: key.permissions }
}

export async function listKeys(ctx: IdentityCtx, workspaceRef?: string) {
  let workspaceId: string | undefined
  if (workspaceRef) {
    const ws = await ctx.identity.findWorkspace(workspaceRef)
    if (!ws) throw workspaceNotFound(workspaceRef)
    workspaceId = ws.id
  }
  const now = ctx.clock.now()
  return (await ctx.identity.listKeys(workspaceId)).map((k) => toApiKey(k, now))
}

export async function monthUsage(ctx: IdentityCtx, key: ApiKeyRow) {
  const month = utcMonth(ctx.clock.now())
  return { month, apiCalls: await ctx.identity.callsInMonth(key.id, month), monthlyCallCap: key.monthlyCallCap }
}

/** GET /me: the caller's user, the workspace acted in, every workspace of the user, the key and usage. */
export async function whoAmI(ctx: IdentityCtx, caller: Caller) {
  const memberships = await ctx.identity.listUserWorkspaces(caller.user.id)
  return {
    user: toUser(caller.user),
    workspace: { ...toWorkspace(caller.workspace), role: caller.role },
    workspaces: memberships.map((m) => ({ id: m.workspace.id, slug: m.workspace.slug, name: m.workspace.name, role: m.role })),
    apiKey: { id: caller.key.id, name: caller.key.name, mode: caller.key.mode, permissions: caller.key.permissions, keyPrefix: caller.key.keyPrefix },
    usage: await monthUsage(ctx, caller.key),
  }
}
