// Who receives a workspace's events, per workspace and mode (active webhook endpoints, open forwarding
// sessions), cached for the outbox consumers and the interest sources that run for every event and click.
// A list is dropped when its generation moves (a change on this node, a notice from another, a reset) and
// trusted for TTL_MS at most, which bounds what a lost notice leaves stale.
//
// Four ways to read, one per caller: `read` loads synchronously (SQLite), `readAsync` awaits a load (the
// consumers on PostgreSQL, inside the dispatch transaction), `reading` loads inside a transaction body on
// either engine (the webhooks fan-out), and `peek` never waits (the interest sources on PostgreSQL, asked
// synchronously by hot writers): it answers what it knows and loads in the background.
import type { Mode } from '../../events/interest'

/** A list is trusted this long without a change signal (a change whose notice was lost). */
export const LIST_TTL_MS = 5000
const MAX_KEYS = 10_000
/** After a failed background load, the key is not tried again for this long (the database may be down). */
const RETRY_AFTER_MS = 1000
/** A background load not over by then is taken for lost, and the key is tried again. */
const LOAD_GIVEN_UP_MS = 10_000

interface Entry<T> {
  generation: number
  at: number
  list: T[]
}

export class WorkspaceLists<T> {
  private readonly cache = new Map<string, Entry<T>>()
  /** Keys loading in the background or failed to load: not tried again before the time each holds. */
  private readonly pending = new Map<string, number>()

  /** `generation` moves whenever every cached list may be stale (a change, a notice, a reset). */
  constructor(private readonly generation: () => number) {}

  private key = (workspaceId: string, mode: Mode | string) => `${workspaceId}\u0000${mode}`

  private fresh(key: string, now: number): Entry<T> | undefined {
    const hit = this.cache.get(key)
    return hit && hit.generation === this.generation() && now >= hit.at && now - hit.at < LIST_TTL_MS ? hit : undefined
  }

  private store(key: string, entry: Entry<T>) {
    if (this.cache.size >= MAX_KEYS) this.cache.clear()
    this.cache.set(key, entry)
  }

  read(workspaceId: string, mode: Mode | string, now: number, load: () => T[]): T[] {
    const key = this.key(workspaceId, mode)
    const hit = this.fresh(key, now)
    if (hit) return hit.list
    const entry = { generation: this.generation(), at: now, list: load() }
    this.store(key, entry)
    return entry.list
  }

  async readAsync(workspaceId: string, mode: Mode | string, now: number, load: () => Promise<T[]>): Promise<T[]> {
    const key = this.key(workspaceId, mode)
    const hit = this.fresh(key, now)
    if (hit) return hit.list
    // The generation as the load starts: a change announced while it runs leaves the list stale, not fresh.
    const generation = this.generation()
    const list = await load()
    this.store(key, { generation, at: now, list })
    return list
  }

  /**
   * read() inside a transaction body (db/engine), on either engine: the load is the body's own statements
   * (`yield*`), so on PostgreSQL it runs on the dispatch transaction, awaited, and on SQLite at once.
   */
  *reading<S>(workspaceId: string, mode: Mode | string, now: number, load: () => Generator<S, T[], unknown>): Generator<S, T[], unknown> {
    const key = this.key(workspaceId, mode)
    const hit = this.fresh(key, now)
    if (hit) return hit.list
    // The generation as the load starts: a change announced while it runs leaves the list stale, not fresh.
    const generation = this.generation()
    const list = yield* load()
    this.store(key, { generation, at: now, list })
    return list
  }

  /**
   * The list without waiting: undefined while unknown (never loaded, or dropped by a change), the list past
   * its TTL while a fresh one loads. A change may have added a receiver, so an unknown list is never guessed
   * empty; past the TTL nothing announced a change, so the last list stands until the new one is in.
   */
  peek(workspaceId: string, mode: Mode | string, now: number, load: () => Promise<T[]>): T[] | undefined {
    const key = this.key(workspaceId, mode)
    const hit = this.cache.get(key)
    const current = hit && hit.generation === this.generation() ? hit : undefined
    if (current && now >= current.at && now - current.at < LIST_TTL_MS) return current.list
    const until = this.pending.get(key)
    if (until === undefined || now >= until) {
      if (this.pending.size >= MAX_KEYS) this.pending.clear()
      this.pending.set(key, now + LOAD_GIVEN_UP_MS)
      const generation = this.generation()
      load().then(
        (list) => {
          this.pending.delete(key)
          this.store(key, { generation, at: now, list })
        },
        () => this.pending.set(key, now + RETRY_AFTER_MS),
      )
    }
    return current?.list
  }
}
