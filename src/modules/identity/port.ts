// The identity area's port: what services, the HTTP layer and the CLI ask of storage about users,
// workspaces, memberships, API keys and their usage, in plain types (repo.ts answers it on either engine).
import type { Insertable } from '../../db/rows'
import type { KeyMode } from './keys'
import type { Schedule, ScopeFilters } from './model'

export type { ScopeFilters }

export interface UserRow {
  id: string
  email: string
  name: string | null
  createdAt: number
}

export interface WorkspaceRow {
  id: string
  slug: string
  name: string
  createdAt: number
}

export type Role = 'owner' | 'member'

/** A workspace as one of its members sees it. */
export interface Membership {
  workspace: WorkspaceRow
  role: Role
}

/** Every field of spec 2.7; rotation keeps the previous secret's hash until its grace ends. */
export interface ApiKeyRow {
  id: string
  workspaceId: string
  userId: string
  name: string
  keyHash: string
  keyPrefix: string
  mode: KeyMode
  permissions: string[]
  allowedIps: string[]
  scopeFilters: ScopeFilters | null
  schedule: Schedule | null
  monthlyCallCap: number | null
  rateLimitOverride: number | null
  expiresAt: number | null
  lastUsedAt: number | null
  lastUsedIp: string | null
  pausedAt: number | null
  pausedReason: string | null
  revokedAt: number | null
  revokedReason: string | null
  previousKeyHash: string | null
  previousKeyExpiresAt: number | null
  rotatedAt: number | null
  createdAt: number
}

export type NewUser = Insertable<UserRow>
export type NewWorkspace = Insertable<WorkspaceRow>
export type NewApiKey = Insertable<ApiKeyRow>

export interface IdentityRepo {
  findKeyByHash(hash: string, now: number): Promise<ApiKeyRow | undefined>
  findUser(id: string): Promise<UserRow | undefined>
  findUserByEmail(email: string): Promise<UserRow | undefined>
  /** The workspace (by id or slug) if the user is a member of it. */
  findMemberWorkspace(userId: string, ref: string): Promise<Membership | undefined>
  /** By id or slug. */
  findWorkspace(ref: string): Promise<WorkspaceRow | undefined>
  /** Oldest first. */
  listUserWorkspaces(userId: string): Promise<Membership[]>
  /**
   * Counts one call against the key's month in one atomic statement and answers the new total, or
   * undefined when the month already holds `cap` calls (nothing is counted then).
   */
  countCall(keyId: string, month: string, cap: number | null): Promise<number | undefined>
  callsInMonth(keyId: string, month: string): Promise<number>
  /** Creates user (or reuses one by email), workspace, owner membership and key in one transaction. */
  bootstrap(input: { user: NewUser; workspace: NewWorkspace; key: NewApiKey; now: number }): Promise<{ user: UserRow; workspace: WorkspaceRow; key: ApiKeyRow }>
  /** The user id of the workspace's first owner. */
  workspaceOwner(workspaceId: string): Promise<string | undefined>
  /** The workspace and its owner's membership, in one transaction. */
  insertWorkspace(workspace: NewWorkspace, ownerId: string): Promise<WorkspaceRow>
  /** Adds the user (created when new) to the workspace; an existing membership keeps its row but takes the role. */
  addMember(workspaceId: string, user: NewUser, role: Role, now: number): Promise<UserRow>
  insertKey(key: NewApiKey): Promise<ApiKeyRow>
  findKey(id: string): Promise<ApiKeyRow | undefined>
  /** Keys, oldest first: of one workspace when given, of one mode when given. */
  listKeys(workspaceId?: string, mode?: KeyMode): Promise<ApiKeyRow[]>
  updateKey(id: string, patch: Partial<NewApiKey>): Promise<ApiKeyRow | undefined>
  /** Writes last-use stamps collected in memory, in one transaction. */
  writeLastUsed(rows: { keyId: string; at: number; ip: string | null }[]): Promise<void>
}
