// Keeps the rollups (db/schema/analytics.ts) in step with the clicks: the click flush adds each batch here
// inside its own transaction, so a click and its share of every rollup commit together. A batch is summed
// in memory first, so each touched bucket costs one write however many clicks it got: a link's hour and
// day, and its workspace's second, minute, hour and day (the workspace's buckets take one write per flush,
// so its seconds and minutes cost next to nothing and spare a question ending inside a busy hour, or a busy
// minute, from reading raw clicks).
//
// rollupWriter() adds inside a transaction body on either engine. Where several nodes flush at once
// (PostgreSQL), each touched bucket is locked while it is read, merged and written back (repo-rollups.ts):
// the buckets of a table are read in one statement and written in one, link rollups before workspace
// rollups on every node. SQLite's one writer already holds every bucket, and its flush merges through the
// cached writer of rollup-writer-sqlite.ts, so both engines store the same rows for the same clicks.
import type { Db } from '../../db/client'
import type { Engine } from '../../db/engine'
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../platform/time'
import { type ClickFacts, Figures } from './figures'
import { visitorEntry } from './hll'
import type { Grain } from './plan'
import type { RollupAdder, RollupScope as Scope } from './port'
import { bucketKey, lockBuckets, writeBuckets, type BucketRow } from './repo-rollups'
import { createRollupWriter } from './rollup-writer-sqlite'

const SECOND_MS = 1_000

export interface RollupClick extends ClickFacts {
  linkId: string
  workspaceId: string
  clickedAt: number
}

/**
 * Adds a batch to the rollups inside the caller's transaction body. `minutes: false`: neither the
 * workspace's minute nor second buckets (the backfill: its clicks predate them); `seconds: false`: not its
 * second buckets.
 */
export function rollupWriter(engine: Engine, options: { minutes?: boolean; seconds?: boolean } = {}): RollupAdder {
  if (engine.name === 'sqlite') {
    // The body runs synchronously inside the engine's transaction on this very connection, so the prepared
    // statements write in that transaction.
    const add = createRollupWriter((engine.db as Db).$client, options)
    return function* (_tx, batch) {
      add(batch)
    }
  }
  const minutes = options.minutes ?? true
  const seconds = minutes && (options.seconds ?? true)

  function* merge(scope: Scope, touched: Touched[]) {
    if (!touched.length) return
    const stored = yield* lockBuckets(scope, touched)
    const rows: BucketRow[] = touched.map((t) => {
      const f = new Figures()
      const row = stored.get(bucketKey(t))
      if (row) f.addRow(row)
      for (let i = 0; i < t.clicks.length; i++) f.addClick(t.clicks[i]!, t.entries[i])
      return { id: t.id, grain: t.grain, bucket: t.bucket, row: { clicks: f.clicks, bots: f.bots, visitors: f.visitors.empty ? null : f.visitors.encode(), dims: f.dimsText() } }
    })
    yield* writeBuckets(scope, rows)
  }

  return function* (_tx, batch) {
    const touched = groupByBucket(batch, minutes, seconds)
    yield* merge('l', touched.filter((t) => t.scope === 'l'))
    yield* merge('w', touched.filter((t) => t.scope === 'w'))
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
