// Clicks wait here, in memory, so the redirect never waits on a disk write. A flush writes them in one
// transaction every 250 ms, as soon as 500 are waiting, and at shutdown.
import type { Clock } from '../../clock'
import type { Logger } from '../../log'
import type { ClicksRepo, ClickWrite } from './clicks-repo'
import type { PendingCounts } from './cache'

export class ClickBuffer implements PendingCounts {
  private queue: ClickWrite[] = []
  private perLink = new Map<string, { clicks: number; addresses: string[] }>()
  private timer: ReturnType<typeof setInterval> | null = null
  private flushing: Promise<void> | null = null
  private soon = false

  constructor(
    private repo: ClicksRepo,
    private clock: Clock,
    private log: Logger,
    private options = { intervalMs: 250, maxRows: 500 },
  ) {}

  get size() {
    return this.queue.length
  }

  add(write: ClickWrite) {
    this.queue.push(write)
    const p = this.perLink.get(write.click.linkId) ?? { clicks: 0, addresses: [] }
    p.clicks++
    if (write.newAddress) p.addresses.push(write.newAddress)
    this.perLink.set(write.click.linkId, p)
    if (this.queue.length >= this.options.maxRows && !this.soon) {
      this.soon = true
      setTimeout(() => {
        this.soon = false
        void this.flush()
      }, 0)
    }
  }

  pendingClicks(linkId: string) {
    return this.perLink.get(linkId)?.clicks ?? 0
  }

  pendingAddresses(linkId: string) {
    return this.perLink.get(linkId)?.addresses ?? []
  }

  start() {
    this.timer ??= setInterval(() => void this.flush(), this.options.intervalMs)
  }

  async stop() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.flush()
  }

  /** Writes everything waiting; a failed write keeps the clicks for the next flush. */
  async flush(): Promise<void> {
    if (this.flushing) await this.flushing
    if (!this.queue.length) return
    const batch = this.queue
    const counts = this.perLink
    this.queue = []
    this.perLink = new Map()
    this.flushing = this.repo
      .writeBatch(batch, this.clock.now())
      .then(() => undefined)
      .catch((err) => {
        this.log.error('click flush failed; will retry', { clicks: batch.length, error: (err as Error).message })
        this.queue = batch.concat(this.queue)
        for (const [id, c] of counts) {
          const p = this.perLink.get(id) ?? { clicks: 0, addresses: [] }
          this.perLink.set(id, { clicks: p.clicks + c.clicks, addresses: [...c.addresses, ...p.addresses] })
        }
      })
      .finally(() => (this.flushing = null))
    await this.flushing
  }
}
