// Which links an analytics read covers: one condition on `links`, shared by every read of the area so the
// overview, the timeline, the top links and the breakdown always agree on a key's scope.
import { and, eq, exists, inArray, sql, type SQL } from 'drizzle-orm'
import type { Builder, Tables } from '../../db/engine'
import type { AnalyticsScope } from './port'

/** The scope's links: live, or test for the sandbox; one link; the key's domains, folders and tags. */
export function scopeLinks(db: Builder, t: Pick<Tables, 'links' | 'linkTags'>, s: AnalyticsScope): SQL {
  const { links, linkTags } = t
  return and(
    eq(links.workspaceId, s.workspaceId),
    eq(links.isTest, s.test),
    s.linkId ? eq(links.id, s.linkId) : undefined,
    s.domains?.length ? inArray(links.domain, [...s.domains]) : undefined,
    s.folders?.length ? inArray(links.folderId, [...s.folders]) : undefined,
    s.tags?.length
      ? exists(
          db
            .select({ x: sql`1` })
            .from(linkTags)
            .where(and(eq(linkTags.linkId, links.id), inArray(linkTags.tag, [...s.tags]))),
        )
      : undefined,
  )!
}
