// Queries of the conversions area, on either engine. A conversion is written by one transaction that also
// reads its click (and the click's link) and any identical beacon of the last 24 hours, and publishes
// conversion.created: a refusal or a failure leaves nothing behind, and two identical beacons are never both
// counted. SQLite's transaction takes the one write lock up front, so they run one after the other; on
// PostgreSQL, where nodes write at once, the transaction first locks the click's row. A fingerprint covers
// the click id, so identical beacons queue on that lock and the second one's duplicate check (a fresh
// snapshot under READ COMMITTED) sees the first one's committed row.
import { and, desc, eq, gt } from 'drizzle-orm'
import { rows, type Engine } from '../../db/engine'
import { publishing } from '../../events/outbox'
import { ConversionRefused, type ConversionRow, type ConversionsRepo } from './port'

export function createConversionsRepo(engine: Engine): ConversionsRepo {
  const { clicks, conversions, links } = engine.t
  return {
    record: (clickId, fingerprint, duplicateAfter, decide, now) =>
      engine.transaction(
        function* (tx) {
          const [found] = yield* rows(
            engine.forUpdate(
              tx
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
                .where(eq(clicks.id, clickId)),
              // The click row only: the link stays free for edits and for conversions of its other clicks.
              { of: clicks, weak: true },
            ),
          )
          if (!found) return new ConversionRefused('unknown_click')
          const { id, isBot, linkId, ...link } = found
          const decision = decide({ id, isBot, link: { id: linkId, ...link } })
          if (decision instanceof ConversionRefused) return decision
          const [earlier] = yield* rows(
            tx
              .select()
              .from(conversions)
              .where(and(eq(conversions.fingerprint, fingerprint), gt(conversions.createdAt, duplicateAfter)))
              .orderBy(desc(conversions.createdAt), desc(conversions.id))
              .limit(1),
          )
          if (earlier) return { row: earlier as ConversionRow, duplicate: true }
          const [inserted] = yield* rows(tx.insert(conversions).values(decision.row).returning())
          const row = inserted as ConversionRow
          yield* publishing(engine, tx, decision.event(row), now)
          return { row, duplicate: false }
        },
        { immediate: true },
      ),
  }
}
