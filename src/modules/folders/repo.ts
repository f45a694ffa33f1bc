// Queries of the folders area, on either engine. A folder's deletion and what becomes of its links (moved or
// deleted, each with its event) are one transaction; the folder row is locked first, so of two deletions one
// does the work and the other answers gone, and on PostgreSQL the target of a move is locked with it, so it
// cannot vanish under the links moved into it, nor be deleted as empty while they arrive.
import { and, count, eq, exists, inArray, isNotNull, not, sql, type SQL } from 'drizzle-orm'
import { rows, type Builder, type Engine } from '../../db/engine'
import { publishing, publishingMany, type PublishInput } from '../../events/outbox'
import type { LinkRow } from '../links'
import type { FoldersRepo, LinkScope } from './port'

/**
 * `publishNow`: on SQLite, the outbox insert prepared once on the engine's connection (events/outbox.ts), for the
 * event of every link a deletion moves or deletes: a folder of 100,000 links must not hold the one write lock
 * for a minute of statements built one by one. Without it the events are written a few hundred per statement.
 */
export function createFoldersRepo(engine: Engine, publishNow?: (input: PublishInput, now: number) => unknown): FoldersRepo {
  const { db } = engine
  const { folders, links, linkTags } = engine.t

  /** The key's domain and tag filters over links (its folder filter is the caller's to apply to folders). */
  const withinScope = (b: Builder, scope: LinkScope['scope']): SQL | undefined =>
    and(
      scope?.domains?.length ? inArray(links.domain, scope.domains) : undefined,
      scope?.tags?.length
        ? exists(
            b
              .select({ x: sql`1` })
              .from(linkTags)
              .where(and(eq(linkTags.linkId, links.id), inArray(linkTags.tag, scope.tags))),
          )
        : undefined,
    )

  /**
   * Locks the folders in id order: two deletions that move links into each other's folder take their locks in
   * the same order, so one waits for the other instead of deadlocking.
   */
  const lockFolders = (tx: Builder, workspaceId: string, ids: string[]) =>
    rows(
      engine.forUpdate(
        tx
          .select()
          .from(folders)
          .where(and(eq(folders.workspaceId, workspaceId), inArray(folders.id, ids)))
          .orderBy(engine.byteOrder(folders.id)),
      ),
    )

  function* publishAll(tx: Builder, events: PublishInput[], now: number) {
    if (publishNow) for (const event of events) publishNow(event, now)
    else yield* publishingMany(engine, tx, events, now)
  }

  return {
    async list(workspaceId, only) {
      if (only && !only.length) return []
      return db
        .select()
        .from(folders)
        .where(and(eq(folders.workspaceId, workspaceId), only ? inArray(folders.id, [...only]) : undefined))
        .orderBy(engine.byteOrder(folders.name), engine.byteOrder(folders.id))
    },

    async find(workspaceId, id) {
      const [row] = await db
        .select()
        .from(folders)
        .where(and(eq(folders.workspaceId, workspaceId), eq(folders.id, id)))
        .limit(1)
      return row
    },

    async linkCounts(ids, s) {
      if (!ids.length) return new Map()
      const found = await db
        .select({ folderId: links.folderId, n: count() })
        .from(links)
        .where(and(eq(links.workspaceId, s.workspaceId), inArray(links.folderId, [...ids]), eq(links.isTest, s.isTest), withinScope(db, s.scope)))
        .groupBy(links.folderId)
      // PostgreSQL answers count() as text through some drivers: numbers leave here whichever engine answered.
      return new Map(found.map((r) => [r.folderId!, Number(r.n)]))
    },

    async linksOutsideScope(workspaceId, folderId, scope) {
      const inside = withinScope(db, scope)
      if (!inside) return 0
      const [row] = await db
        .select({ n: count() })
        .from(links)
        .where(and(eq(links.workspaceId, workspaceId), eq(links.folderId, folderId), not(inside)))
      return Number(row?.n ?? 0)
    },

    insert: (row, event, now) =>
      engine.transaction(function* (tx) {
        yield* rows(tx.insert(folders).values(row))
        yield* publishing(engine, tx, event, now)
      }),

    update: (workspaceId, id, patch, event, now) =>
      engine.transaction(function* (tx) {
        const [row] = yield* rows(
          tx
            .update(folders)
            .set(patch)
            .where(and(eq(folders.workspaceId, workspaceId), eq(folders.id, id)))
            .returning(),
        )
        if (!row) return undefined
        yield* publishing(engine, tx, event(row), now)
        return row
      }),

    delete: (workspaceId, id, onLinks, event, now) =>
      engine.transaction(
        function* (tx) {
          const locked = yield* lockFolders(tx, workspaceId, onLinks.kind === 'move' ? [id, onLinks.to] : [id])
          const row = locked.find((f) => f.id === id)
          if (!row) return { ok: false as const, reason: 'gone' as const }
          const inFolder = and(eq(links.workspaceId, workspaceId), isNotNull(links.folderId), eq(links.folderId, id))
          let moved: LinkRow[] = []
          let deleted: LinkRow[] = []
          if (onLinks.kind === 'refuse') {
            const [held] = yield* rows(tx.select({ n: count() }).from(links).where(inFolder))
            const n = Number(held?.n ?? 0)
            if (n > 0) return { ok: false as const, reason: 'not_empty' as const, links: n }
          } else if (onLinks.kind === 'move') {
            if (!locked.some((f) => f.id === onLinks.to)) return { ok: false as const, reason: 'target_gone' as const }
            moved = yield* rows(tx.update(links).set({ folderId: onLinks.to, updatedAt: now }).where(inFolder).returning())
            yield* publishAll(tx, moved.map(onLinks.event), now)
          } else {
            deleted = yield* rows(tx.delete(links).where(inFolder).returning())
            yield* publishAll(tx, deleted.map(onLinks.event), now)
          }
          yield* rows(tx.delete(folders).where(eq(folders.id, id)))
          yield* publishing(engine, tx, event(row, moved.length, deleted.length), now)
          return { ok: true as const, moved, deleted }
        },
        { immediate: true },
      ),
  }
}
