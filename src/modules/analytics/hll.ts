// HyperLogLog sketches of visitors, one per rollup bucket, merged at query time: unique visitors over any
// range without keeping a row per visitor per bucket.
//
// Dense form: 2^12 = 4096 one-byte registers, standard error 1.04 / sqrt(4096) ≈ 1.6 %. Small sketches use
// a sparse form at precision 25 (HLL++'s idea): each entry keeps 25 bits of the hash and the rank of the
// rest, so while a merged range stays sparse (up to SPARSE_LIMIT distinct entries) the count is exact up to
// hash collisions at 2^25, far below one visitor. The hash is the visitor's keyed HMAC (clicks/repo.ts), so
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

/** The first 8 bytes of a visitor hash (base64url) as two 32-bit words. */
function hashWords(visitor: string): [number, number] {
  const b = Buffer.from(visitor.slice(0, 11), 'base64url')
  return [b.readUInt32BE(0), ((b[4]! << 24) | (b[5]! << 16) | (b[6]! << 8) | b[7]!) >>> 0]
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

/** Folds a sparse entry into (dense index, dense rank), as if the hash had been added dense. */
function denseOf(entry: number): [number, number] {
  const index25 = entry >>> 6
  const between = index25 & ((1 << SPARSE_SHIFT) - 1)
  const r = between !== 0 ? rank(between, SPARSE_SHIFT) : SPARSE_SHIFT + (entry & 63)
  return [index25 >>> SPARSE_SHIFT, r]
}

/** What a visitor adds to a sketch: computed once per click, added to each of its buckets' sketches. */
export function visitorEntry(visitorHash: string): number {
  const [hi, lo] = hashWords(visitorHash)
  return sparseEntry(hi, lo)
}

/** A sketch being built or merged: sparse entries until too many, then dense registers. */
export class Sketch {
  private sparse: Map<number, number> | null = new Map()
  private dense: Uint8Array | null = null

  addVisitor(visitorHash: string) {
    this.addEntry(visitorEntry(visitorHash))
  }

  /** Adds a visitorEntry(). */
  addEntry(entry: number) {
    if (this.sparse) {
      const key = entry >>> 6
      const r = entry & 63
      if ((this.sparse.get(key) ?? 0) < r) this.sparse.set(key, r)
      if (this.sparse.size > SPARSE_LIMIT) this.toDense()
      return
    }
    const [i, r] = denseOf(entry)
    if (this.dense![i]! < r) this.dense![i] = r
  }

  private toDense() {
    const regs = new Uint8Array(M)
    for (const [key, r] of this.sparse!) {
      const [i, dr] = denseOf((key << 6) | r)
      if (regs[i]! < dr) regs[i] = dr
    }
    this.dense = regs
    this.sparse = null
  }

  get empty() {
    return this.sparse !== null && this.sparse.size === 0
  }

  /** Merges an encoded sketch (a rollup row's `visitors`) into this one. */
  merge(blob: Uint8Array | null | undefined) {
    if (!blob || blob.length === 0) return
    if (blob[0] === 1) {
      if (this.sparse) this.toDense()
      const regs = this.dense!
      for (let i = 0; i < M; i++) {
        const r = blob[i + 1]!
        if (regs[i]! < r) regs[i] = r
      }
      return
    }
    for (let o = 1; o + 4 <= blob.length; o += 4) {
      this.addEntry(((blob[o]! << 24) | (blob[o + 1]! << 16) | (blob[o + 2]! << 8) | blob[o + 3]!) >>> 0)
    }
  }

  encode(): Uint8Array {
    if (this.dense) {
      const out = new Uint8Array(M + 1)
      out[0] = 1
      out.set(this.dense, 1)
      return out
    }
    // Entries in insertion order: merging does not need them sorted, and the flush encodes often.
    const out = new Uint8Array(1 + this.sparse!.size * 4)
    let o = 1
    for (const [key, r] of this.sparse!) {
      const e = ((key << 6) | r) >>> 0
      out[o++] = e >>> 24
      out[o++] = (e >>> 16) & 255
      out[o++] = (e >>> 8) & 255
      out[o++] = e & 255
    }
    return out
  }

  /** Estimated distinct visitors, rounded to a whole number. */
  estimate(): number {
    if (this.sparse) {
      // Linear counting at precision 25: exact but for collisions among 2^25 slots.
      const m = 2 ** SP
      const n = this.sparse.size
      return n === 0 ? 0 : Math.round(m * Math.log(m / (m - n)))
    }
    const regs = this.dense!
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

/** Relative standard error of a dense estimate, for the docs and the OpenAPI description. */
export const HLL_STANDARD_ERROR = 1.04 / Math.sqrt(M)
