// Clicks wait here, in memory, so the redirect never waits on a disk write. A flush hands them to the
// writer every 250 ms, as soon as 500 are waiting, and at shutdown, in chunks of at most 5,000 (one
// transaction each), one chunk at a time.
//
// Memory is bounded. When the writer falls behind (more clicks a second than the disk takes) and `maxQueued`
// clicks are in memory (waiting, or handed to the writer and not yet confirmed), further clicks keep only
// what the counters need: they are summed per link and UTC hour (clicks, bot hits) and written as counts,
// so a link's totalClicks stays exact, while their detail (the click row, the visitor and unique count,
// their share of the rollups, the link.clicked event) is shed. A click that admits a new address under
// uniqueIpLimit is never shed: the limit depends on it, nor is one the database counted when it was served
// (PostgreSQL: a link under limits), whose counts would be added twice. Shed clicks are counted in /metrics
// (lnk_clicks_shed_total) and logged when shedding starts and stops.
import type { Clock } from '../../platform/clock'
import type { Logger } from '../../platform/log'
import { HOUR_MS } from '../../platform/time'
import type { ClickBatch, ClickCounts, ClickRecord } from './port'
import type { ClickWriter } from './click-writer'

/** What is served but not yet written: the redirect's limits count it too (the link cache reads it). */
export interface PendingCounts {
  pendingClicks(linkId: string): number
  pendingAddresses(linkId: string): string[]
}

export interface ClickBufferOptions {
  intervalMs: number
  /** Clicks waiting that start a flush at once. */
  flushAt: number
  /** Clicks per write (one transaction). */
  chunk: number
  /** Clicks kept in full in memory (waiting or being written); past it, clicks are kept as counts only. */
  maxQueued: number
}

export const DEFAULT_BUFFER_OPTIONS: ClickBufferOptions = { intervalMs: 250, flushAt: 500, chunk: 5_000, maxQueued: 50_000 }

/** Chunks handed to the writer before the first is confirmed. */
const IN_FLIGHT = 4

interface Pending {
  clicks: number
  /** Allocated for the few links under uniqueIpLimit only: one array per clicked link added up under load. */
  addresses: string[] | null
}

export class ClickBuffer implements PendingCounts {
  private queue: ClickRecord[] = []
  /** Clicks handed to the writer and not yet confirmed: they hold memory as much as the queue does. */
  private writing = 0
  /** Shed clicks handed to the writer as counts and not yet confirmed (they take no room in the queue). */
  private writingCounts = 0
  /** Clicks kept as counts only, by link and hour. */
  private counts = new Map<string, ClickCounts>()
  /** Per link, what is queued, counted or being written, until the writer confirms it. */
  private pending = new Map<string, Pending>()
  private timer: ReturnType<typeof setInterval> | null = null
  private flushing: Promise<void> | null = null
  private soon = false
  /** Clicks whose detail was shed since the start (the metric), and in the current episode (the log). */
  shed = 0
  private shedInEpisode = 0

  constructor(
    private writer: ClickWriter,
    private clock: Clock,
    private log: Logger,
    /** Whether anyone listens for link.clicked in the workspace. */
    private announces: (workspaceId: string) => boolean = () => true,
    private options: ClickBufferOptions = DEFAULT_BUFFER_OPTIONS,
  ) {}

  /** Clicks waiting in full, plus those kept as counts. */
  get size() {
    return this.queue.length + countsIn(this.counts.values())
  }

  /** Every click not yet in the database: waiting, kept as counts, or being written. */
  get unwritten() {
    return this.size + this.writing + this.writingCounts
  }

  /** Takes the record as it is (no copy); sets whether its event is to be written. */
  add(click: ClickRecord) {
    // A bot's hit is written with the clicks but counts toward nothing the limits read; a click counted
    // when it was served (PostgreSQL, a link under limits) is in the database already.
    if (!click.isBot && !click.counted) {
      let p = this.pending.get(click.linkId)
      if (!p) this.pending.set(click.linkId, (p = { clicks: 0, addresses: null }))
      p.clicks++
      if (click.newAddress) (p.addresses ??= []).push(click.newAddress)
    }
    const room = this.queue.length + this.writing < this.options.maxQueued
    // Counts would add a counted click's total_clicks again: it is kept in full, like an admitted address.
    if (room || click.newAddress || click.counted) {
      if (room && this.shedInEpisode) this.endEpisode()
      click.announce = this.announces(click.workspaceId)
      this.queue.push(click)
    } else {
      this.count(click)
    }
    if (this.queue.length >= this.options.flushAt && !this.soon) {
      this.soon = true
      setTimeout(() => {
        this.soon = false
        void this.flush()
      }, 0)
    }
  }

