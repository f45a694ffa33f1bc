// The serving path of pages on SQLite (port.ts's PagesSyncReads): read without awaiting, as a cache miss of
// the redirect path is, with the same statements as repo.ts, prepared where a visit runs them.
import { and, eq, inArray, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import * as tables from '../../db/schema'
import { asTarget, type BlockOwner, type PageRow, type PagesSyncReads } from './port'
import { blockOwnerQuery, linkTargetColumns, treeOf, treeQuery } from './repo'

export function createPagesSyncReads(db: Db): PagesSyncReads {
  const { bridgePages, links, pageBlocks } = tables
  const byBlock = blockOwnerQuery(tables, db)
    .where(eq(pageBlocks.id, sql.placeholder('id')))
    .prepare()
  const bySlug = db
    .select()
    .from(bridgePages)
    .where(and(eq(bridgePages.domain, sql.placeholder('domain')), eq(bridgePages.slug, sql.placeholder('slug'))))
    .prepare()
  return {
    findBySlugSync: (domain, slug) => bySlug.get({ domain, slug }) as PageRow | undefined,
    findByIdSync: (id) => db.select().from(bridgePages).where(eq(bridgePages.id, id)).get() as PageRow | undefined,
    treeSync: (pageId) => treeOf(treeQuery(tables, db, pageId).all()),
    blockOwnerSync: (blockId) => byBlock.get({ id: blockId }) as BlockOwner | undefined,
    linkTargetsSync: (ids) => (ids.length ? db.select(linkTargetColumns(tables)).from(links).where(inArray(links.id, ids)).all().map(asTarget) : []),
  }
}
