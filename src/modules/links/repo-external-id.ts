// The lookups of a link by the caller's own keys (contract 7.3: ext_{externalId} and PUT /links/upsert), on
// either engine, and why an insert that wrote nothing was refused: links carry two unique keys within reach
// of a caller (domain + slug, workspace + externalId) and the insert skips a conflict on either.
import { and, eq } from 'drizzle-orm'
import { rows, type Builder, type Engine, type Steps } from '../../db/engine'
import type { LinkRow, LinksRepo, NewLink } from './port'

export function externalIdQueries(engine: Engine): Pick<LinksRepo, 'findByExternalId' | 'findBySlug'> {
  const { db } = engine
  const { links } = engine.t
  return {
    async findByExternalId(workspaceId, externalId): Promise<LinkRow | undefined> {
      const [row] = await db
        .select()
        .from(links)
        .where(and(eq(links.workspaceId, workspaceId), eq(links.externalId, externalId)))
        .limit(1)
      return row
    },
    async findBySlug(workspaceId, domain, slug): Promise<LinkRow | undefined> {
      const [row] = await db
        .select()
        .from(links)
        .where(and(eq(links.domain, domain), eq(links.slug, slug), eq(links.workspaceId, workspaceId)))
        .limit(1)
      return row
    },
  }
}

/**
 * Which unique key kept `row` out, read inside the inserting transaction: its externalId when another link
 * of the workspace holds it, else its domain and slug. On PostgreSQL the insert has waited for the holder's
 * outcome, so the holder is committed and this read sees it.
 */
export function* insertRefusal(engine: Engine, tx: Builder, row: NewLink): Steps<'slug_taken' | 'external_id_taken'> {
  if (row.externalId == null) return 'slug_taken'
  const { links } = engine.t
  const [holder] = yield* rows(
    tx
      .select({ id: links.id })
      .from(links)
      .where(and(eq(links.workspaceId, row.workspaceId), eq(links.externalId, row.externalId)))
      .limit(1),
  )
  return holder ? 'external_id_taken' : 'slug_taken'
}
