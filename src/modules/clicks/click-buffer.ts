// Clicks wait here, in memory, so the redirect never waits on a disk write. A flush hands them to the
// writer (one transaction) every 250 ms, as soon as 500 are waiting, and at shutdown.
import type { Clock } from '../../platform/clock'
import type { Logger } from '../../platform/log'
import type { ClickRecord } from './repo'
import type { ClickWriter } from './click-writer'

/** What is served but not yet written: the redirect's limits count it too (the link cache reads it). */
export interface PendingCounts {
  pendingClicks(linkId: string): number
  pendingAddresses(linkId: string): string[]
}

export class ClickBuffer implements PendingCounts {
  private queue: ClickRecord[] = []
  private perLink = new Map<string, { clicks: number; addresses: string[] }>()
  /** Counts of the batch being written: still pending until the writer confirms it. */
  private inflight = new Map<string, { clicks: number; addresses: string[] }>()
  private timer: ReturnType<typeof setInterval> | null = null
  private flushing: Promise<void> | null = null
  private soon = false

  constructor(
    private writer: ClickWriter,
    private clock: Clock,
    private log: Logger,
    private options = { intervalMs: 250, maxRows: 500 },
  ) {}

  get size() {
    return this.queue.length
  }

  add(click: ClickRecord) {
    this.queue.push(click)
    // A bot's hit is written with the clicks but counts toward nothing the limits read.
    if (!click.isBot) {
      const p = this.perLink.get(click.linkId) ?? { clicks: 0, addresses: [] }
      p.clicks++
      if (click.newAddress) p.addresses.push(click.newAddress)
      this.perLink.set(click.linkId, p)
    }
    if (this.queue.length >= this.options.maxRows && !this.soon) {
      this.soon = true
      setTimeout(() => {
        this.soon = false
        void this.flush()
      }, 0)
    }
  }

  pendingClicks(linkId: string) {
    return (this.perLink.get(linkId)?.clicks ?? 0) + (this.inflight.get(linkId)?.clicks ?? 0)
  }

  pendingAddresses(linkId: string) {
    return [...(this.inflight.get(linkId)?.addresses ?? []), ...(this.perLink.get(linkId)?.addresses ?? [])]
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

  /** Writes everything waiting; a failed write keeps the clicks for the next flush. */
  async flush(): Promise<void> {
    if (this.flushing) await this.flushing
    if (!this.queue.length) return
    const batch = this.queue
    const counts = this.perLink
    this.queue = []
    this.perLink = new Map()
    this.inflight = counts
    this.flushing = this.writer
      .write(batch, this.clock.now())
      .then(() => undefined)
      .catch((err) => {
        this.log.error('click flush failed; will retry', { clicks: batch.length, error: (err as Error).message })
        this.queue = batch.concat(this.queue)
        for (const [id, c] of counts) {
          const p = this.perLink.get(id) ?? { clicks: 0, addresses: [] }
          this.perLink.set(id, { clicks: p.clicks + c.clicks, addresses: [...c.addresses, ...p.addresses] })
        }
      })
      .finally(() => {
        this.inflight = new Map()
        this.flushing = null
      })
    await this.flushing
  }
}
