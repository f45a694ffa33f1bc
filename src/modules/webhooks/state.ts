// What the webhooks area keeps in memory: the fan-out cache generation, and the requests in flight (per
// endpoint and in total) that the concurrency caps count.
import type { Deps } from '../../context'
import type { EgressPolicy } from '../../net/egress'
import type { WebhooksRepo } from './repo'

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

  endpointChanged() {
    this.generation++
  }

  inFlight(endpointId: string) {
    return this.perEndpoint.get(endpointId) ?? 0
  }

  private waiters = new Set<() => void>()

  acquire(endpointId: string) {
    this.total++
    this.perEndpoint.set(endpointId, this.inFlight(endpointId) + 1)
  }

  release(endpointId: string) {
    this.total--
    const n = this.inFlight(endpointId) - 1
    if (n > 0) this.perEndpoint.set(endpointId, n)
    else this.perEndpoint.delete(endpointId)
    for (const wake of [...this.waiters]) wake()
  }

  /**
   * Takes a slot under both caps, waiting up to `waitMs` for one to free. A short wait in memory is far
   * cheaper than putting the job off (two writes); false means the caller should put it off.
   */
  async take(endpointId: string, perEndpoint: number, total: number, waitMs: number): Promise<boolean> {
    const deadline = performance.now() + waitMs
    for (;;) {
      if (this.inFlight(endpointId) < perEndpoint && this.total < total) {
        this.acquire(endpointId)
        return true
      }
      const left = deadline - performance.now()
      if (left <= 0) return false
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer)
          this.waiters.delete(wake)
          resolve()
        }
        const timer = setTimeout(wake, left)
        this.waiters.add(wake)
      })
    }
  }
}

export interface WebhooksCtx extends Deps {
  webhooks: WebhooksRepo
  state: WebhooksState
  /** Wakes the job worker: a delivery was queued for now. */
  notifyWorker(): void
}

export const egressPolicy = (ctx: Pick<Deps, 'config'>): EgressPolicy => ({ allowHttp: ctx.config.webhookAllowHttp, allowedCidrs: ctx.config.webhookAllowedCidrs })
