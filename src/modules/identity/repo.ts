// Queries of the identity area: users, workspaces, memberships, API keys and their usage.
import { and, asc, eq, gt, or, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { apiKeys, apiKeyUsage, memberships, users, workspaces } from '../../db/schema'
import type { KeyMode } from './keys'

export type UserRow = typeof users.$inferSelect
export type WorkspaceRow = typeof workspaces.$inferSelect
export type ApiKeyRow = typeof apiKeys.$inferSelect
export type NewApiKey = typeof apiKeys.$inferInsert

export function createIdentityRepo(db: Db) {
  // The statements every authenticated request runs, prepared once.
  const keyByHash = db
    .select()
    .from(apiKeys)
    .where(
      or(
        eq(apiKeys.keyHash, sql.placeholder('hash')),
        and(eq(apiKeys.previousKeyHash, sql.placeholder('hash')), gt(apiKeys.previousKeyExpiresAt, sql.placeholder('now'))),
      ),
    )
    .limit(1)
    .prepare()
  const userById = db.select().from(users).where(eq(users.id, sql.placeholder('id'))).limit(1).prepare()
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
    .limit(1)
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
    async findKeyByHash(hash: string, now: number): Promise<ApiKeyRow | undefined> {
      return keyByHash.get({ hash, now })
    },
    async findUser(id: string): Promise<UserRow | undefined> {
      return userById.get({ id })
    },
    async findUserByEmail(email: string): Promise<UserRow | undefined> {
      return db.select().from(users).where(eq(users.email, email)).get()
    },
    /** The workspace (by id or slug) if the user is a member of it. */
    async findMemberWorkspace(userId: string, ref: string) {
      return memberWorkspace.get({ userId, ref })
    },
    async findWorkspace(ref: string): Promise<WorkspaceRow | undefined> {
      return db.select().from(workspaces).where(or(eq(workspaces.id, ref), eq(workspaces.slug, ref))).get()
    },
    async listUserWorkspaces(userId: string) {
      return db
        .select({ workspace: workspaces, role: memberships.role })
        .from(memberships)
        .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
        .where(eq(memberships.userId, userId))
        .orderBy(asc(workspaces.createdAt), asc(workspaces.id))
        .all()
    },
    /**
     * Counts one call against the key's month in one atomic statement and answers the new total, or
     * undefined when the month already holds `cap` calls (nothing is counted then).
     */
    async countCall(keyId: string, month: string, cap: number | null): Promise<number | undefined> {
      return countCall.get({ keyId, month, cap: cap ?? Number.MAX_SAFE_INTEGER })?.calls
    },
    async callsInMonth(keyId: string, month: string): Promise<number> {
      return callsInMonth.get({ keyId, month })?.calls ?? 0
    },
    /** Creates user (or reuses one by email), workspace, owner membership and key in one transaction. */
    async bootstrap(input: {
      user: typeof users.$inferInsert
      workspace: typeof workspaces.$inferInsert
      key: NewApiKey
      now: number
    }) {
      return db.transaction((tx) => {
        const existing = tx.select().from(users).where(eq(users.email, input.user.email)).get()
        const user = existing ?? tx.insert(users).values(input.user).returning().get()
        const workspace = tx.insert(workspaces).values(input.workspace).returning().get()
        tx.insert(memberships).values({ workspaceId: workspace.id, userId: user.id, role: 'owner', createdAt: input.now }).run()
        const key = tx.insert(apiKeys).values({ ...input.key, userId: user.id, workspaceId: workspace.id }).returning().get()
        return { user, workspace, key }
      }, { behavior: 'immediate' })
    },
    async workspaceOwner(workspaceId: string): Promise<string | undefined> {
      return db
        .select({ userId: memberships.userId })
        .from(memberships)
        .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.role, 'owner')))
        .orderBy(asc(memberships.createdAt))
        .get()?.userId
    },
    async insertWorkspace(workspace: typeof workspaces.$inferInsert, ownerId: string): Promise<WorkspaceRow> {
      return db.transaction((tx) => {
        const row = tx.insert(workspaces).values(workspace).returning().get()
        tx.insert(memberships).values({ workspaceId: row.id, userId: ownerId, role: 'owner', createdAt: workspace.createdAt }).run()
        return row
      })
    },
    /** Adds the user (created when new) to the workspace; an existing membership keeps its row but takes the role. */
    async addMember(workspaceId: string, user: typeof users.$inferInsert, role: 'owner' | 'member', now: number) {
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
    async insertKey(key: NewApiKey): Promise<ApiKeyRow> {
      return db.insert(apiKeys).values(key).returning().get()
    },
    async findKey(id: string): Promise<ApiKeyRow | undefined> {
      return db.select().from(apiKeys).where(eq(apiKeys.id, id)).get()
    },
    /** Keys, oldest first: of one workspace when given, of one mode when given. */
    async listKeys(workspaceId?: string, mode?: KeyMode): Promise<ApiKeyRow[]> {
      const where = and(workspaceId ? eq(apiKeys.workspaceId, workspaceId) : undefined, mode ? eq(apiKeys.mode, mode) : undefined)
      return db.select().from(apiKeys).where(where).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id)).all()
    },
    async updateKey(id: string, patch: Partial<NewApiKey>): Promise<ApiKeyRow | undefined> {
      return db.update(apiKeys).set(patch).where(eq(apiKeys.id, id)).returning().get()
    },
    /** Writes last-use stamps collected in memory, in one transaction. */
    async writeLastUsed(rows: { keyId: string; at: number; ip: string | null }[]) {
      if (!rows.length) return
      db.transaction((tx) => {
        for (const r of rows) tx.update(apiKeys).set({ lastUsedAt: r.at, lastUsedIp: r.ip }).where(eq(apiKeys.id, r.keyId)).run()
      })
    },
  }
}

export type IdentityRepo = ReturnType<typeof createIdentityRepo>
