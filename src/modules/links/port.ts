// The links area's port: what the service and the redirect ask of storage, in plain types (repo.ts answers it
// on either engine; repo-sqlite.ts adds the redirect's synchronous reads on SQLite).
import type { Insertable } from '../../db/rows'
import type { RoutingRule, Variant } from '../../db/json-shapes'
import type { PublishInput } from '../../events/outbox'

/** Every field of spec 2.3, the counters and what search matches. */
export interface LinkRow {
  id: string
  workspaceId: string
  domain: string
  slug: string
  destinationUrl: string
  title: string | null
  description: string | null
  tags: string[]
  folderId: string | null
  campaignId: string | null
  redirectStatus: number
  fallbackUrl: string | null
  passwordHash: string | null
  expiresAt: number | null
  clickLimit: number | null
  uniqueIpLimit: number | null
  publicStatsEnabled: boolean
  utmSource: string | null
  utmMedium: string | null
  utmCampaign: string | null
  utmTerm: string | null
  utmContent: string | null
  ogTitle: string | null
  ogDescription: string | null
  ogImageUrl: string | null
  twitterCard: 'summary' | 'summary_large_image' | 'player' | null
  deepLinkEnabled: boolean
  captchaEnabled: boolean
  consentRequired: boolean
  conversionTracking: boolean
  bridgePageId: string | null
  /** Contract 7.1: evaluated in order on a visit, the first match picks the destination. */
  routingRules: RoutingRule[] | null
  variants: Variant[] | null
  isActive: boolean
  isArchived: boolean
  isTest: boolean
  totalClicks: number
  uniqueClicks: number
  /** Contract 7.3: the newest counted click's time, kept by the click flush. */
  lastClickedAt: number | null
  /** Contract 7.3: the caller's own id, unique within the workspace. */
  externalId: string | null
  createdByKeyId: string | null
  /** Lower-cased slug, title, destination and tags, one per line (kept by the service). */
  searchText: string
  createdAt: number
  updatedAt: number
}

export type NewLink = Insertable<LinkRow>

/**
 * What the redirect path keeps of a link in memory: the fields a visit, its pages and its destination may
 * need, nothing else (no tags, search text or bookkeeping), so 100,000 cached links stay small.
 */
export type RedirectLink = Pick<
  LinkRow,
  | 'id'
  | 'workspaceId'
  | 'domain'
  | 'slug'
  | 'destinationUrl'
  | 'title'
  | 'description'
  | 'redirectStatus'
  | 'fallbackUrl'
  | 'passwordHash'
  | 'expiresAt'
  | 'clickLimit'
  | 'uniqueIpLimit'
  | 'publicStatsEnabled'
  | 'utmSource'
  | 'utmMedium'
  | 'utmCampaign'
  | 'utmTerm'
  | 'utmContent'
  | 'ogTitle'
  | 'ogDescription'
  | 'ogImageUrl'
  | 'twitterCard'
  | 'deepLinkEnabled'
  | 'captchaEnabled'
  | 'consentRequired'
  | 'conversionTracking'
  | 'bridgePageId'
  | 'routingRules'
  | 'variants'
  | 'isActive'
  | 'isTest'
  | 'totalClicks'
>

/** A link to insert, the event its insert publishes, and whether it counts towards the plan allowance. */
export interface LinkInsert {
  row: NewLink
  event: (row: LinkRow) => PublishInput
  countsTowardsPlan: boolean
}

/** Live links per month: the workspace's counter for `month`, and its allowance (null = no limit). */
export interface PlanUsage {
  workspaceId: string
  month: string
  allowance: number | null
}

/** Thrown inside a write transaction to roll it back with a reason the service turns into an AppError. */
export class LinkWriteRefused extends Error {
  constructor(
    readonly reason: 'slug_taken' | 'external_id_taken' | 'plan_limit_reached',
    readonly index = 0,
  ) {
    super(reason)
  }
}

export interface LinksRepo {
  /** The link as the redirect keeps it; PostgreSQL's redirect awaits it on a link-cache miss. */
  findRedirect(domain: string, slug: string): Promise<RedirectLink | undefined>
  /** Up to `limit` links after `afterId` in id order (bytewise), as the redirect keeps them: to fill its cache at start. */
  redirectLinks(afterId: string, limit: number): Promise<RedirectLink[]>
  findById(workspaceId: string, id: string): Promise<LinkRow | undefined>
  /** The workspace's link with this externalId (repo-external-id.ts). */
  findByExternalId(workspaceId: string, externalId: string): Promise<LinkRow | undefined>
  /** The workspace's link at domain/slug (repo-external-id.ts). */
  findBySlug(workspaceId: string, domain: string, slug: string): Promise<LinkRow | undefined>
  /**
   * Inserts links with their events in one transaction. The allowance is checked against the month's
   * counter inside the transaction, so it holds under concurrency. Answers per input either the row or
   * the reason it was refused; refused inputs change nothing.
   */
  insertMany(items: LinkInsert[], usage: PlanUsage, now: number): Promise<(LinkRow | LinkWriteRefused)[]>
  /**
   * Updates a link and publishes its event; slug_taken when the new domain/slug is in use, external_id_taken
   * when the new externalId is, undefined when the link is gone.
   */
  update(id: string, patch: Partial<NewLink>, event: (row: LinkRow) => PublishInput, now: number): Promise<LinkRow | LinkWriteRefused | undefined>
  /** Deletes the link and publishes the event; false when it was gone already. */
  delete(id: string, event: PublishInput, now: number): Promise<boolean>
  /** Which of the slugs are taken on the domain. */
  slugsInUse(domain: string, slugs: string[]): Promise<Set<string>>
}

/**
 * The redirect path's reads on SQLite (repo-sqlite.ts), answered without awaiting: a link-cache miss never
 * waits for the database there. The same answers as LinksRepo's findRedirect and redirectLinks; PostgreSQL
 * has none of these, and its redirect awaits those.
 */
export interface RedirectReads {
  findRedirectSync(domain: string, slug: string): RedirectLink | undefined
  redirectLinksSync(afterId: string, limit: number): RedirectLink[]
}

/**
 * SQLite's statements for the per-link writes of a bulk create and for slug checks (repo-sqlite.ts), prepared
 * once on the engine's connection. repo.ts runs them inside its own transaction on that connection, where it
 * is given them; the builder's statements do the same without them.
 */
export interface LinkStatements {
  /** Inserts the row unless its id or its domain/slug is taken; answers it as stored. */
  insertLink(row: NewLink): LinkRow | undefined
  insertTag(linkId: string, tag: string): void
  /** publish() through one statement prepared once. */
  publish(input: PublishInput, now: number): void
  /** Which of the slugs are taken on the domain. */
  slugsInUse(domain: string, slugs: string[]): Set<string>
}
