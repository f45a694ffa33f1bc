// HyperLogLog sketches of visitors, one per rollup bucket, merged at query time: unique visitors over any
// range without keeping a row per visitor per bucket.
//
// Dense form: 2^12 = 4096 one-byte registers, standard error 1.04 / sqrt(4096) ≈ 1.6 %. Small sketches use
// a sparse form at precision 25 (HLL++'s idea): each entry keeps 25 bits of the hash and the rank of the
// rest, so while a merged range stays sparse (up to SPARSE_LIMIT distinct entries) the count is exact up to
// hash collisions at 2^25, far below one visitor. The hash is the visitor's keyed HMAC (clicks/visitor.ts), so
// its bits are already uniform.
//
// Encoding (a BLOB): byte 0 = 0 → sparse, then 4-byte big-endian entries (index25 << 6 | rank), in any order;
// byte 0 = 1 → dense, then the 4096 registers.

const P = 12
const M = 1 << P
const SP = 25
const SPARSE_SHIFT = SP - P
/** Sparse entries beyond this are folded into dense registers (4 bytes each: dense is then smaller). */
const SPARSE_LIMIT = M / 4
/** 2^-r for every rank a register can hold: the estimate sums 4,096 of them per sketch. */
const INVERSE_POWERS = Float64Array.from({ length: 64 }, (_, r) => 2 ** -r)

