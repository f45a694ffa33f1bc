// The analytics area's ports: what the service, the uniques thread and the maintenance jobs ask of storage,
// in plain types. repo.ts and repo-maintenance.ts answer them on either engine; repo-uniques-sqlite.ts
// answers the uniques reads with statements prepared once, for SQLite's two reading threads.
import type { Builder, Steps } from '../../db/engine'
import type { Grain } from './plan'
import type { ClickFacts } from './figures'

/** A click as the rollups take it. */
export interface RollupClick extends ClickFacts {
  linkId: string
  workspaceId: string
  clickedAt: number
}

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

/** The marks among settings rows read by key. */
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
  /** A key's scope filters: only links on these domains / carrying one of these tags / in these folders. */
  domains?: readonly string[]
  tags?: readonly string[]
  folders?: readonly string[]
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

export interface LinkDetail {
  id: string
  slug: string
  domain: string
  destinationUrl: string
  title: string | null
}

/**
 * Whether the workspace's own rollups answer for this scope (live links, no link, no scope filters). They hold
 * the clicks of live links only, so a test scope always reads through its links.
 */
export const wholeWorkspace = (s: AnalyticsScope) => !s.test && !s.linkId && !s.domains?.length && !s.tags?.length && !s.folders?.length

/**
 * Reads of the analytics area: rollup rows, raw clicks for partial hours, conversions and the links a
 * question covers. A scope is either a whole workspace (its own rollup rows: one row per bucket) or a set
 * of links (one link, or the links a key's scope filters allow: their link rollup rows).
 */
export interface AnalyticsRepo {
  /** Rollup rows of one grain with bucket in [from, to): one per bucket, or per link and bucket. */
  rollups(s: AnalyticsScope, grain: Grain, from: number, to: number, withDims: boolean): Promise<RollupRow[]>
  /** Where the optional grains can be read (see plan.ts): the marks are kept by maintenance.ts. */
  rollupMarks(): Promise<RollupMarks>
  /** Per-link click totals of one grain over [from, to), for ranking links without reading sketches. */
  clicksPerLink(s: AnalyticsScope, grain: Grain, from: number, to: number): Promise<{ linkId: string; clicks: number | null }[]>
  /** Sketch rows of given links only (the ranked few), for their unique visitors. */
  linkSketches(linkIds: readonly string[], grain: Grain, from: number, to: number): Promise<RollupRow[]>
  /** Raw clicks in [from, to): only ever a partial hour at the edge of a range. */
  rawClicks(s: AnalyticsScope, from: number, to: number): Promise<RawClick[]>
  /** People's clicks per link in [from, to) from raw clicks, counted by SQL (a partial hour of top links). */
  rawClicksPerLink(s: AnalyticsScope, from: number, to: number): Promise<{ linkId: string; clicks: number }[]>
  /**
   * People's clicks per link in [from, to), a part of the UTC hour starting at `hour`: that hour's link
   * rollups less the raw clicks of the rest of the hour, read in one snapshot so a flush cannot land between
   * the two. The same counts as rawClicksPerLink while the hour's raw clicks are all kept (within
   * retention), read from the other side of the hour: cheaper when the range ends just before a burst's
   * last clicks, or starts just after its first.
   */
  clicksPerLinkOutside(s: AnalyticsScope, hour: number, from: number, to: number): Promise<{ linkId: string; clicks: number }[]>
  /**
   * The visitors of each given link's people's clicks in [from, to) from raw clicks, once per click (they
   * go into sketches, which take a visitor twice as once), packed: each hash's first 11 characters (all a
   * sketch uses) one after another, in the order of the click index (time, then hash). In the order of `linkIds`.
   */
  rawVisitors(linkIds: readonly string[], from: number, to: number): Promise<{ linkId: string; packed: string }[]>
  conversions(s: AnalyticsScope, from: number, to: number): Promise<ConversionFact[]>
  countLinks(s: AnalyticsScope): Promise<number>
  linkDetails(ids: readonly string[]): Promise<LinkDetail[]>
}

/** What measuring unique visitors reads (uniques.ts): the hot reads a uniques thread serves. */
export type UniquesReads = Pick<AnalyticsRepo, 'rawVisitors' | 'linkSketches'>

