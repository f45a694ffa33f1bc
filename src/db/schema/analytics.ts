// Click rollups: what analytics reads instead of raw clicks. The click flush maintains them in the same
// transaction as the clicks, per link and per workspace, at two grains: UTC hours (any time zone's
// boundaries with whole-hour offsets) and UTC days (long ranges read 24 times fewer rows). A range is read
// as whole days in its middle, hours at its sides and raw clicks only for a partial hour at either end.
// Rollups are kept when raw clicks are pruned after LNK_CLICK_RETENTION_DAYS.
import { blob, index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { workspaces } from './identity'
import { links } from './links'

/**
 * `minute` buckets start on a UTC minute (workspaces only; pruned with the raw clicks), `hour` buckets on a
 * UTC hour, `day` buckets at UTC midnight, `month` buckets on the first of a UTC month (links only, summed
 * from the day buckets once the month is over). Epoch ms.
 */
export const ROLLUP_GRAINS = ['minute', 'hour', 'day', 'month'] as const

const figures = {
  grain: text('grain', { enum: ROLLUP_GRAINS }).notNull(),
  bucket: integer('bucket').notNull(),
  /** People's clicks (bots excluded). */
  clicks: integer('clicks').notNull(),
  /** Bot hits, crawler previews included: counted here and nowhere else. */
  bots: integer('bots').notNull(),
  /** HyperLogLog sketch of the visitors (see modules/analytics/hll.ts); null while clicks = 0. */
  visitors: blob('visitors', { mode: 'buffer' }),
  /** Clicks per country, referrer host, browser, OS and device: {"country":{"DE":3,"":1},…} ('' = unknown/direct). */
  dims: text('dims').notNull(),
}

export const linkRollups = sqliteTable('link_rollups', {
  linkId: text('link_id').notNull().references(() => links.id, { onDelete: 'cascade' }),
  ...figures,
}, (t) => [
  primaryKey({ columns: [t.linkId, t.grain, t.bucket] }),
  // Ranking links by clicks sums a year of day rows per link: from this index alone, never touching the
  // wide rows (sketches, dimensions) themselves.
  index('link_rollups_clicks_idx').on(t.linkId, t.grain, t.bucket, t.clicks),
])

/**
 * The same figures summed over a workspace's links, so workspace-wide questions read one row per bucket.
 * They keep the clicks of links deleted since: those visits happened.
 */
export const workspaceRollups = sqliteTable('workspace_rollups', {
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  ...figures,
}, (t) => [primaryKey({ columns: [t.workspaceId, t.grain, t.bucket] })])
