// The buckets a batch of clicks touches, grouped once for both rollup writers (rollup-writer.ts on either
// engine, rollup-writer-sqlite.ts on SQLite's flush).
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../platform/time'
import { visitorEntry } from './hll'
import type { Grain } from './plan'
import type { RollupClick, RollupScope as Scope } from './port'

const SECOND_MS = 1_000

export interface Touched {
  scope: Scope
  id: string
  grain: Grain
  bucket: number
  clicks: RollupClick[]
  /** visitorEntry() of each click (0 for a bot), computed once for all its buckets. */
  entries: number[]
}

/**
 * The buckets a batch touches, each with its clicks: its link's hour and day, its workspace's second,
 * minute, hour and day. One map key per click (link and hour); the rest derive from those groups, and the
 * workspace's buckets from runs of clicks in the same second (a batch is mostly in time order and in one
 * workspace).
 */
export function groupByBucket(batch: readonly RollupClick[], minutes: boolean, seconds: boolean): Touched[] {
  const linkHours = new Map<string, Touched>()
  const workspace = new Map<string, Touched>()
  let run: Touched | null = null
  for (const c of batch) {
    const entry = c.isBot ? 0 : visitorEntry(c.visitor)
    const hour = c.clickedAt - (c.clickedAt % HOUR_MS)
    const key = `${hour}\u0000${c.linkId}`
    let t = linkHours.get(key)
    if (!t) linkHours.set(key, (t = { scope: 'l', id: c.linkId, grain: 'hour', bucket: hour, clicks: [], entries: [] }))
    t.clicks.push(c)
    t.entries.push(entry)
    const second = c.clickedAt - (c.clickedAt % SECOND_MS)
    if (!run || run.bucket !== second || run.id !== c.workspaceId) {
      const k: string = `${second}\u0000${c.workspaceId}`
      run = workspace.get(k) ?? null
      if (!run) workspace.set(k, (run = { scope: 'w', id: c.workspaceId, grain: 'second', bucket: second, clicks: [], entries: [] }))
    }
    run.clicks.push(c)
    run.entries.push(entry)
  }
  const out: Touched[] = [...linkHours.values()]
  const coarser = new Map<string, Touched>()
  const into = (from: Touched, grain: Grain, bucket: number) => {
    const key = `${from.scope}${grain}${bucket}\u0000${from.id}`
    const t = coarser.get(key)
    if (!t) coarser.set(key, { scope: from.scope, id: from.id, grain, bucket, clicks: [...from.clicks], entries: [...from.entries] })
    else {
      for (const c of from.clicks) t.clicks.push(c)
      for (const e of from.entries) t.entries.push(e)
    }
  }
  for (const t of linkHours.values()) into(t, 'day', t.bucket - (t.bucket % DAY_MS))
  for (const t of workspace.values()) {
    if (seconds) out.push(t)
    if (minutes) into(t, 'minute', t.bucket - (t.bucket % MINUTE_MS))
    into(t, 'hour', t.bucket - (t.bucket % HOUR_MS))
    into(t, 'day', t.bucket - (t.bucket % DAY_MS))
  }
  for (const t of coarser.values()) out.push(t)
  // In primary-key order: consecutive writes then land on neighbouring b-tree pages, which are still in
  // the page cache, instead of on a random page of a table larger than it.
  return out.sort((a, b) =>
    a.scope !== b.scope
      ? a.scope < b.scope
        ? -1
        : 1
      : a.id !== b.id
        ? a.id < b.id
          ? -1
          : 1
        : a.grain !== b.grain
          ? a.grain < b.grain
            ? -1
            : 1
          : a.bucket - b.bucket,
  )
}