  private count(click: ClickRecord) {
    const hour = click.clickedAt - (click.clickedAt % HOUR_MS)
    const key = `${click.linkId}\u0000${hour}`
    let c = this.counts.get(key)
    if (!c) this.counts.set(key, (c = { linkId: click.linkId, workspaceId: click.workspaceId, hour, clicks: 0, bots: 0 }))
    if (click.isBot) c.bots++
    else c.clicks++
    this.shed++
    if (this.shedInEpisode++ === 0) this.log.warn('click writer behind: keeping further clicks as counts only', { waiting: this.queue.length })
  }

  private endEpisode() {
    this.log.warn('click writer caught up: clicks are kept in full again', { shed: this.shedInEpisode })
    this.shedInEpisode = 0
  }

  pendingClicks(linkId: string) {
    return this.pending.get(linkId)?.clicks ?? 0
  }

  pendingAddresses(linkId: string) {
    return [...(this.pending.get(linkId)?.addresses ?? [])]
  }

  start() {
    this.timer ??= setInterval(() => void this.flush(), this.options.intervalMs)
  }

  async stop() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.flush()
    await this.writer.close()
  }

  /** Writes everything waiting, chunk by chunk; a failed write keeps its clicks for the next flush. */
  async flush(): Promise<void> {
    // One drain at a time: callers that waited for the same drain must not start one each.
    while (this.flushing) await this.flushing
    if (!this.queue.length && !this.counts.size) return
    this.flushing = this.drain().finally(() => {
      this.flushing = null
    })
    await this.flushing
  }

  private async drain() {
    // Only what is waiting now: clicks arriving meanwhile are the next flush's, so a steady stream cannot
    // keep one flush going forever.
    const waiting = this.queue
    this.queue = []
    this.writing = waiting.length
    const counts = [...this.counts.values()]
    this.counts.clear()
    this.writingCounts = countsIn(counts)
    const chunks: ClickBatch[] = []
    for (let at = 0; at < waiting.length || (at === 0 && counts.length); at += this.options.chunk) {
      chunks.push({ clicks: waiting.slice(at, at + this.options.chunk), counts: at === 0 ? counts : [] })
    }
    // A few chunks in flight at once: the writer takes them in order, and never sits idle waiting for this
    // thread, busy answering requests, to send the next one.
    const failed: number[] = []
    let next = 0
    const lane = async () => {
      while (next < chunks.length) {
        const i = next++
        const batch = chunks[i]!
        try {
          await this.writer.write(batch, this.clock.now())
          this.written(batch.clicks, batch.counts)
        } catch (err) {
          this.writing -= batch.clicks.length
          this.writingCounts -= countsIn(batch.counts)
          failed.push(i)
          this.log.error('click flush failed; will retry', { clicks: batch.clicks.length, error: (err as Error).message })
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, chunks.length) }, lane))
    // Kept in their order, ahead of what arrived meanwhile.
    failed.sort((a, b) => a - b)
    this.queue = failed.flatMap((i) => chunks[i]!.clicks).concat(this.queue)
    for (const i of failed) for (const c of chunks[i]!.counts) this.recount(c)
    this.compact()
  }

  private recount(c: ClickCounts) {
    const key = `${c.linkId}\u0000${c.hour}`
    const into = this.counts.get(key)
    if (!into) this.counts.set(key, c)
    else {
      into.clicks += c.clicks
      into.bots += c.bots
    }
  }

  /** The writer has them: they no longer count as pending. */
  private written(chunk: ClickRecord[], counts: ClickCounts[]) {
    this.writing -= chunk.length
    for (const c of chunk) {
      if (c.isBot || c.counted) continue
      const p = this.pending.get(c.linkId)
      if (!p) continue
      p.clicks--
      if (c.newAddress && p.addresses) {
        const at = p.addresses.indexOf(c.newAddress)
        if (at >= 0) p.addresses.splice(at, 1)
      }
    }
    for (const c of counts) {
      const p = this.pending.get(c.linkId)
      if (p) p.clicks -= c.clicks
    }
    this.writingCounts -= countsIn(counts)
  }

  /**
   * Forgets links with nothing pending. Done once per flush rather than per click: deleting from a large
   * map at every written click cost more than the rest of the bookkeeping together.
   */
  private compact() {
    if (this.pending.size < 1024) {
      for (const [id, p] of this.pending) if (p.clicks <= 0 && !p.addresses?.length) this.pending.delete(id)
      return
    }
    const kept = new Map<string, Pending>()
    for (const [id, p] of this.pending) if (p.clicks > 0 || p.addresses?.length) kept.set(id, p)
    this.pending = kept
  }
}

function countsIn(counts: Iterable<ClickCounts>): number {
  let n = 0
  for (const c of counts) n += c.clicks + c.bots
  return n
}
