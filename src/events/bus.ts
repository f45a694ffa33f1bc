// After-commit notices between areas. A service that changed something others keep in memory says so here
// once its transaction has committed; the areas that care listen. This is how one area reacts to another
// (a link changed → the redirect cache drops it) without calling into its internals, and the seam through
// which several nodes will later hear each other's writes.
import type { Logger } from '../platform/log'

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
}

type Listener<K extends keyof Notices> = (notice: Notices[K]) => void

export class EventBus {
  private readonly listeners = new Map<keyof Notices, Set<Listener<keyof Notices>>>()

  constructor(private readonly log: Logger) {}

  on<K extends keyof Notices>(name: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(name)
    if (!set) this.listeners.set(name, (set = new Set()))
    set.add(listener as Listener<keyof Notices>)
    return () => set.delete(listener as Listener<keyof Notices>)
  }

  /** Call after the commit, never inside the transaction: a rolled-back change must not be announced. */
  emit<K extends keyof Notices>(name: K, notice: Notices[K]): void {
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
