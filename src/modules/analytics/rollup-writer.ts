// Keeps the rollups (db/schema/analytics.ts) in step with the clicks: the click flush adds each batch here
// inside its own transaction, so a click and its share of every rollup commit together. A batch is summed
// in memory first, so each touched bucket costs one write however many clicks it got: a link's hour and
// day, and its workspace's second, minute, hour and day (the workspace's buckets take one write per flush,
// so its seconds and minutes cost next to nothing and spare a question ending inside a busy hour, or a busy
// minute, from reading raw clicks).
//
// The buckets being filled (this hour, this day) are rewritten by every flush, so the writer keeps them
// decoded in memory instead of reading, parsing and decoding the row each time. A cached bucket is trusted
// only while the row still holds the counts the writer last wrote (one cheap primary-key read of two
// integers), so neither another writer (a second process, the main-thread fallback) nor a rolled-back
// flush can make it write stale figures. The rows themselves are read and written by repo-rollups.ts.
import type { Connection } from '../../db/client'
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../platform/time'
import { type ClickFacts, Figures } from './figures'
import { visitorEntry } from './hll'
import type { Grain } from './plan'
import { createRollupRepo, type RollupScope as Scope } from './repo-rollups'

const SECOND_MS = 1_000
/** Buckets kept decoded; past it the cache starts afresh (it only saves reads). */
const CACHE_MAX = 8_192

export interface RollupClick extends ClickFacts {
  linkId: string
  workspaceId: string
  clickedAt: number
}

/**
 * `minutes: false`: neither the workspace's minute nor second buckets (the backfill: its clicks predate
 * them); `seconds: false`: not its second buckets (clicks seeded over a past year, whose seconds would be
 * pruned at once).
 */
export function createRollupWriter(sqlite: Connection, options: { minutes?: boolean; seconds?: boolean } = {}) {
  const minutes = options.minutes ?? true
  const seconds = minutes && (options.seconds ?? true)
  const rows = createRollupRepo(sqlite)
  const cache = new Map<string, Figures>()

  /** The bucket's figures as stored, from the cache when it is still what the row holds. */
  function current(scope: Scope, id: string, grain: Grain, bucket: number, key: string): Figures {
    const cached = cache.get(key)
    if (cached) {
      const row = rows.counts(scope, id, grain, bucket)
      if (row && row.clicks === cached.clicks && row.bots === cached.bots) return cached
    }
    const f = new Figures()
    const stored = rows.read(scope, id, grain, bucket)
    if (stored) f.addRow(stored)
    return f
  }

  /** Call inside the flush's transaction. */
  return function addToRollups(batch: readonly RollupClick[]) {
    const touched = groupByBucket(batch, minutes, seconds)
    if (cache.size + touched.length > CACHE_MAX) cache.clear()
    for (const t of touched) {
      const key = `${t.scope}${t.grain}${t.bucket}\u0000${t.id}`
      const f = current(t.scope, t.id, t.grain, t.bucket, key)
      for (let i = 0; i < t.clicks.length; i++) f.addClick(t.clicks[i]!, t.entries[i])
      rows.write(t.scope, t.id, t.grain, t.bucket, { clicks: f.clicks, bots: f.bots, visitors: f.visitors.empty ? null : f.visitors.encode(), dims: f.dimsText() })
      cache.set(key, f)
    }
  }
}

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
  return out.sort((a, b) => (a.scope !== b.scope ? (a.scope < b.scope ? -1 : 1) : a.id !== b.id ? (a.id < b.id ? -1 : 1) : a.grain !== b.grain ? (a.grain < b.grain ? -1 : 1) : a.bucket - b.bucket))
}
