// Queries of the identity area, on either engine: users, workspaces, memberships, API keys and their usage.
// SQLite's single writer makes a read-then-write safe; PostgreSQL's nodes write at once, so each such step
// here is one atomic statement or takes its rows in a fixed order (the comments say which, where), which
// answers the same on SQLite.
import { and, asc, eq, getTableColumns, gt, or, sql } from 'drizzle-orm'
import { first, rows, type Builder, type Engine, type Steps } from '../../db/engine'
import type { IdentityRepo, Membership, NewUser, UserRow } from './port'

export function createIdentityRepo(engine: Engine): IdentityRepo {
  const { db } = engine
  const { apiKeys, apiKeyUsage, memberships, users, workspaces } = engine.t
  const memberSelection = { workspace: workspaces, role: memberships.role }

  /**
   * The user of `user.email`, inserted when there is none. Two transactions adding the same new email at
   * once on PostgreSQL would both miss it on a read and one would fail on the unique index; ON CONFLICT DO
   * NOTHING waits for the other's insert instead, and the read after it (a new snapshot at READ COMMITTED)
   * sees that user.
   */
  function* userByEmail(tx: Builder, user: NewUser): Steps<UserRow> {
    const [inserted] = yield* rows(tx.insert(users).values(user).onConflictDoNothing({ target: users.email }).returning())
    if (inserted) return inserted
    const [existing] = yield* rows(tx.select().from(users).where(eq(users.email, user.email)).limit(1))
    return existing!
  }

  const auth = authStatements(engine)
  const once = <T>(body: () => Steps<T>) => engine.run(body)

  return {
    findKeyByHash: (hash, now) => once(() => first(auth.keyByHash, { hash, now })),
    findUser: (id) => once(() => first(auth.userById, { id })),
    async findUserByEmail(email) {
      const [row] = await db.select().from(users).where(eq(users.email, email)).limit(1)
      return row
    },
    async findMemberWorkspace(userId, ref) {
      const row = await once(() => first(auth.memberWorkspace, { userId, ref }))
      if (!row) return undefined
      const { role, ...workspace } = row
      return { workspace, role } satisfies Membership
    },
    async findWorkspace(ref) {
      const [row] = await db
        .select()
        .from(workspaces)
        .where(or(eq(workspaces.id, ref), eq(workspaces.slug, ref)))
        .limit(1)
      return row
    },
    listUserWorkspaces: (userId) =>
      db
        .select(memberSelection)
        .from(memberships)
        .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
        .where(eq(memberships.userId, userId))
        .orderBy(asc(workspaces.createdAt), asc(workspaces.id)),
    async countCall(keyId, month, cap) {
      const row = await once(() => first(auth.countCall, { keyId, month, cap: cap ?? Number.MAX_SAFE_INTEGER }))
      return row?.calls
    },
    async callsInMonth(keyId, month) {
      const [row] = await db
        .select({ calls: apiKeyUsage.calls })
        .from(apiKeyUsage)
        .where(and(eq(apiKeyUsage.keyId, keyId), eq(apiKeyUsage.month, month)))
      return row?.calls ?? 0
    },
    bootstrap: (input) =>
      engine.transaction(
        function* (tx) {
          const user = yield* userByEmail(tx, input.user)
          const [workspace] = yield* rows(tx.insert(workspaces).values(input.workspace).returning())
          yield* rows(tx.insert(memberships).values({ workspaceId: workspace!.id, userId: user.id, role: 'owner', createdAt: input.now }))
          const [key] = yield* rows(
            tx
              .insert(apiKeys)
              .values({ ...input.key, userId: user.id, workspaceId: workspace!.id })
              .returning(),
          )
          return { user, workspace: workspace!, key: key! }
        },
        { immediate: true },
      ),
    async workspaceOwner(workspaceId) {
      const [row] = await db
        .select({ userId: memberships.userId })
        .from(memberships)
        .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.role, 'owner')))
        .orderBy(asc(memberships.createdAt), asc(memberships.userId))
        .limit(1)
      return row?.userId
    },
    insertWorkspace: (workspace, ownerId) =>
      engine.transaction(function* (tx) {
        const [row] = yield* rows(tx.insert(workspaces).values(workspace).returning())
        yield* rows(tx.insert(memberships).values({ workspaceId: row!.id, userId: ownerId, role: 'owner', createdAt: workspace.createdAt }))
        return row!
      }),
    addMember: (workspaceId, user, role, now) =>
      engine.transaction(
        function* (tx) {
          const row = yield* userByEmail(tx, user)
          yield* rows(
            tx
              .insert(memberships)
              .values({ workspaceId, userId: row.id, role, createdAt: now })
              .onConflictDoUpdate({ target: [memberships.workspaceId, memberships.userId], set: { role } }),
          )
          return row
        },
        { immediate: true },
      ),
    async insertKey(key) {
      const [row] = await db.insert(apiKeys).values(key).returning()
      return row!
    },
    async findKey(id) {
      const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, id)).limit(1)
      return row
    },
    listKeys: (workspaceId, mode) =>
      db
        .select()
        .from(apiKeys)
        .where(and(workspaceId ? eq(apiKeys.workspaceId, workspaceId) : undefined, mode ? eq(apiKeys.mode, mode) : undefined))
        .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id)),
    async updateKey(id, patch) {
      // A rotation (a new secret, the old one kept for a grace) names as previous the secret its caller read
      // before. Two rotations at once (on two nodes, or two requests of one process between their awaits)
      // would both name the same one, and the secret handed out by the first would stop working at once. The
      // secret the row holds when it is written is the one read in every serial run, so it is taken from the
      // row: concurrent rotations then end as if run one by one.
      const rotation = patch.keyHash !== undefined && patch.previousKeyHash != null
      const set = rotation ? { ...patch, previousKeyHash: sql`${apiKeys.keyHash}` } : patch
      const [row] = await db.update(apiKeys).set(set).where(eq(apiKeys.id, id)).returning()
      return row
    },
    async writeLastUsed(stamps) {
      if (!stamps.length) return
      // Nodes flush the same keys at once: taking the rows in one order (by id) keeps two flushes from
      // deadlocking, and a stamp older than the one stored (another node's newer use) is not written back.
      const ordered = [...stamps].sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0))
      await engine.transaction(function* (tx) {
        for (const r of ordered) {
          yield* rows(
            tx
              .update(apiKeys)
              .set({ lastUsedAt: r.at, lastUsedIp: r.ip })
              .where(and(eq(apiKeys.id, r.keyId), sql`(${apiKeys.lastUsedAt} IS NULL OR ${apiKeys.lastUsedAt} <= ${r.at})`)),
          )
        }
      })
    },
  }
}

