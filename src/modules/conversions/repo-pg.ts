// The conversions port on PostgreSQL (repo.ts has the meaning). SQLite counts two identical beacons once
// because its transaction takes the write lock up front; here nodes write at once, so the transaction first
// locks the click's row. A fingerprint covers the click id, so identical beacons queue on that lock and the
// second one's duplicate check (a fresh snapshot under READ COMMITTED) sees the first one's committed row:
// exactly one row, as SQLite's one-writer order gives.
import { and, desc, eq, gt } from 'drizzle-orm'
import type { PgDb } from '../../db/pg/client'
import type { AsyncPort } from '../../db/rows'
import { clicks, conversions, links } from '../../db/pg/schema.generated'
import { publishPg } from '../../events/repo-outbox-pg'
import { ConversionRefused, type ConversionRow, type ConversionsRepo } from './repo'

export function createConversionsRepoPg(db: PgDb): AsyncPort<ConversionsRepo> {
  return {
    async record(clickId, fingerprint, duplicateAfter, decide, now) {
      return db.transaction(async (tx) => {
        const [found] = await tx
          .select({
            id: clicks.id,
            isBot: clicks.isBot,
            linkId: links.id,
            workspaceId: links.workspaceId,
            slug: links.slug,
            domain: links.domain,
            destinationUrl: links.destinationUrl,
            conversionTracking: links.conversionTracking,
            isTest: links.isTest,
          })
          .from(clicks)
          .innerJoin(links, eq(links.id, clicks.linkId))
          .where(eq(clicks.id, clickId))
          // The click row only: the link stays free for edits and for conversions of its other clicks.
          .for('no key update', { of: clicks })
        if (!found) return new ConversionRefused('unknown_click')
        const { id, isBot, linkId, ...link } = found
        const decision = decide({ id, isBot, link: { id: linkId, ...link } })
        if (decision instanceof ConversionRefused) return decision
        const [earlier] = await tx
          .select()
          .from(conversions)
          .where(and(eq(conversions.fingerprint, fingerprint), gt(conversions.createdAt, duplicateAfter)))
          .orderBy(desc(conversions.createdAt), desc(conversions.id))
          .limit(1)
        if (earlier) return { row: earlier as ConversionRow, duplicate: true }
        const [inserted] = await tx.insert(conversions).values(decision.row).returning()
        const row = inserted as ConversionRow
        await publishPg(tx, decision.event(row), now)
        return { row, duplicate: false }
      })
    },
  }
}
