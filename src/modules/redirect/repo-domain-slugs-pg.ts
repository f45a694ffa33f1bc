// repo-domain-slugs.ts on PostgreSQL (issue 18): the slugs of every link on one domain, archived ones included.
import { eq, sql } from 'drizzle-orm'
import type { PgDb } from '../../db/pg/client'
import { links } from '../../db/pg/schema.generated'
import type { AsyncPort } from '../../db/rows'
import type { DomainSlugsRepo } from './repo-domain-slugs'

export function createDomainSlugsRepoPg(db: PgDb): AsyncPort<DomainSlugsRepo> {
  return {
    async slugs(domain) {
      // SQLite answers in the (domain, slug) index's order, bytewise; "C" gives the same order here.
      const rows = await db.select({ slug: links.slug }).from(links).where(eq(links.domain, domain)).orderBy(sql`${links.slug} collate "C"`)
      return rows.map((r) => r.slug)
    },
  }
}