/**
 * The reads and the call counter every authenticated request runs, prepared once (Engine.prepare): built per
 * call, each would be compiled again (on SQLite a key lookup measured 60 µs so, 2.5 µs prepared). No LIMIT:
 * each matches one row, and SQLite plans a statement with a bound LIMIT again at every run.
 */
function authStatements(engine: Engine) {
  const { db } = engine
  const { apiKeys, apiKeyUsage, memberships, users, workspaces } = engine.t
  const hash = sql.placeholder('hash')
  return {
    keyByHash: engine.prepare(
      db
        .select()
        .from(apiKeys)
        .where(or(eq(apiKeys.keyHash, hash), and(eq(apiKeys.previousKeyHash, hash), gt(apiKeys.previousKeyExpiresAt, sql.placeholder('now'))))),
    ),
    userById: engine.prepare(
      db
        .select()
        .from(users)
        .where(eq(users.id, sql.placeholder('id'))),
    ),
    // Flat: a prepared statement answers one level of fields; findMemberWorkspace nests the workspace again.
    memberWorkspace: engine.prepare(
      db
        .select({ ...getTableColumns(workspaces), role: memberships.role })
        .from(memberships)
        .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
        .where(
          and(eq(memberships.userId, sql.placeholder('userId')), or(eq(workspaces.id, sql.placeholder('ref')), eq(workspaces.slug, sql.placeholder('ref')))),
        ),
    ),
    // One statement: the conflicting row is locked and the cap checked against its latest count, so calls on
    // every node together never pass the cap. The cap is a placeholder, so one statement serves capped and
    // uncapped keys.
    countCall: engine.prepare(
      db
        .insert(apiKeyUsage)
        .values({ keyId: sql.placeholder('keyId'), month: sql.placeholder('month'), calls: 1 })
        .onConflictDoUpdate({
          target: [apiKeyUsage.keyId, apiKeyUsage.month],
          set: { calls: sql`${apiKeyUsage.calls} + 1` },
          setWhere: sql`${apiKeyUsage.calls} < ${sql.placeholder('cap')}`,
        })
        .returning({ calls: apiKeyUsage.calls }),
    ),
  }
}
