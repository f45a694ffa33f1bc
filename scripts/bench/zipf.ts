// A Zipf (s = 1) sampler over 0..n-1 by inverse CDF: rank k drawn with weight 1/(k+1), one binary search
// per draw. `rand` gives uniform numbers in [0, 1), seeded by the caller so runs repeat.
export function zipfSampler(n: number, rand: () => number): () => number {
  const cum = new Float64Array(n)
  let acc = 0
  for (let k = 0; k < n; k++) cum[k] = acc += 1 / (k + 1)
  return () => {
    const u = rand() * acc
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cum[mid]! < u) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}
