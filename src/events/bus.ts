// After-commit notices between areas. A service that changed something others keep in memory says so here
// once its transaction has committed; the areas that care listen. This is how one area reacts to another
// (a link changed → the redirect cache drops it) without calling into its internals, and the seam through
// which several nodes will later hear each other's writes.
import type { Engine, Steps } from '../db/engine'
import type { Logger } from '../platform/log'

/** The PostgreSQL channel the bus travels on between nodes (bus-pg.ts relays and receives it). */
export const BUS_CHANNEL = 'lnk_bus'

/** A notice as it travels: from `node` ('' is no node: every node tells its listeners, the sender's included). */
export const encodeNotice = <K extends keyof Notices>(node: string, name: K, notice: Notices[K]) => JSON.stringify([node, name, notice])

/** Every notice, by name, with what it carries. */
export interface Notices {
  /** A link was created, changed or deleted: whatever is cached under its domain and slug is stale. */
  'link.changed': { domain: string; slug: string }
  /** A custom domain was served, changed, stopped or deleted (its links may have been archived with it). */
  'domain.changed': { domain: string }
  /** A bridge page or its blocks changed, or it was deleted: its rendered HTML is stale. */
  'page.changed': { id: string }
  /** Events were queued for these forwarding sessions (after the dispatch committed): wake their polls. */
  'forwarding.queued': { sessionIds: string[] }
  /** Webhook endpoints or forwarding sessions changed: that area's cached lists of who receives which events are stale. */
  'subscribers.changed': { area: 'webhooks' | 'forwarding' }
  /**
   * Notices from other nodes may have been lost (their channel reconnected): whatever is cached from the
   * database may be stale. Emitted on this node only.
   */
  'caches.reset': Record<string, never>
}

/** Hands a notice emitted here to the other nodes (bus-pg.ts); they emit it with emitLocal(). */
export type Relay = <K extends keyof Notices>(name: K, notice: Notices[K]) => void

type Listener<K extends keyof Notices> = (notice: Notices[K]) => void

export class EventBus {
  private readonly listeners = new Map<keyof Notices, Set<Listener<keyof Notices>>>()

  private relay: Relay | null = null

  constructor(private readonly log: Logger) {}

  /** From now on every emit() is also handed to `relay` (several nodes on one PostgreSQL). */
  relayTo(relay: Relay | null) {
    this.relay = relay
  }

  on<K extends keyof Notices>(name: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(name)
    if (!set) this.listeners.set(name, (set = new Set()))
    set.add(listener as Listener<keyof Notices>)
    return () => set.delete(listener as Listener<keyof Notices>)
  }

  /** Call after the commit, never inside the transaction: a rolled-back change must not be announced. */
  emit<K extends keyof Notices>(name: K, notice: Notices[K]): void {
    this.emitLocal(name, notice)
    if (this.relay && name !== 'caches.reset') this.relay(name, notice)
  }

  /**
   * Inside a transaction body: tells every node's listeners, this one's included, once the transaction has
   * committed, for a change they must not hear of before it can be read (a forwarding wake-up). On PostgreSQL
   * a notice the database sends at commit, never on rollback; where one SQLite process serves, this process's
   * listeners once the synchronous transaction is over (a rolled-back one wakes whoever then finds nothing).
   */
  *atCommit<K extends keyof Notices>(engine: Engine, name: K, notice: Notices[K]): Steps<void> {
    const statement = engine.notify(BUS_CHANNEL, encodeNotice('', name, notice))
    if (statement) yield statement
    else queueMicrotask(() => this.emitLocal(name, notice))
  }

  /** Tells this node's listeners only: a notice another node emitted, or one that concerns this node alone. */
  emitLocal<K extends keyof Notices>(name: K, notice: Notices[K]): void {
    for (const listener of this.listeners.get(name) ?? []) {
      try {
        listener(notice)
      } catch (err) {
        // A listener's fault must not turn a committed write into a failed request.
        this.log.error('notice listener failed', { notice: name, error: (err as Error).message })
      }
    }
  }
}
