// Links, what their redirects need to remember (visitors, addresses) and the clicks they record.
import { bool, index, int, json, primaryKey, table, text, time, uniqueIndex } from '../columns'
import type { RoutingRule, Variant } from '../json-shapes'
import { workspaces } from './identity'

export const links = table(
  'links',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    domain: text('domain').notNull(),
    slug: text('slug').notNull(),
    destinationUrl: text('destination_url').notNull(),
    title: text('title'),
    description: text('description'),
    tags: json<string[]>('tags').notNull(),
    folderId: text('folder_id'),
    campaignId: text('campaign_id'),
    redirectStatus: int('redirect_status').notNull(),
    fallbackUrl: text('fallback_url'),
    passwordHash: text('password_hash'),
    expiresAt: time('expires_at'),
    clickLimit: int('click_limit'),
    uniqueIpLimit: int('unique_ip_limit'),
    publicStatsEnabled: bool('public_stats_enabled').notNull(),
    utmSource: text('utm_source'),
    utmMedium: text('utm_medium'),
    utmCampaign: text('utm_campaign'),
    utmTerm: text('utm_term'),
    utmContent: text('utm_content'),
    ogTitle: text('og_title'),
    ogDescription: text('og_description'),
    ogImageUrl: text('og_image_url'),
    twitterCard: text('twitter_card', { enum: ['summary', 'summary_large_image', 'player'] }),
    deepLinkEnabled: bool('deep_link_enabled').notNull(),
    captchaEnabled: bool('captcha_enabled').notNull(),
    consentRequired: bool('consent_required').notNull(),
    conversionTracking: bool('conversion_tracking').notNull(),
    /** A bridge page of the workspace shown instead of the redirect (no foreign key: the page refuses deletion while in use). */
    bridgePageId: text('bridge_page_id'),
    routingRules: json<RoutingRule[]>('routing_rules'),
    variants: json<Variant[]>('variants'),
    isActive: bool('is_active').notNull(),
    isArchived: bool('is_archived').notNull(),
    isTest: bool('is_test').notNull(),
    totalClicks: int('total_clicks').notNull(),
    uniqueClicks: int('unique_clicks').notNull(),
    /** The newest counted click's time (contract 7.3), kept by the click flush; null before any. */
    lastClickedAt: time('last_clicked_at'),
    /** The caller's own id for the link (contract 7.3), unique within the workspace. */
    externalId: text('external_id'),
    createdByKeyId: text('created_by_key_id'),
    /** Lower-cased slug, title, destination and tags, one per line: what `search` matches (kept by the service). */
    searchText: text('search_text').notNull(),
    createdAt: time('created_at').notNull(),
    updatedAt: time('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('links_domain_slug_unique').on(t.domain, t.slug),
    index('links_workspace_created_idx').on(t.workspaceId, t.createdAt, t.id),
    uniqueIndex('links_workspace_external_id_unique').on(t.workspaceId, t.externalId),
    // GET /links' sorts (contract 7.3): a page starts where its cursor points in one of these, whatever its depth.
    // total_clicks and last_clicked_at change at every flush of a clicked link, so those two cost the flush one
    // index entry each per link and batch (docs/performance.md weighs it); the others change with a PATCH only.
    index('links_workspace_updated_idx').on(t.workspaceId, t.updatedAt, t.id),
    index('links_workspace_clicks_idx').on(t.workspaceId, t.totalClicks, t.id),
    index('links_workspace_last_click_idx').on(t.workspaceId, t.lastClickedAt, t.id),
    index('links_workspace_title_idx').on(t.workspaceId, t.title, t.id),
    index('links_workspace_slug_idx').on(t.workspaceId, t.slug, t.id),
    // The console's folder view: a folder's links newest first, without walking the workspace's other links.
    // is_test before created_at: a key's list is of one mode, so the order still comes from the index, and the
    // three equalities make SQLite's planner prefer it to the flags index below for a folder.
    index('links_workspace_folder_idx').on(t.workspaceId, t.folderId, t.isTest, t.createdAt, t.id),
    // meta.pagination's count of a numbered page: index-only for the mode and flag filters (a live key's
    // default list counts live links), instead of reading each of a million rows for is_test.
    index('links_workspace_flags_idx').on(t.workspaceId, t.isTest, t.isArchived, t.isActive),
  ],
)