/** A link's rollups or a workspace's. */
export type RollupScope = 'l' | 'w'

/** A rollup row's figures as stored. */
export interface StoredRollup {
  clicks: number
  bots: number
  visitors: Uint8Array | null
  dims: string
}

/** A week, month or quarter row summed by the maintenance job. */
export interface SummedRollup {
  linkId: string
  bucket: number
  figures: StoredRollup
}

/**
 * Adds a page of clicks to the rollups inside the caller's transaction body (rollup-writer.ts's
 * rollupWriter() fits).
 */
export type RollupAdder = (tx: Builder, page: RollupClick[]) => Steps<void>

/** The rows the maintenance jobs work on: marks, summed spans, raw clicks past retention and the backfill. */
export interface MaintenanceRepo {
  mark(key: string): Promise<number | undefined>
  setMark(key: string, value: number, now: number): Promise<void>
  /** Sets the mark unless it is set already: the first start of a version decides it. */
  setMarkOnce(key: string, value: number, now: number): Promise<void>
  /** The earliest day any workspace has clicks in (its rollups cover every link's), if any. */
  firstDay(): Promise<number | undefined>
  /** A link's rows of one grain in [from, to), dimensions included. */
  linkRows(linkId: string, grain: 'day' | 'month', from: number, to: number): Promise<StoredRollup[]>
  /** Writes week, month or quarter rows (replacing any), in one transaction; a later row of a link and bucket wins. */
  writeSums(grain: 'week' | 'month' | 'quarter', rows: SummedRollup[]): Promise<void>
  /** Deletes every workspace's minute or second rows older than `at`; answers how many. */
  deleteWorkspaceRowsBefore(grain: 'minute' | 'second', at: number): Promise<number>
  linkIds(): Promise<string[]>
  hasClicksBefore(linkId: string, at: number): Promise<boolean>
  /** Deletes up to `limit` of the link's clicks older than `at`, in a transaction of its own; answers how many. */
  deleteClicksBefore(linkId: string, at: number, limit: number): Promise<number>
  backfillDone(): Promise<boolean>
  /**
   * In one transaction: claims the backfill's mark (none claimed: another start did it, answers 0); unless
   * rollups exist already (then the clicks were rolled up as they came), hands every stored click to `add`,
   * `pageSize` at a time; then records how many in the mark. Answers how many clicks.
   */
  backfill(add: RollupAdder, pageSize: number, now: number): Promise<number>
}

/**
 * What the breakdown counts by (contract 7.2): the dimensions raw clicks hold today. language, trigger and the
 * utm* dimensions join once clicks record them.
 */
export const BREAKDOWN_DIMENSIONS = [
  'country',
  'continent',
  'city',
  'device',
  'browser',
  'os',
  'referrer',
  'link',
  'domain',
  'tag',
  'campaign',
  'folder',
  'rule',
  'variant',
] as const
export type BreakdownDimension = (typeof BREAKDOWN_DIMENSIONS)[number]

export const BREAKDOWN_SORTS = ['clicks', 'uniqueClicks', 'conversions', 'revenue'] as const
export type BreakdownSort = (typeof BREAKDOWN_SORTS)[number]

/** One breakdown question over raw clicks in [from, to), already checked. */
export interface BreakdownQuery {
  scope: AnalyticsScope
  dimension: BreakdownDimension
  from: number
  to: number
  sort: BreakdownSort
  /** With sort=revenue: the currency to rank by; without it, the one most conversions of the range were in. */
  currency?: string
  limit: number
}

export interface BreakdownFigures {
  clicks: number
  /** Distinct visitor hashes, exact. */
  uniqueClicks: number
  conversions: number
  /** Sum of conversion values per currency, as summed by the engine (not yet rounded). */
  revenue: Record<string, number>
}

export interface BreakdownAnswer {
  rows: (BreakdownFigures & { value: string | null })[]
  /** The whole range once: a click counts once however many tags its link has. */
  totals: BreakdownFigures
  /** With sort=revenue: the currency ranked by (null: no conversion had a value). */
  currency: string | null
}

/** The breakdown's read (repo-breakdown.ts), on either engine. */
export interface BreakdownRepo {
  /** The ranked values and the totals, read in one snapshot. */
  breakdown(q: BreakdownQuery): Promise<BreakdownAnswer>
}
