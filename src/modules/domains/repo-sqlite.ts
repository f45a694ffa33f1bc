// SQLite's synchronous read of the served set (port.ts's DomainsSyncReads).
import { eq } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { domains } from '../../db/schema'
import type { DomainRow, DomainsSyncReads } from './port'

export function createDomainsSyncReads(db: Db): DomainsSyncReads {
  return {
    verifiedSync: () => db.select().from(domains).where(eq(domains.verificationStatus, 'verified')).orderBy(domains.domain).all() as DomainRow[],
  }
}