/** base64url character code → its 6 bits. */
const B64 = new Int8Array(128).fill(-1)
for (const [i, ch] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'].entries()) B64[ch.charCodeAt(0)] = i

/**
 * The first 8 bytes of a visitor hash (base64url) as two 32-bit words. Decoded by hand: the flush calls it
 * for every click, and a Buffer per call cost more than the rest of the sketch work.
 */
function hashWords(visitor: string, at = 0): [number, number] {
  // 11 characters hold 66 bits: the first 64 are the 8 bytes.
  let hi = 0
  for (let i = 0; i < 5; i++) hi = (hi << 6) | sextet(visitor, at + i) // 30 bits
  const c5 = sextet(visitor, at + 5)
  hi = ((hi << 2) | (c5 >>> 4)) >>> 0 // 32 bits
  let lo = c5 & 15 // 4 bits
  for (let i = 6; i < 10; i++) lo = (lo << 6) | sextet(visitor, at + i) // 28 bits
  lo = ((lo << 4) | (sextet(visitor, at + 10) >>> 2)) >>> 0 // 32 bits
  return [hi, lo]
}

function sextet(s: string, i: number): number {
  const v = B64[s.charCodeAt(i) & 127]!
  if (v < 0) throw new Error('a visitor hash is base64url')
  return v
}

/** Leading zeros of `bits` significant bits of x, plus one (HLL's rank); `bits` + 1 when x is 0. */
function rank(x: number, bits: number): number {
  if (x === 0) return bits + 1
  return Math.clz32(x) - (32 - bits) + 1
}

/** Sparse entry of a hash: its top 25 bits and the rank of the next 32. */
function sparseEntry(hi: number, lo: number): number {
  const index = hi >>> (32 - SP)
  // Bits after the first 25: the low 7 bits of hi, then lo.
  const rest = ((hi & 0x7f) << 25) | (lo >>> 7)
  return (index << 6) | Math.min(rank(rest >>> 0, 32), 63)
}

/** The dense register of a sparse entry, as if its hash had been added dense. */
const denseIndex = (entry: number) => entry >>> (6 + SPARSE_SHIFT)

/** The dense rank of a sparse entry. */
function denseRank(entry: number): number {
  const between = (entry >>> 6) & ((1 << SPARSE_SHIFT) - 1)
  return between !== 0 ? rank(between, SPARSE_SHIFT) : SPARSE_SHIFT + (entry & 63)
}

/** What a visitor adds to a sketch: computed once per click, added to each of its buckets' sketches. */
export function visitorEntry(visitorHash: string): number {
  const [hi, lo] = hashWords(visitorHash)
  return sparseEntry(hi, lo)
}

/** The table of a sketch with no entry yet: most sketches of a flush get one or two. */
const NO_ENTRIES = new Uint32Array(0)

/**
 * A sketch being built or merged: sparse entries until too many, then dense registers. Sparse entries live
 * in an open-addressing table (an entry's index is hash bits already, so its low bits pick the slot), each
 * slot the whole entry: never 0, since a rank is at least 1. Top links merges a million entries per
 * question, and a Map lookup per entry was most of it.
 */
export class Sketch {
  /** Sparse entries by slot (0: free); null once dense. */
  private table: Uint32Array | null = NO_ENTRIES
  private size = 0
  private dense: Uint8Array | null = null

  addVisitor(visitorHash: string) {
    this.addEntry(visitorEntry(visitorHash))
  }

  /**
   * Adds the visitors of `packed`: their hashes' first 11 characters (the 64 bits a sketch uses), one after
   * another, as the raw visitor reads return them.
   */
  addPackedVisitors(packed: string) {
    for (let o = 0; o + 11 <= packed.length; o += 11) {
      const [hi, lo] = hashWords(packed, o)
      this.addEntry(sparseEntry(hi, lo))
    }
  }

  /** Adds a visitorEntry(). */
  addEntry(entry: number): void {
    if (this.table) {
      this.put(entry)
      return
    }
    const i = denseIndex(entry)
    const r = denseRank(entry)
    if (this.dense![i]! < r) this.dense![i] = r
  }

  private put(entry: number): void {
    if (this.table!.length === 0) this.table = new Uint32Array(8)
    // At most half full; past SPARSE_LIMIT distinct entries the sketch turns dense.
    if (insert(this.table!, entry) && ++this.size * 2 > this.table!.length) this.grow(this.size)
  }

  /**
   * Room for `entries` more sparse entries (an upper bound: duplicates count), at most half full and never
   * past what the sparse form may hold, so merging many blobs allocates once instead of doubling and
   * rehashing on the way. The form and the count do not change.
   */
  reserve(entries: number) {
    if (this.table && (this.size + entries) * 2 > this.table.length) this.grow(Math.min(this.size + entries, SPARSE_LIMIT))
  }

  /** Dense past SPARSE_LIMIT entries, else room for `entries` at most half full (doubling at least). */
  private grow(entries: number) {
    if (this.size > SPARSE_LIMIT) return this.toDense()
    const old = this.table!
    // Never past 2 * SPARSE_LIMIT slots: half full at SPARSE_LIMIT entries, the next one turns it dense.
    let capacity = Math.max(8, old.length * 2)
    while (capacity < 2 * entries && capacity < 2 * SPARSE_LIMIT) capacity *= 2
    if (capacity > 2 * SPARSE_LIMIT) return
    const table = (this.table = new Uint32Array(capacity))
    for (let i = 0; i < old.length; i++) if (old[i]) insert(table, old[i]!)
  }

  private toDense() {
    const regs = new Uint8Array(M)
    const table = this.table!
    for (let k = 0; k < table.length; k++) {
      const entry = table[k]!
      if (!entry) continue
      const i = denseIndex(entry)
      const dr = denseRank(entry)
      if (regs[i]! < dr) regs[i] = dr
    }
    this.dense = regs
    this.table = null
    this.size = 0
  }

  get empty() {
    return this.table !== null && this.size === 0
  }

  /**
   * Merges an encoded sketch (a rollup row's `visitors`) into this one. The result never depends on the
   * order of merges: sparse while the union has at most SPARSE_LIMIT entries, dense registers (the max of
   * every entry's) once it has more or any merged sketch is dense.
   */
  merge(blob: Uint8Array | null | undefined) {
    if (!blob || blob.length === 0) return
    if (blob[0] === 1) {
      if (this.table) this.toDense()
      maxInto(this.dense!, blob)
      return
    }
    let o = 1
    // Room for the blob's entries at once rather than doubling (and rehashing) on the way.
    const incoming = this.size + (blob.length - 1) / 4
    if (this.table && incoming * 2 > this.table.length) this.grow(incoming)
    while (this.table && o + 4 <= blob.length) {
      const table = this.table
      const limit = table.length >>> 1
      let size = this.size
      for (; o + 4 <= blob.length && size <= limit; o += 4) if (insert(table, readEntry(blob, o))) size++
      this.size = size
      if (size > limit) this.grow(size)
    }
    // The rest of the blob straight into the registers (top links merges millions of entries).
    const regs = this.dense!
    for (; o + 4 <= blob.length; o += 4) {
      const entry = readEntry(blob, o)
      const i = denseIndex(entry)
      const r = denseRank(entry)
      if (regs[i]! < r) regs[i] = r
    }
  }

  /** How many sparse entries an encoded sketch holds (0 when dense or empty). */
  static sparseEntries(blob: Uint8Array | null | undefined): number {
    return blob && blob.length > 0 && blob[0] === 0 ? (blob.length - 1) >>> 2 : 0
  }

  /** Whether an encoded sketch is dense (sketches merge fastest dense first: see Figures.addRows). */
  static isDense(blob: Uint8Array | null | undefined): boolean {
    return blob?.[0] === 1
  }

  encode(): Uint8Array {
    if (this.dense) {
      const out = new Uint8Array(M + 1)
      out[0] = 1
      out.set(this.dense, 1)
      return out
    }
    // Entries in slot order: merging does not need them sorted.
    const out = new Uint8Array(1 + this.size * 4)
    const table = this.table!
    let o = 1
    for (let k = 0; k < table.length; k++) {
      const e = table[k]!
      if (!e) continue
      out[o++] = e >>> 24
      out[o++] = (e >>> 16) & 255
      out[o++] = (e >>> 8) & 255
      out[o++] = e & 255
    }
    return out
  }

  /** Estimated distinct visitors, rounded to a whole number. */
  estimate(): number {
    if (!this.dense) {
      // Linear counting at precision 25: exact but for collisions among 2^25 slots.
      const m = 2 ** SP
      const n = this.size
      return n === 0 ? 0 : Math.round(m * Math.log(m / (m - n)))
    }
    const regs = this.dense
    let sum = 0
    let zeros = 0
    for (let i = 0; i < M; i++) {
      const r = regs[i]!
      sum += INVERSE_POWERS[r]!
      if (r === 0) zeros++
    }
    const alpha = 0.7213 / (1 + 1.079 / M)
    const raw = (alpha * M * M) / sum
    // Small ranges: linear counting over the dense registers is the more accurate estimate.
    if (raw <= 2.5 * M && zeros > 0) return Math.round(M * Math.log(M / zeros))
    return Math.round(raw)
  }
}

/**
 * Puts a sparse entry into an open-addressing table with room for it: a new index takes the first free slot
 * from its own, a known one keeps the higher rank. Answers whether the index was new.
 */
function insert(table: Uint32Array, entry: number): boolean {
  const key = entry >>> 6
  const mask = table.length - 1
  let i = key & mask
  for (let e = table[i]!; e !== 0; e = table[(i = (i + 1) & mask)]!) {
    if (e >>> 6 !== key) continue
    if ((e & 63) < (entry & 63)) table[i] = entry
    return false
  }
  table[i] = entry
  return true
}

const readEntry = (blob: Uint8Array, o: number) => ((blob[o]! << 24) | (blob[o + 1]! << 16) | (blob[o + 2]! << 8) | blob[o + 3]!) >>> 0

/**
 * regs[i] = max(regs[i], blob[i + 1]) for the 4,096 registers, four at a time: registers are below 64, so
 * (a | 0x80) - b keeps each byte's high bit exactly when a >= b, with no borrow into the next byte.
 * Merging a year of hourly workspace sketches (8,760 of them) is most of a time-zone timeline's work.
 */
function maxInto(regs: Uint8Array, blob: Uint8Array) {
  // The registers of a blob start at byte 1: copied to an aligned scratch array to be read as words.
  SCRATCH_BYTES.set(blob.subarray(1, M + 1))
  const a = new Uint32Array(regs.buffer, regs.byteOffset, M / 4)
  for (let i = 0; i < M / 4; i++) {
    const x = a[i]!
    const y = SCRATCH_WORDS[i]!
    if (x === y) continue
    // 0x80 in each byte where x >= y, then a full byte mask of those bytes.
    const mask = ((((x | 0x80808080) - y) & 0x80808080) >>> 7) * 255
    a[i] = ((x & mask) | (y & ~mask)) >>> 0
  }
}
const SCRATCH_WORDS = new Uint32Array(M / 4)
const SCRATCH_BYTES = new Uint8Array(SCRATCH_WORDS.buffer)

/** Relative standard error of a dense estimate, for the docs and the OpenAPI description. */
export const HLL_STANDARD_ERROR = 1.04 / Math.sqrt(M)
