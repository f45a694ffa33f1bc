// Clicks: the in-memory buffer every counted redirect hands its click to, and the writer that flushes it
// (inline, or on SQLite a thread with its own connection in the server) with enrichment, counters and rollups.
import { engineOf } from '../../db/store'
import { createEnricher } from '../analytics'
import { defineModule, type Platform } from '../module'
import { ClickBuffer } from './click-buffer'
import { inlineClickWriter, threadClickWriter } from './click-writer'
import type { ClickHotReads, ClickReservations, ClicksRepo } from './port'
import { createClicksRepo } from './repo'
import { createClickFlush } from './repo-sqlite'
import { visitorHash } from './visitor'

// What other modules, the app and the CLI use of clicks.
export { ClickBuffer, type PendingCounts } from './click-buffer'
export type { ClickReservations } from './port'

/** 'thread': clicks are written by a thread of their own (the server); 'inline': by the caller (tests). */
export type ClickWriterKind = 'inline' | 'thread'

export function createClicksModule(platform: Platform, writerKind: ClickWriterKind = 'inline') {
  const { config, store, clock, log, metrics } = platform
  /** Key of the keyed hashes of visitors and client addresses (raw addresses are never stored). */
  const visitorKey = platform.settings.serverSecret('visitor_hash_key', clock.now())
  // Clicks are enriched (country, device, browser, OS) by whichever writer writes them: the thread builds
  // its own enricher from the same database path; this one serves inline writes and the fallback.
  const enricher = createEnricher({ geoipPath: config.geoipDb, onError: (message) => log.error(message) })
  const clicks = createClicksRepo(engineOf(store), visitorKey, enricher, config.baseUrl)
  let repo: ClicksRepo & Partial<ClickHotReads> = clicks
  let writer = inlineClickWriter(clicks)
  // Limits are decided in the database on PostgreSQL, where every node's clicks meet; SQLite's one process
  // sees every click and counts them in memory (redirect/count.ts).
  let reservations: ClickReservations | null = clicks
  if (store.engine === 'sqlite') {
    // The redirect path's read and the flush through statements prepared once; the writer thread is
    // SQLite's way to keep writes off the event loop, and this flush its fallback. PostgreSQL's flush only
    // awaits the pool, so it runs inline.
    const hot = createClickFlush(store.db.db, visitorKey, enricher, config.baseUrl)
    const inline = inlineClickWriter(hot)
    repo = { admittedAddresses: clicks.admittedAddresses, writeBatch: hot.writeBatch, admittedAddressesSync: hot.admittedAddressesSync }
    writer =
      writerKind === 'thread'
        ? threadClickWriter(store.db.path, visitorKey, inline, log, {
            baseUrl: config.baseUrl,
            geoipPath: config.geoipDb,
            logLevel: config.logLevel,
            checkpoints: store.checkpoints,
          })
        : inline
    reservations = null
  }
  const buffer = new ClickBuffer(writer, clock, log, (workspaceId) => platform.interest.wants('link.clicked', workspaceId, 'live'))
  metrics.gauge('lnk_click_buffer', 'Clicks waiting in memory for the next flush.', () => buffer.size)
  // What a node would lose if killed now: the waiting clicks and those in a write not yet committed.
  metrics.gauge('lnk_clicks_unwritten', 'Clicks in memory and not yet committed: waiting, kept as counts, or being written.', () => buffer.unwritten)
  metrics.counter('lnk_clicks_shed_total', 'Clicks kept as counts only, their detail shed, because the click writer was behind.', () => buffer.shed)
  return defineModule({
    name: 'clicks',
    repo,
    buffer,
    visitorKey,
    /** The keyed visitor hash clicks are stored under: A/B variants are chosen by it, so a visitor keeps theirs. */
    visitorOf: (ip: string, userAgent: string | null) => visitorHash(visitorKey, ip, userAgent),
    /** Country, city and parsed agent of a visit, as clicks are enriched: what routing rules read on the redirect. */
    enricher,
    /** PostgreSQL only (null on SQLite): the atomic decision a click on a link under limits takes first. */
    reservations,
    start: () => buffer.start(),
    close: () => buffer.stop(),
  })
}

export type ClicksModule = ReturnType<typeof createClicksModule>
