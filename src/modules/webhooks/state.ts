// What the webhooks area keeps in memory: the fan-out cache generation, and the requests in flight (per
// endpoint and in total) that the concurrency caps count.
import type { Deps } from '../../context'
import type { EgressPolicy } from '../../net/egress'
import type { DeliverySlots, WebhooksRepo } from './port'

type Resolver = (host: string) => Promise<string[]>

export class WebhooksState {
  /** Bumped by every endpoint change; the fan-out drops its cached endpoint lists when it moves. */
  generation = 0
  total = 0
  private perEndpoint = new Map<string, number>()
  /** Deliveries being sent by this process: a second job for the same attempt waits its turn. */
  readonly sending = new Set<string>()
  /** DNS for target hosts; tests replace it to pin what a host resolves to. Null: the system resolver. */
  resolver: Resolver | null = null

  /** `announce` tells the other nodes (the bus); their lists drop through stale(). */
  constructor(private readonly announce: () => void = () => {}) {}

  /** An endpoint changed here (after its commit). */
  endpointChanged() {
    this.generation++
    this.announce()
  }

  /** An endpoint changed on another node, or notices may have been lost: every cached list is stale. */
  stale() {
    this.generation++
  }

  inFlight(endpointId: string) {
    return this.perEndpoint.get(endpointId) ?? 0
  }

  /** Attempts waiting for a slot, oldest first, each with the caps it takes a slot under. */
  private waiters: Waiter[] = []

  acquire(endpointId: string) {
    this.total++
    this.perEndpoint.set(endpointId, this.inFlight(endpointId) + 1)
  }

  /** Frees a slot and hands it straight to the oldest waiter it fits, so no newcomer takes it first. */
  release(endpointId: string) {
    this.total--
    const n = this.inFlight(endpointId) - 1
    if (n > 0) this.perEndpoint.set(endpointId, n)
    else this.perEndpoint.delete(endpointId)
    // One slot was freed, so one waiter at most is let in. Bounded: there are no more waiters than slots.
    const i = this.waiters.findIndex((w) => this.fits(w.endpointId, w.perEndpoint, w.total))
    if (i >= 0) {
      const [w] = this.waiters.splice(i, 1)
      this.acquire(w!.endpointId)
      w!.grant()
    }
  }

  private fits(endpointId: string, perEndpoint: number, total: number) {
    return this.inFlight(endpointId) < perEndpoint && this.total < total
  }

  /**
   * Takes a slot under both caps, waiting up to `waitMs` for one to free. A short wait in memory is far
   * cheaper than putting the job off (two writes); false means the caller should put it off. A waiter is
   * woken only when a slot is handed to it, not at every release (with 60 attempts waiting on one
   * endpoint, waking them all cost more than the delivery).
   */
  take(endpointId: string, perEndpoint: number, total: number, waitMs: number): Promise<boolean> {
    // A slot freed while attempts wait was handed to one of them already, so taking a free one here never
    // jumps that queue.
    if (this.fits(endpointId, perEndpoint, total)) {
      this.acquire(endpointId)
      return Promise.resolve(true)
    }
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        endpointId,
        perEndpoint,
        total,
        grant: () => {
          clearTimeout(timer)
          resolve(true)
        },
      }
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter)
        if (i >= 0) this.waiters.splice(i, 1)
        resolve(false)
      }, waitMs)
      this.waiters.push(waiter)
    })
  }
}

interface Waiter {
  endpointId: string
  perEndpoint: number
  total: number
  grant(): void
}

export interface WebhooksCtx extends Deps {
  webhooks: WebhooksRepo
  state: WebhooksState
  /** Wakes the job worker: a delivery was queued for now. */
  notifyWorker(): void
  /** Each endpoint's maxConcurrent counted across nodes (PostgreSQL); null where this process is the only sender (SQLite). */
  slots: DeliverySlots | null
}

export const egressPolicy = (ctx: Pick<Deps, 'config'>): EgressPolicy => ({
  allowHttp: ctx.config.webhookAllowHttp,
  allowedCidrs: ctx.config.webhookAllowedCidrs,
})
