// Unique visitors of given links over a planned range: each link's sketch rows merged, then the visitors of
// its partial hours from raw clicks. Shared by the request thread and the uniques thread (uniques-thread.ts),
// which measure halves of the same links at once.
import { Figures } from './figures'
import type { Segment } from './plan'
import type { RollupRow, UniquesReads } from './port'

/** Links per sketch query: SQLite's IN list stays short. */
const SKETCH_QUERY_LINKS = 500

/** The estimated unique visitors of each link, in the order of `ids`. */
export async function linkUniques(repo: UniquesReads, ids: readonly string[], segments: readonly Segment[]): Promise<number[]> {
  const packed = new Map<string, string[]>(ids.map((id) => [id, []]))
  for (const s of segments) {
    if (s.source !== 'raw') continue
    for (const r of await repo.rawVisitors(ids, s.from, s.to)) if (r.packed) packed.get(r.linkId)!.push(r.packed)
  }
  const rows = new Map<string, RollupRow[]>(ids.map((id) => [id, []]))
  for (const s of segments) {
    if (s.source === 'raw') continue
    for (let i = 0; i < ids.length; i += SKETCH_QUERY_LINKS) {
      for (const row of await repo.linkSketches(ids.slice(i, i + SKETCH_QUERY_LINKS), s.source, s.from, s.to)) rows.get(row.linkId!)!.push(row)
    }
  }
  return ids.map((id) => {
    const f = new Figures(false)
    const raw = packed.get(id)!
    // Rows first, so the sparse table is sized once for them and the raw visitors (11 characters each).
    f.addRows(
      rows.get(id)!,
      raw.reduce((n, p) => n + p.length / 11, 0),
    )
    for (const p of raw) f.visitors.addPackedVisitors(p)
    return f.visitors.estimate()
  })
}