/** A workspace's tags as resources (contract 7.3); links keep tag names (link_tags), so a rename rewrites them. */
export const tags = table(
  'tags',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    color: text('color'),
    createdAt: time('created_at').notNull(),
    updatedAt: time('updated_at').notNull(),
  },
  (t) => [uniqueIndex('tags_workspace_name_unique').on(t.workspaceId, t.name)],
)

/** A workspace's folders (contract 7.3); a link's folderId names one or is null. */
export const folders = table(
  'folders',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    createdAt: time('created_at').notNull(),
    updatedAt: time('updated_at').notNull(),
  },
  (t) => [index('folders_workspace_name_idx').on(t.workspaceId, t.name, t.id)],
)

/** One row per tag of a link, so the tag filter is an exact, indexed match. */
export const linkTags = table(
  'link_tags',
  {
    linkId: text('link_id')
      .notNull()
      .references(() => links.id, { onDelete: 'cascade' }),
    tag: text('tag').notNull(),
  },
  (t) => [primaryKey({ columns: [t.linkId, t.tag] }), index('link_tags_tag_idx').on(t.tag, t.linkId)],
)

/** Distinct visitors (keyed hash of address + user agent) per link: uniqueClicks. */
export const linkVisitors = table(
  'link_visitors',
  {
    linkId: text('link_id')
      .notNull()
      .references(() => links.id, { onDelete: 'cascade' }),
    visitorHash: text('visitor_hash').notNull(),
    firstSeenAt: time('first_seen_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.linkId, t.visitorHash] })],
)

/** The first uniqueIpLimit distinct client addresses (keyed hashes) admitted to a link. */
export const linkAddresses = table(
  'link_addresses',
  {
    linkId: text('link_id')
      .notNull()
      .references(() => links.id, { onDelete: 'cascade' }),
    ipHash: text('ip_hash').notNull(),
    firstSeenAt: time('first_seen_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.linkId, t.ipHash] })],
)

/** One row per counted redirect. Raw IP addresses are never stored. */
export const clicks = table(
  'clicks',
  {
    id: text('id').primaryKey(),
    linkId: text('link_id')
      .notNull()
      .references(() => links.id, { onDelete: 'cascade' }),
    workspaceId: text('workspace_id').notNull(),
    clickedAt: time('clicked_at').notNull(),
    visitorHash: text('visitor_hash').notNull(),
    userAgent: text('user_agent'),
    referrer: text('referrer'),
    referrerHost: text('referrer_host'),
    country: text('country'),
    city: text('city'),
    device: text('device'),
    browser: text('browser'),
    os: text('os'),
    isBot: bool('is_bot').notNull(),
    /** The routing rule and the A/B variant that chose the destination (null: neither did). */
    ruleId: text('rule_id'),
    variantId: text('variant_id'),
    // Covering for what analytics reads of a link's raw clicks in a partial hour (counts, and visitors for
    // unique counts): index-only, in order, instead of a random table page per click. Widening the one index
    // costs a click write no extra B-tree.
  },
  (t) => [index('clicks_link_time_idx').on(t.linkId, t.clickedAt, t.isBot, t.visitorHash)],
)

/** Server-wide secrets and settings generated on first start (e.g. the key of visitor hashes). */
export const settings = table('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  createdAt: time('created_at').notNull(),
})

/** Live links created per workspace per UTC month: the plan allowance. */
export const linkUsage = table(
  'link_usage',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    month: text('month').notNull(),
    created: int('created').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.month] })],
)
