// Clicks: the in-memory buffer every counted redirect hands its click to, and the writer that flushes it
// (inline, or on SQLite a thread with its own connection in the server) with enrichment, counters and rollups.
import { withAsync, type Port } from '../../db/rows'
import { onEngine } from '../../db/store'
import { createEnricher } from '../analytics/enrich'
import { defineModule, type Platform } from '../module'
import { ClickBuffer } from './click-buffer'
import { inlineClickWriter, threadClickWriter } from './click-writer'
import { createClicksRepo, type ClickReservations, type ClicksRepo } from './repo'
import { createClicksRepoPg } from './repo-pg'

/** 'thread': clicks are written by a thread of their own (the server); 'inline': by the caller (tests). */
export type ClickWriterKind = 'inline' | 'thread'

export function createClicksModule(platform: Platform, writerKind: ClickWriterKind = 'inline') {
  const { config, store, clock, log, metrics } = platform
  /** Key of the keyed hashes of visitors and client addresses (raw addresses are never stored). */
  const visitorKey = platform.settings.serverSecret('visitor_hash_key', clock.now())
  // Clicks are enriched (country, device, browser, OS) by whichever writer writes them: the thread builds
  // its own enricher from the same database path; this one serves inline writes and the fallback.
  const enricher = createEnricher({ geoipPath: config.geoipDb, onError: (message) => log.error(message) })
  const { repo, writer, reservations } = onEngine(
    store,
    (s) => {
      const repo = withAsync(createClicksRepo(s.db.db, visitorKey, enricher, config.baseUrl))
      const inline = inlineClickWriter(repo)
      const writer =
        writerKind === 'thread' ? threadClickWriter(s.db.path, visitorKey, inline, log, { baseUrl: config.baseUrl, geoipPath: config.geoipDb, logLevel: config.logLevel, checkpoints: s.checkpoints }) : inline
      // SQLite's one process sees every click: the limits are counted in memory (redirect/count.ts).
      return { repo: repo as Port<ClicksRepo>, writer, reservations: null as ClickReservations | null }
    },
    // The writer thread is SQLite's way to keep writes off the event loop; PostgreSQL's flush only awaits
    // the pool, so it runs inline. Limits are decided in the database, where every node's clicks meet.
    (s) => {
      const repo = createClicksRepoPg(s.db, visitorKey, enricher, config.baseUrl)
      return { repo: repo as Port<ClicksRepo>, writer: inlineClickWriter(repo), reservations: repo as ClickReservations | null }
    },
  )
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
    /** PostgreSQL only (null on SQLite): the atomic decision a click on a link under limits takes first. */
    reservations,
    start: () => buffer.start(),
    close: () => buffer.stop(),
  })
}

export type ClicksModule = ReturnType<typeof createClicksModule>
