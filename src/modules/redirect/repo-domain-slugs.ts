// The slugs of every link on one domain, archived ones included: what the link cache drops when the bus says
// the domain changed (its links may have been archived with it). SQLite answers it synchronously instead
// (repo-sqlite.ts), so the cache is dropped before the next request is answered.
import { eq } from 'drizzle-orm'
import type { Engine } from '../../db/engine'
import type { DomainSlugsRepo } from './port'

export function createDomainSlugsRepo(engine: Engine): DomainSlugsRepo {
  const { links } = engine.t
  return {
    async slugs(domain) {
      // Served by the (domain, slug) unique index, in its order on SQLite: bytewise.
      const rows = await engine.db.select({ slug: links.slug }).from(links).where(eq(links.domain, domain)).orderBy(engine.byteOrder(links.slug))
      return rows.map((r) => r.slug)
    },
  }
}
