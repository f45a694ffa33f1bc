// Queries of the identity area: users, workspaces, memberships, API keys and their usage.
// The port comes first (what services, the HTTP layer and the CLI see: plain types and Promises, so another
// database can sit behind the same signatures); the SQLite implementation follows it.
import { and, asc, eq, gt, or, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import type { Insertable } from '../../db/rows'
import { apiKeys, apiKeyUsage, memberships, users, workspaces, type ScopeFilters } from '../../db/schema'
import type { KeyMode } from './keys'
import type { Schedule } from './model'

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

// --- SQLite ------------------------------------------------------------------------------------------

export function createIdentityRepo(db: Db): IdentityRepo {
  // The statements every authenticated request runs, prepared once. No LIMIT: each matches one row, and a
  // LIMIT is bound as a parameter, which makes SQLite plan the statement again at every run (a key lookup
  // measured 20 µs with it, 3 µs without).
  const keyByHash = db
    .select()
    .from(apiKeys)
    .where(
      or(
        eq(apiKeys.keyHash, sql.placeholder('hash')),
        and(eq(apiKeys.previousKeyHash, sql.placeholder('hash')), gt(apiKeys.previousKeyExpiresAt, sql.placeholder('now'))),
      ),
    )
    .prepare()
  const userById = db.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare()
  const memberWorkspace = db
    .select({ workspace: workspaces, role: memberships.role })
    .from(memberships)
    .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
    .where(
      and(
        eq(memberships.userId, sql.placeholder('userId')),
        or(eq(workspaces.id, sql.placeholder('ref')), eq(workspaces.slug, sql.placeholder('ref'))),
      ),
    )
    .prepare()
  const countCall = db
    .insert(apiKeyUsage)
    .values({ keyId: sql.placeholder('keyId'), month: sql.placeholder('month'), calls: 1 })
    .onConflictDoUpdate({
      target: [apiKeyUsage.keyId, apiKeyUsage.month],
      set: { calls: sql`${apiKeyUsage.calls} + 1` },
      setWhere: sql`${apiKeyUsage.calls} < ${sql.placeholder('cap')}`,
    })
    .returning({ calls: apiKeyUsage.calls })
    .prepare()
  const callsInMonth = db
    .select({ calls: apiKeyUsage.calls })
    .from(apiKeyUsage)
    .where(and(eq(apiKeyUsage.keyId, sql.placeholder('keyId')), eq(apiKeyUsage.month, sql.placeholder('month'))))
    .prepare()

  return {
    async findKeyByHash(hash, now) {
      return keyByHash.get({ hash, now })
    },
    async findUser(id) {
      return userById.get({ id })
    },
    async findUserByEmail(email) {
      return db.select().from(users).where(eq(users.email, email)).get()
    },
    async findMemberWorkspace(userId, ref) {
      return memberWorkspace.get({ userId, ref })
    },
    async findWorkspace(ref) {
      return db.select().from(workspaces).where(or(eq(workspaces.id, ref), eq(workspaces.slug, ref))).get()
    },
    async listUserWorkspaces(userId) {
      return db
        .select({ workspace: workspaces, role: memberships.role })
        .from(memberships)
        .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
        .where(eq(memberships.userId, userId))
        .orderBy(asc(workspaces.createdAt), asc(workspaces.id))
        .all()
    },
    async countCall(keyId, month, cap) {
      return countCall.get({ keyId, month, cap: cap ?? Number.MAX_SAFE_INTEGER })?.calls
    },
    async callsInMonth(keyId, month) {
      return callsInMonth.get({ keyId, month })?.calls ?? 0
    },
    async bootstrap(input) {
      return db.transaction((tx) => {
        const existing = tx.select().from(users).where(eq(users.email, input.user.email)).get()
        const user = existing ?? tx.insert(users).values(input.user).returning().get()
        const workspace = tx.insert(workspaces).values(input.workspace).returning().get()
        tx.insert(memberships).values({ workspaceId: workspace.id, userId: user.id, role: 'owner', createdAt: input.now }).run()
        const key = tx.insert(apiKeys).values({ ...input.key, userId: user.id, workspaceId: workspace.id }).returning().get()
        return { user, workspace, key }
      }, { behavior: 'immediate' })
    },
    async workspaceOwner(workspaceId) {
      return db
        .select({ userId: memberships.userId })
        .from(memberships)
        .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.role, 'owner')))
        .orderBy(asc(memberships.createdAt))
        .get()?.userId
    },
    async insertWorkspace(workspace, ownerId) {
      return db.transaction((tx) => {
        const row = tx.insert(workspaces).values(workspace).returning().get()
        tx.insert(memberships).values({ workspaceId: row.id, userId: ownerId, role: 'owner', createdAt: workspace.createdAt }).run()
        return row
      })
    },
    async addMember(workspaceId, user, role, now) {
      return db.transaction((tx) => {
        const existing = tx.select().from(users).where(eq(users.email, user.email)).get()
        const row = existing ?? tx.insert(users).values(user).returning().get()
        tx.insert(memberships)
          .values({ workspaceId, userId: row.id, role, createdAt: now })
          .onConflictDoUpdate({ target: [memberships.workspaceId, memberships.userId], set: { role } })
          .run()
        return row
      }, { behavior: 'immediate' })
    },
    async insertKey(key) {
      return db.insert(apiKeys).values(key).returning().get()
    },
    async findKey(id) {
      return db.select().from(apiKeys).where(eq(apiKeys.id, id)).get()
    },
    async listKeys(workspaceId, mode) {
      const where = and(workspaceId ? eq(apiKeys.workspaceId, workspaceId) : undefined, mode ? eq(apiKeys.mode, mode) : undefined)
      return db.select().from(apiKeys).where(where).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id)).all()
    },
    async updateKey(id, patch) {
      return db.update(apiKeys).set(patch).where(eq(apiKeys.id, id)).returning().get()
    },
    async writeLastUsed(rows) {
      if (!rows.length) return
      db.transaction((tx) => {
        for (const r of rows) tx.update(apiKeys).set({ lastUsedAt: r.at, lastUsedIp: r.ip }).where(eq(apiKeys.id, r.keyId)).run()
      })
    },
  }
}
