// Queries of the tags area, on either engine. A change and its event are one transaction; a rename or a
// deletion rewrites the links carrying the tag in that same transaction (repo-rewrite.ts), so a link never shows
// a tag name the workspace no longer has.
import { and, asc, count, eq, inArray } from 'drizzle-orm'
import { rows, type Builder, type Engine, type Steps } from '../../db/engine'
import { isUniqueViolation } from '../../db/errors'
import { publishing } from '../../events/outbox'
import { newId } from '../../platform/random'
import type { TagOutcome, TagRow, TagsRepo } from './port'
import { rewritingTag } from './repo-rewrite'
import { tagData } from './view'

/** Names one insert carries: 6 values each, well inside SQLite's limit of bound values. */
const NAMES_PER_INSERT = 500

/**
 * Makes every name in `names` a tag of the workspace, inside the caller's transaction (a link write's): the
 * names that were not tags yet are inserted and their tag.created published. Sorted, so two writers insert
 * shared names in one order (PostgreSQL waits on an uncommitted name rather than deadlocking).
 */
export function* ensuringTags(engine: Engine, tx: Builder, workspaceId: string, names: Iterable<string>, mode: 'live' | 'test', now: number): Steps<void> {
  const { tags } = engine.t
  const wanted = [...new Set(names)].sort()
  for (let i = 0; i < wanted.length; i += NAMES_PER_INSERT) {
    const chunk = wanted.slice(i, i + NAMES_PER_INSERT)
    const created = yield* rows(
      tx
        .insert(tags)
        .values(chunk.map((name) => ({ id: newId('tag'), workspaceId, name, color: null, createdAt: now, updatedAt: now })))
        .onConflictDoNothing({ target: [tags.workspaceId, tags.name] })
        .returning(),
    )
    for (const row of created) yield* publishing(engine, tx, { type: 'tag.created', workspaceId, mode, data: tagData(row) }, now)
  }
}

export function createTagsRepo(engine: Engine): TagsRepo {
  const { db } = engine
  const { tags, links, linkTags } = engine.t

  /** The tag, locked against concurrent changes for the rest of the transaction. */
  function* held(tx: Builder, workspaceId: string, id: string): Steps<TagRow | undefined> {
    const [row] = yield* rows(
      engine.forUpdate(
        tx
          .select()
          .from(tags)
          .where(and(eq(tags.workspaceId, workspaceId), eq(tags.id, id))),
      ),
    )
    return row
  }

  return {
    async list(workspaceId, names, page, perPage) {
      if (names && !names.length) return { rows: [], total: 0 }
      const w = and(eq(tags.workspaceId, workspaceId), names ? inArray(tags.name, names) : undefined)
      const [counted, found] = await Promise.all([
        db.select({ n: count() }).from(tags).where(w),
        db
          .select()
          .from(tags)
          .where(w)
          .orderBy(asc(engine.byteOrder(tags.name)))
          .limit(perPage)
          .offset((page - 1) * perPage),
      ])
      return { rows: found, total: counted[0]?.n ?? 0 }
    },
    async counts(workspaceId, names, filter) {
      if (!names.length) return new Map()
      const found = await db
        .select({ tag: linkTags.tag, n: count() })
        .from(linkTags)
        .innerJoin(links, eq(links.id, linkTags.linkId))
        .where(
          and(
            inArray(linkTags.tag, names),
            eq(links.workspaceId, workspaceId),
            filter.isTest === undefined ? undefined : eq(links.isTest, filter.isTest),
            filter.domains?.length ? inArray(links.domain, filter.domains) : undefined,
            filter.folders?.length ? inArray(links.folderId, filter.folders) : undefined,
          ),
        )
        .groupBy(linkTags.tag)
      return new Map(found.map((r) => [r.tag, Number(r.n)]))
    },
    async find(workspaceId, id) {
      const [row] = await db
        .select()
        .from(tags)
        .where(and(eq(tags.workspaceId, workspaceId), eq(tags.id, id)))
        .limit(1)
      return row
    },
    async create(row, event, now) {
      try {
        return await engine.transaction(function* (tx) {
          const [inserted] = yield* rows(tx.insert(tags).values(row).onConflictDoNothing().returning())
          if (!inserted) return 'exists' as const
          yield* publishing(engine, tx, event(inserted), now)
          return inserted
        })
      } catch (err) {
        if (isUniqueViolation(err, 'tags_workspace_name_unique')) return 'exists'
        throw err
      }
    },
    async update(workspaceId, id, change, event, now) {
      try {
        return await engine.transaction(
          function* (tx) {
            const before = yield* held(tx, workspaceId, id)
            if (!before) return undefined
            const renamed = change.name !== undefined && change.name !== before.name
            if (renamed) {
              const [taken] = yield* rows(
                tx
                  .select({ id: tags.id })
                  .from(tags)
                  .where(and(eq(tags.workspaceId, workspaceId), eq(tags.name, change.name!))),
              )
              if (taken) return 'exists' as const
            }
            const [after] = yield* rows(
              tx
                .update(tags)
                .set({ ...(renamed ? { name: change.name } : {}), ...(change.color !== undefined ? { color: change.color } : {}), updatedAt: now })
                .where(eq(tags.id, id))
                .returning(),
            )
            const linksChanged = renamed ? yield* rewritingTag(engine, tx, workspaceId, before.name, change.name!, now) : 0
            const outcome: TagOutcome = { before, after: after!, linksChanged }
            yield* publishing(engine, tx, event(outcome), now)
            return outcome
          },
          { immediate: true },
        )
      } catch (err) {
        if (isUniqueViolation(err, 'tags_workspace_name_unique')) return 'exists'
        throw err
      }
    },
    delete: (workspaceId, id, event, now) =>
      engine.transaction(
        function* (tx) {
          const before = yield* held(tx, workspaceId, id)
          if (!before) return undefined
          const linksChanged = yield* rewritingTag(engine, tx, workspaceId, before.name, null, now)
          yield* rows(tx.delete(tags).where(eq(tags.id, id)))
          const outcome: TagOutcome = { before, after: before, linksChanged }
          yield* publishing(engine, tx, event(outcome), now)
          return outcome
        },
        { immediate: true },
      ),
  }
}
