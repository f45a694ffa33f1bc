// Reads of the analytics area: rollup rows, raw clicks for partial hours, conversions and the links a
// question covers. Portable SQL (integer ms times, no SQLite-only functions), prepared once per shape.
// A scope is either a whole workspace (its own rollup rows: one row per bucket) or a set of links (one
// link, or the links a key's scope filters allow: their link rollup rows).
import type { Connection, SqlParam } from '../../db/client'
import type { Grain } from './plan'
import { HOUR_MS } from '../../platform/time'

/**
 * Settings rows (epoch ms): from when workspace minute and second rollups exist, and before when link weeks,
 * months and quarters are summed.
 */
export const MINUTES_FROM = 'rollup_minutes_from'
export const SECONDS_FROM = 'rollup_seconds_from'
export const MONTHS_BEFORE = 'rollup_months_before'
export const QUARTERS_BEFORE = 'rollup_quarters_before'
export const WEEKS_BEFORE = 'rollup_weeks_before'
/** How long a workspace's second rollups are kept (the prune job deletes older ones). */
export const SECONDS_KEPT_MS = 86_400_000

export const MARK_KEYS = [MINUTES_FROM, SECONDS_FROM, WEEKS_BEFORE, MONTHS_BEFORE, QUARTERS_BEFORE]

export interface RollupMarks {
  minutesFrom?: number
  secondsFrom?: number
  weeksBefore?: number
  monthsBefore?: number
  quartersBefore?: number
}

/** The marks among settings rows read by key (either engine). */
export function marksOf(rows: readonly { key: string; value: string }[]): RollupMarks {
  const mark = (key: string) => {
    const v = rows.find((r) => r.key === key)?.value
    return v === undefined ? undefined : Number(v)
  }
  return {
    minutesFrom: mark(MINUTES_FROM),
    secondsFrom: mark(SECONDS_FROM),
    weeksBefore: mark(WEEKS_BEFORE),
    monthsBefore: mark(MONTHS_BEFORE),
    quartersBefore: mark(QUARTERS_BEFORE),
  }
}

export interface AnalyticsScope {
  workspaceId: string
  /** Test links (a test key's sandbox) or live links: never both. */
  test: boolean
  /** One link (already checked to be the workspace's and in the key's scope). */
  linkId?: string
  /** A key's scope filters: only links on these domains / carrying one of these tags. */
  domains?: readonly string[]
  tags?: readonly string[]
}

export interface RollupRow {
  linkId?: string
  bucket: number
  clicks: number
  bots: number
  visitors: Uint8Array | null
  dims?: string
}

export interface RawClick {
  linkId: string
  clickedAt: number
  visitor: string
  isBot: number
  country: string | null
  referrer: string | null
  browser: string | null
  os: string | null
  device: string | null
}

export interface ConversionFact {
  linkId: string
  createdAt: number
  currency: string | null
  value: number | null
}

/**
 * Whether the workspace's own rollups answer for this scope (live links, no link, no scope filters). They hold
 * the clicks of live links only, so a test scope always reads through its links.
 */
export const wholeWorkspace = (s: AnalyticsScope) => !s.test && !s.linkId && !s.domains?.length && !s.tags?.length

/** The SQL that picks the scope's links (live, or test for the sandbox) as `l`, and its parameters. */
function linksOf(s: AnalyticsScope): { where: string; params: SqlParam[] } {
  const parts = ['l.workspace_id = ?', 'l.is_test = ?']
  const params: SqlParam[] = [s.workspaceId, s.test]
  if (s.linkId) {
    parts.push('l.id = ?')
    params.push(s.linkId)
  }
  if (s.domains?.length) {
    parts.push(`l.domain IN (${s.domains.map(() => '?').join(', ')})`)
    params.push(...s.domains)
  }
  if (s.tags?.length) {
    parts.push(`EXISTS (SELECT 1 FROM link_tags t WHERE t.link_id = l.id AND t.tag IN (${s.tags.map(() => '?').join(', ')}))`)
    params.push(...s.tags)
  }
  return { where: parts.join(' AND '), params }
}

