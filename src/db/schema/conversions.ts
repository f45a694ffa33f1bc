// Conversions recorded by the public beacon (POST /v1/conversions): each one attributed to the click whose
// lnk_cid it carried, that click's link and the link's workspace.
import { index, json, real, table, text, time } from '../columns'
import { links } from './links'

export const conversions = table(
  'conversions',
  {
    id: text('id').primaryKey(),
    /**
     * The click (clk_…) that led to it. No foreign key on purpose: raw clicks will be pruned after their
     * retention period while conversions, like hourly rollups, stay.
     */
    clickId: text('click_id').notNull(),
    /** The click's link; deleting a link removes its conversions with its clicks. */
    linkId: text('link_id')
      .notNull()
      .references(() => links.id, { onDelete: 'cascade' }),
    workspaceId: text('workspace_id').notNull(),
    eventName: text('event_name').notNull(),
    /** In the currency's major unit as sent (19.99 = 19.99 EUR); null when no value was sent. */
    value: real('value'),
    /** ISO 4217 code; set exactly when value is. */
    currency: text('currency'),
    metadata: json<Record<string, unknown> | null>('metadata'),
    /** SHA-256 of clickId, eventName, value, currency and metadata: a resent beacon within 24 h is counted once. */
    fingerprint: text('fingerprint').notNull(),
    createdAt: time('created_at').notNull(),
  },
  (t) => [
    // Analytics sums value per currency per link (or workspace) per hour: these answer from the index alone.
    index('conversions_link_time_idx').on(t.linkId, t.createdAt, t.currency, t.value),
    index('conversions_workspace_time_idx').on(t.workspaceId, t.createdAt, t.linkId, t.currency, t.value),
    index('conversions_fingerprint_idx').on(t.fingerprint, t.createdAt),
  ],
)
