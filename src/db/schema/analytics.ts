// Click rollups: what analytics reads instead of raw clicks. The click flush maintains them in the same
// transaction as the clicks, per link and per workspace, at two grains: UTC hours (any time zone's
// boundaries with whole-hour offsets) and UTC days (long ranges read 24 times fewer rows). A range is read
// as whole days in its middle, hours at its sides and raw clicks only for a partial hour at either end.
// Rollups are kept when raw clicks are pruned after LNK_CLICK_RETENTION_DAYS.
import { bytes, index, int, primaryKey, table, text } from '../columns'
import { workspaces } from './identity'
import { links } from './links'

/**
 * `second` buckets start on a UTC second (workspaces only; kept a day), `minute` buckets on a UTC minute
 * (workspaces only; pruned with the raw clicks), `hour` buckets on a UTC hour, `day` buckets at UTC midnight,
 * `week` buckets on a Monday at UTC midnight, `month` buckets on the first of a UTC month and `quarter`
 * buckets on the first of January, April, July or October (weeks, months and quarters: links only, summed
 * from day, then month buckets by an hourly job once they are over). Epoch ms. The column is plain text: a
 * grain added here needs no migration.
 */
export const ROLLUP_GRAINS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter'] as const

const figures = {
  grain: text('grain', { enum: ROLLUP_GRAINS }).notNull(),
  bucket: int('bucket').notNull(),
  /** People's clicks (bots excluded). */
  clicks: int('clicks').notNull(),
  /** Bot hits, crawler previews included: counted here and nowhere else. */
  bots: int('bots').notNull(),
  /** HyperLogLog sketch of the visitors (see modules/analytics/hll.ts); null while clicks = 0. */
  visitors: bytes('visitors'),
  /** Clicks per country, referrer host, browser, OS and device: {"country":{"DE":3,"":1},…} ('' = unknown/direct). */
  dims: text('dims').notNull(),
}

export const linkRollups = table(
  'link_rollups',
  {
    linkId: text('link_id')
      .notNull()
      .references(() => links.id, { onDelete: 'cascade' }),
    ...figures,
  },
  (t) => [
    primaryKey({ columns: [t.linkId, t.grain, t.bucket] }),
    // Ranking links by clicks sums a year of day rows per link: from this index alone, never touching the
    // wide rows (sketches, dimensions) themselves.
    index('link_rollups_clicks_idx').on(t.linkId, t.grain, t.bucket, t.clicks),
  ],
)

/**
 * The same figures summed over a workspace's links, so workspace-wide questions read one row per bucket.
 * They keep the clicks of links deleted since: those visits happened.
 */
export const workspaceRollups = table(
  'workspace_rollups',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    ...figures,
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.grain, t.bucket] })],
)