export function createAnalyticsRepo(sqlite: Connection) {
  const statements = new Map<string, ReturnType<Connection['prepare']>>()
  const prepared = (text: string) => {
    let s = statements.get(text)
    // IN lists make a shape per list length: keep the cache bounded.
    if (!s && statements.size >= 256) statements.clear()
    if (!s) statements.set(text, (s = sqlite.prepare(text)))
    return s
  }

  return {
    /** Rollup rows of one grain with bucket in [from, to): one per bucket, or per link and bucket. */
    async rollups(s: AnalyticsScope, grain: Grain, from: number, to: number, withDims: boolean): Promise<RollupRow[]> {
      const cols = `r.bucket AS bucket, r.clicks AS clicks, r.bots AS bots, r.visitors AS visitors${withDims ? ', r.dims AS dims' : ''}`
      if (wholeWorkspace(s)) {
        return prepared(`SELECT ${cols} FROM workspace_rollups r WHERE r.workspace_id = ? AND r.grain = ? AND r.bucket >= ? AND r.bucket < ?`).all(
          s.workspaceId,
          grain,
          from,
          to,
        ) as RollupRow[]
      }
      const l = linksOf(s)
      return prepared(
        `SELECT r.link_id AS linkId, ${cols} FROM links l JOIN link_rollups r ON r.link_id = l.id AND r.grain = ? AND r.bucket >= ? AND r.bucket < ? WHERE ${l.where}`,
      ).all(grain, from, to, ...l.params) as RollupRow[]
    },

    /** Where the optional grains can be read (see plan.ts): both marks are kept by maintenance.ts. */
    async rollupMarks(): Promise<RollupMarks> {
      return marksOf(prepared(`SELECT key, value FROM settings WHERE key IN (${MARK_KEYS.map((k) => `'${k}'`).join(', ')})`).all() as { key: string; value: string }[])
    },

    /** Per-link click totals of one grain over [from, to), for ranking links without reading sketches. */
    async clicksPerLink(s: AnalyticsScope, grain: Grain, from: number, to: number): Promise<{ linkId: string; clicks: number | null }[]> {
      const l = linksOf(s)
      // A sum per link from the covering index (link, grain, bucket, clicks); as a subquery per link rather
      // than a join with GROUP BY, which sorts every row in a temporary b-tree (3.5x slower for a year).
      return prepared(
        `SELECT l.id AS linkId, (SELECT SUM(r.clicks) FROM link_rollups r WHERE r.link_id = l.id AND r.grain = ? AND r.bucket >= ? AND r.bucket < ?) AS clicks FROM links l WHERE ${l.where}`,
      ).all(grain, from, to, ...l.params) as { linkId: string; clicks: number | null }[]
    },

    /** Sketch rows of given links only (the ranked few), for their unique visitors. */
    async linkSketches(linkIds: readonly string[], grain: Grain, from: number, to: number): Promise<RollupRow[]> {
      if (!linkIds.length) return []
      return prepared(
        `SELECT link_id AS linkId, bucket, clicks, bots, visitors FROM link_rollups WHERE link_id IN (${linkIds.map(() => '?').join(', ')}) AND grain = ? AND bucket >= ? AND bucket < ?`,
      ).all(...linkIds, grain, from, to) as RollupRow[]
    },

    /** Raw clicks in [from, to): only ever a partial hour at the edge of a range. */
    async rawClicks(s: AnalyticsScope, from: number, to: number): Promise<RawClick[]> {
      const l = linksOf(s)
      // Without a link filter this reads every link of the scope; still each one an index range of at most an hour.
      return prepared(
        `SELECT c.link_id AS linkId, c.clicked_at AS clickedAt, c.visitor_hash AS visitor, c.is_bot AS isBot, c.country AS country, c.referrer_host AS referrer, c.browser AS browser, c.os AS os, c.device AS device
         FROM links l JOIN clicks c ON c.link_id = l.id AND c.clicked_at >= ? AND c.clicked_at < ? WHERE ${l.where}`,
      ).all(from, to, ...l.params) as RawClick[]
    },

    /** People's clicks per link in [from, to) from raw clicks, counted by SQL (a partial hour of top links). */
    async rawClicksPerLink(s: AnalyticsScope, from: number, to: number): Promise<{ linkId: string; clicks: number }[]> {
      const l = linksOf(s)
      return prepared(
        `SELECT l.id AS linkId, (SELECT COUNT(*) FROM clicks c WHERE c.link_id = l.id AND c.clicked_at >= ? AND c.clicked_at < ? AND c.is_bot = 0) AS clicks FROM links l WHERE ${l.where}`,
      ).all(from, to, ...l.params).filter((r) => (r as { clicks: number }).clicks > 0) as { linkId: string; clicks: number }[]
    },

    /**
     * People's clicks per link in [from, to), a part of the UTC hour starting at `hour`: that hour's link
     * rollups less the raw clicks of the rest of the hour, read in one snapshot so a flush cannot land between
     * the two. The same counts as rawClicksPerLink while the hour's raw clicks are all kept (within
     * retention), read from the other side of the hour: cheaper when the range ends just before a burst's
     * last clicks, or starts just after its first.
     */
    async clicksPerLinkOutside(s: AnalyticsScope, hour: number, from: number, to: number): Promise<{ linkId: string; clicks: number }[]> {
      const l = linksOf(s)
      const rolled = prepared(
        `SELECT r.link_id AS linkId, r.clicks AS clicks FROM links l JOIN link_rollups r ON r.link_id = l.id AND r.grain = 'hour' AND r.bucket = ? WHERE ${l.where}`,
      )
      const raw = prepared(
        `SELECT c.link_id AS linkId, COUNT(*) AS clicks FROM links l JOIN clicks c ON c.link_id = l.id AND c.clicked_at >= ? AND c.clicked_at < ? AND c.is_bot = 0 WHERE ${l.where} GROUP BY c.link_id`,
      )
      return sqlite.transaction(() => {
        const counts = new Map<string, number>()
        for (const r of rolled.all(hour, ...l.params) as { linkId: string; clicks: number }[]) counts.set(r.linkId, r.clicks)
        for (const [a, b] of [[hour, from], [to, hour + HOUR_MS]] as const) {
          if (a >= b) continue
          for (const r of raw.all(a, b, ...l.params) as { linkId: string; clicks: number }[]) counts.set(r.linkId, (counts.get(r.linkId) ?? 0) - r.clicks)
        }
        return [...counts].filter(([, n]) => n > 0).map(([linkId, clicks]) => ({ linkId, clicks }))
      })()
    },

    /**
     * The visitors of each given link's people's clicks in [from, to) from raw clicks, once per click (they
     * go into sketches, which take a visitor twice as once), packed: each hash's first 11 characters (all a
     * sketch uses) one after another. Link by link from the covering click index, concatenated by SQLite:
     * a string per link instead of a row per click (a third of the time for 180,000 clicks), and DISTINCT
     * cost more than the sketch saves (a temporary B-tree of every row).
     */
    async rawVisitors(linkIds: readonly string[], from: number, to: number): Promise<{ linkId: string; packed: string }[]> {
      const read = prepared("SELECT group_concat(substr(visitor_hash, 1, 11), '') FROM clicks WHERE link_id = ? AND clicked_at >= ? AND clicked_at < ? AND is_bot = 0")
      return linkIds.map((linkId) => ({ linkId, packed: ((read.values(linkId, from, to) as [string | null][])[0]?.[0] ?? '') }))
    },

    async conversions(s: AnalyticsScope, from: number, to: number): Promise<ConversionFact[]> {
      const l = linksOf(s)
      return prepared(
        `SELECT v.link_id AS linkId, v.created_at AS createdAt, v.currency AS currency, v.value AS value
         FROM links l JOIN conversions v ON v.link_id = l.id AND v.created_at >= ? AND v.created_at < ? WHERE ${l.where}`,
      ).all(from, to, ...l.params) as ConversionFact[]
    },

    async countLinks(s: AnalyticsScope): Promise<number> {
      const l = linksOf(s)
      return (prepared(`SELECT COUNT(*) AS n FROM links l WHERE ${l.where}`).get(...l.params) as { n: number }).n
    },

    async linkDetails(ids: readonly string[]): Promise<{ id: string; slug: string; domain: string; destinationUrl: string; title: string | null }[]> {
      if (!ids.length) return []
      return prepared(
        `SELECT id, slug, domain, destination_url AS destinationUrl, title FROM links WHERE id IN (${ids.map(() => '?').join(', ')})`,
      ).all(...ids) as { id: string; slug: string; domain: string; destinationUrl: string; title: string | null }[]
    },
  }
}

export type AnalyticsRepo = ReturnType<typeof createAnalyticsRepo>
