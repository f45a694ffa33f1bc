// A fixed-seed generator (mulberry32) for the benchmarks: the same data every run, and integer arithmetic
// throughout. An LCG written in doubles (seed * 1103515245 overflows 2^53) loses its low bits and cycles
// through ~16,000 values, which made "100,000 links" runs touch a tenth of them and repeat visitors.
export function seededRandom(seed: number): () => number {
  let s = seed | 0
  return () => {
    s = (s + 0x6d2b79f5) | 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}
