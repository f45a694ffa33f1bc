/**
 * A map bounded by its number of entries and, optionally, by the total size of its values, that forgets the
 * least recently used first. When the count is reached an eighth goes at once: removing one entry per insert
 * is slow, because Map iteration steps over every deleted slot until the table is rebuilt.
 */
export class LruCache<V, K = string> {
  private readonly map = new Map<K, V>()
  /** Size of each value; only kept when the cache is bounded by size. */
  private readonly sizes: Map<K, number> | null
  private total = 0
  hits = 0
  misses = 0

  constructor(
    readonly maxEntries: number,
    readonly maxBytes = Infinity,
    private readonly sizeOf?: (value: V) => number,
  ) {
    this.sizes = sizeOf ? new Map() : null
  }

  get size() {
    return this.map.size
  }

  /** Total size of the values held (0 without `sizeOf`). */
  get bytes() {
    return this.total
  }

  /** The value, now the most recently used; counted as a hit or a miss. */
  get(key: K): V | undefined {
    const value = this.map.get(key)
    if (value === undefined) {
      this.misses++
      return undefined
    }
    this.hits++
    this.map.delete(key)
    this.map.set(key, value)
    return value
  }

  /** The value without making it recent, for a cache that forgets in the order entries were stored. */
  peek(key: K): V | undefined {
    return this.map.get(key)
  }

  /** Stores the value as the most recent; a value larger than `maxBytes` is not kept at all. */
  set(key: K, value: V) {
    this.delete(key)
    const bytes = this.sizeOf ? this.sizeOf(value) : 0
    if (bytes > this.maxBytes) return
    if (this.map.size >= this.maxEntries) {
      let n = Math.ceil(this.maxEntries / 8)
      for (const k of this.map.keys()) {
        this.delete(k)
        if (--n === 0) break
      }
    }
    this.map.set(key, value)
    if (this.sizes) {
      this.sizes.set(key, bytes)
      this.total += bytes
      // Map iterates in insertion order: the first entries are the least recent, the new one is last.
      for (const k of this.map.keys()) {
        if (this.total <= this.maxBytes) break
        this.delete(k)
      }
    }
  }

  delete(key: K): boolean {
    if (!this.map.delete(key)) return false
    if (this.sizes) {
      this.total -= this.sizes.get(key) ?? 0
      this.sizes.delete(key)
    }
    return true
  }

  /** Forgets every entry and the hit counts. */
  clear() {
    this.map.clear()
    this.sizes?.clear()
    this.total = 0
    this.hits = 0
    this.misses = 0
  }
}
