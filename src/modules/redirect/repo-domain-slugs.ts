// The slugs of every link on one domain, archived ones included: what the link cache drops when the bus
// says the domain changed (its links may have been archived with it). Synchronous like the link lookup:
// the cache is dropped in the bus listener, before the next request is answered.
import type { Db } from '../../db/client'

export interface DomainSlugsRepo {
  slugsSync(domain: string): string[]
}

export function createDomainSlugsRepo(db: Db): DomainSlugsRepo {
  // Served by the (domain, slug) unique index.
  const slugs = db.$client.prepare('SELECT slug FROM links WHERE domain = ?')
  return {
    slugsSync: (domain) => (slugs.all(domain) as { slug: string }[]).map((r) => r.slug),
  }
}
