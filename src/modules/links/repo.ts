// Queries of the links area. Writes run in one synchronous transaction together with their outbox events
// and the plan-allowance counter, so a refused or failed write leaves nothing behind.
// The port comes first (plain types, Promises, so another database can sit behind the same signatures);
// the SQLite implementation follows it.
import { and, asc, count, desc, eq, exists, getTableColumns, gt, inArray, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { isUniqueViolation } from '../../db/errors'
import { hotStatement } from '../../db/hot'
import { escapeLike } from '../../db/like'
import type { Insertable } from '../../db/rows'
import { linkTags, linkUsage, links } from '../../db/schema'
import type { Tx } from '../../db/tx'
import { preparedPublisher, publish, type PublishInput } from '../../events/outbox'

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
  isActive: boolean
  isArchived: boolean
  isTest: boolean
  totalClicks: number
  uniqueClicks: number
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
  | 'id' | 'workspaceId' | 'domain' | 'slug' | 'destinationUrl' | 'title' | 'description' | 'redirectStatus' | 'fallbackUrl'
  | 'passwordHash' | 'expiresAt' | 'clickLimit' | 'uniqueIpLimit' | 'publicStatsEnabled' | 'utmSource' | 'utmMedium'
  | 'utmCampaign' | 'utmTerm' | 'utmContent' | 'ogTitle' | 'ogDescription' | 'ogImageUrl' | 'twitterCard' | 'deepLinkEnabled'
  | 'captchaEnabled' | 'consentRequired' | 'conversionTracking' | 'bridgePageId' | 'isActive' | 'isTest' | 'totalClicks'
>

export interface LinkFilter {
  workspaceId: string
  search?: string
  tag?: string
  domain?: string
  archived?: boolean
  isTest?: boolean
  /** The calling key's scope filters: only links on these domains / carrying one of these tags. */
  scope?: { domains?: string[]; tags?: string[] } | null
}

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
  constructor(readonly reason: 'slug_taken' | 'plan_limit_reached', readonly index = 0) {
    super(reason)
  }
}

export interface LinksRepo {
  /**
   * Synchronous on purpose: the redirect path reads through it on a link-cache miss and never awaits the
   * database (an adapter for a server database answers it from memory or a replica it keeps in step).
   */
  findRedirectSync(domain: string, slug: string): RedirectLink | undefined
  /** Up to `limit` links after `afterId` in id order, as the redirect keeps them: to fill its cache at start. */
  redirectLinksSync(afterId: string, limit: number): RedirectLink[]
  findById(workspaceId: string, id: string): Promise<LinkRow | undefined>
  /** Newest first. */
  list(f: LinkFilter, page: number, perPage: number): Promise<{ rows: LinkRow[]; total: number }>
  /**
   * Inserts links with their events in one transaction. The allowance is checked against the month's
   * counter inside the transaction, so it holds under concurrency. Answers per input either the row or
   * the reason it was refused; refused inputs change nothing.
   */
  insertMany(items: LinkInsert[], usage: PlanUsage, now: number): Promise<(LinkRow | LinkWriteRefused)[]>
  /** Updates a link and publishes its event; slug_taken when the new domain/slug is in use, undefined when the link is gone. */
  update(id: string, patch: Partial<NewLink>, event: (row: LinkRow) => PublishInput, now: number): Promise<LinkRow | LinkWriteRefused | undefined>
  /** Deletes the link and publishes the event; false when it was gone already. */
  delete(id: string, event: PublishInput, now: number): Promise<boolean>
  /** Which of the slugs are taken on the domain. */
  slugsInUse(domain: string, slugs: string[]): Promise<Set<string>>
}

// --- SQLite ------------------------------------------------------------------------------------------

/** The slugs one prepared statement checks at once: a generated-slug round asks for 8 candidates. */
const SLUGS_PER_CHECK = 8

/**
 * The redirect's read on a link-cache miss and the statements of a bulk create run on the driver
 * (db/hot.ts); link rows are decoded by this mapping, derived from the table so it follows the schema.
 */
const LINK_COLUMNS = Object.entries(getTableColumns(links)).map(([key, column]) => ({ key, column }))

function decodeLink(raw: Record<string, unknown>): LinkRow {
  const row: Record<string, unknown> = {}
  for (const { key, column } of LINK_COLUMNS) {
    const v = raw[column.name]
    row[key] = v === null || v === undefined ? null : column.mapFromDriverValue(v)
  }
  return row as unknown as LinkRow
}

const REDIRECT_COLUMNS = {
  id: links.id, workspaceId: links.workspaceId, domain: links.domain, slug: links.slug, destinationUrl: links.destinationUrl,
  title: links.title, description: links.description, redirectStatus: links.redirectStatus, fallbackUrl: links.fallbackUrl,
  passwordHash: links.passwordHash, expiresAt: links.expiresAt, clickLimit: links.clickLimit, uniqueIpLimit: links.uniqueIpLimit,
  publicStatsEnabled: links.publicStatsEnabled, utmSource: links.utmSource, utmMedium: links.utmMedium, utmCampaign: links.utmCampaign,
  utmTerm: links.utmTerm, utmContent: links.utmContent, ogTitle: links.ogTitle, ogDescription: links.ogDescription,
  ogImageUrl: links.ogImageUrl, twitterCard: links.twitterCard, deepLinkEnabled: links.deepLinkEnabled, captchaEnabled: links.captchaEnabled,
  consentRequired: links.consentRequired, conversionTracking: links.conversionTracking, bridgePageId: links.bridgePageId, isActive: links.isActive,
  isTest: links.isTest, totalClicks: links.totalClicks,
}

/**
 * Workspace ids and domains repeat across every cached link: one string each instead of one per link.
 * Bounded like any cache; past it, strings are simply not shared.
 */
function interner(max = 50_000) {
  const seen = new Map<string, string>()
  return (s: string) => {
    const hit = seen.get(s)
    if (hit !== undefined) return hit
    if (seen.size < max) seen.set(s, s)
    return s
  }
}

/** A literal of fixed shape: far smaller in memory than an object filled key by key. */
function decodeRedirectLink(r: Record<string, unknown>, intern: (s: string) => string): RedirectLink {
  const str = (v: unknown) => (v === null || v === undefined ? null : (v as string))
  const num = (v: unknown) => (v === null || v === undefined ? null : (v as number))
  return {
    id: r.id as string,
    workspaceId: intern(r.workspace_id as string),
    domain: intern(r.domain as string),
    slug: r.slug as string,
    destinationUrl: r.destination_url as string,
    title: str(r.title),
    description: str(r.description),
    redirectStatus: r.redirect_status as number,
    fallbackUrl: str(r.fallback_url),
    passwordHash: str(r.password_hash),
    expiresAt: num(r.expires_at),
    clickLimit: num(r.click_limit),
    uniqueIpLimit: num(r.unique_ip_limit),
    publicStatsEnabled: r.public_stats_enabled === 1,
    utmSource: str(r.utm_source),
    utmMedium: str(r.utm_medium),
    utmCampaign: str(r.utm_campaign),
    utmTerm: str(r.utm_term),
    utmContent: str(r.utm_content),
    ogTitle: str(r.og_title),
    ogDescription: str(r.og_description),
    ogImageUrl: str(r.og_image_url),
    twitterCard: str(r.twitter_card) as RedirectLink['twitterCard'],
    deepLinkEnabled: r.deep_link_enabled === 1,
    captchaEnabled: r.captcha_enabled === 1,
    consentRequired: r.consent_required === 1,
    conversionTracking: r.conversion_tracking === 1,
    bridgePageId: str(r.bridge_page_id),
    isActive: r.is_active === 1,
    isTest: r.is_test === 1,
    totalClicks: r.total_clicks as number,
  }
}

function writeTags(tx: Tx, linkId: string, tags: string[]) {
  tx.delete(linkTags).where(eq(linkTags.linkId, linkId)).run()
  if (tags.length) tx.insert(linkTags).values(tags.map((tag) => ({ linkId, tag }))).run()
}

export function createLinksRepo(db: Db): LinksRepo {
  const intern = interner()
  const redirectByDomainSlug = hotStatement(db, db.select(REDIRECT_COLUMNS).from(links).where(and(eq(links.domain, sql.placeholder('domain')), eq(links.slug, sql.placeholder('slug')))))
  const redirectPage = hotStatement(db, db.select(REDIRECT_COLUMNS).from(links).where(gt(links.id, sql.placeholder('afterId'))).orderBy(asc(links.id)).limit(sql.placeholder('limit')))
  const insertLink = hotStatement(
    db,
    db
      .insert(links)
      .values(Object.fromEntries(LINK_COLUMNS.map(({ key }) => [key, sql.placeholder(key)])) as Record<keyof LinkRow, Placeholder>)
      .onConflictDoNothing()
      .returning(),
  )
  const slotNames = Array.from({ length: SLUGS_PER_CHECK }, (_, i) => `s${i}`)
  const slugsTaken = hotStatement(
    db,
    db
      .select({ slug: links.slug })
      .from(links)
      .where(and(eq(links.domain, sql.placeholder('domain')), inArray(links.slug, slotNames.map((name) => sql.placeholder(name))))),
  )
  const insertTag = hotStatement(db, db.insert(linkTags).values({ linkId: sql.placeholder('linkId'), tag: sql.placeholder('tag') }).onConflictDoNothing())
  const publishFast = preparedPublisher(db)

  function where(f: LinkFilter): SQL {
    const parts: (SQL | undefined)[] = [eq(links.workspaceId, f.workspaceId)]
    // search_text is lower-cased by the service (Unicode-aware), so a plain LIKE is case-insensitive everywhere.
    if (f.search) parts.push(sql`${links.searchText} like ${`%${escapeLike(f.search.toLowerCase())}%`} escape '\\'`)
    if (f.tag) parts.push(exists(db.select({ linkId: linkTags.linkId }).from(linkTags).where(and(eq(linkTags.linkId, links.id), eq(linkTags.tag, f.tag)))))
    if (f.domain) parts.push(eq(links.domain, f.domain))
    if (f.archived !== undefined) parts.push(eq(links.isArchived, f.archived))
    if (f.isTest !== undefined) parts.push(eq(links.isTest, f.isTest))
    if (f.scope?.domains?.length) parts.push(inArray(links.domain, f.scope.domains))
    if (f.scope?.tags?.length) parts.push(exists(db.select({ linkId: linkTags.linkId }).from(linkTags).where(and(eq(linkTags.linkId, links.id), inArray(linkTags.tag, f.scope.tags)))))
    return and(...parts)!
  }

  return {
    findRedirectSync(domain, slug) {
      const raw = redirectByDomainSlug.get({ domain, slug })
      return raw && decodeRedirectLink(raw, intern)
    },
    redirectLinksSync(afterId, limit) {
      return redirectPage.all({ afterId, limit }).map((raw) => decodeRedirectLink(raw, intern))
    },
    async findById(workspaceId, id) {
      return db.select().from(links).where(and(eq(links.workspaceId, workspaceId), eq(links.id, id))).get()
    },
    async list(f, page, perPage) {
      const w = where(f)
      const total = db.select({ n: count() }).from(links).where(w).get()?.n ?? 0
      const rows = db
        .select()
        .from(links)
        .where(w)
        .orderBy(desc(links.createdAt), desc(links.id))
        .limit(perPage)
        .offset((page - 1) * perPage)
        .all()
      return { rows, total }
    },
    async insertMany(items, usage, now) {
      return db.transaction((tx) => {
        let used = tx.select({ created: linkUsage.created }).from(linkUsage).where(and(eq(linkUsage.workspaceId, usage.workspaceId), eq(linkUsage.month, usage.month))).get()?.created ?? 0
        const results: (LinkRow | LinkWriteRefused)[] = []
        let counted = 0
        for (const [index, item] of items.entries()) {
          if (item.countsTowardsPlan && usage.allowance !== null && used >= usage.allowance) {
            results.push(new LinkWriteRefused('plan_limit_reached', index))
            continue
          }
          const raw = insertLink.get(item.row)
          if (!raw) {
            results.push(new LinkWriteRefused('slug_taken', index))
            continue
          }
          const inserted = decodeLink(raw)
          for (const tag of inserted.tags) insertTag.run({ linkId: inserted.id, tag })
          publishFast(item.event(inserted), now)
          if (item.countsTowardsPlan) {
            used++
            counted++
          }
          results.push(inserted)
        }
        if (counted) {
          tx.insert(linkUsage)
            .values({ workspaceId: usage.workspaceId, month: usage.month, created: counted })
            .onConflictDoUpdate({ target: [linkUsage.workspaceId, linkUsage.month], set: { created: sql`${linkUsage.created} + ${counted}` } })
            .run()
        }
        return results
      }, { behavior: 'immediate' })
    },
    async update(id, patch, event, now) {
      try {
        return db.transaction((tx) => {
          const row = tx.update(links).set(patch).where(eq(links.id, id)).returning().get()
          if (!row) return row
          if (patch.tags) writeTags(tx, row.id, row.tags)
          publish(tx, event(row), now)
          return row
        })
      } catch (err) {
        if (isUniqueViolation(err, 'links_domain_slug_unique')) return new LinkWriteRefused('slug_taken')
        throw err
      }
    },
    async delete(id, event, now) {
      return db.transaction((tx) => {
        const gone = tx.delete(links).where(eq(links.id, id)).returning({ id: links.id }).all()
        if (gone.length) publish(tx, event, now)
        return gone.length > 0
      })
    },
    async slugsInUse(domain, slugs) {
      const taken = new Set<string>()
      for (let i = 0; i < slugs.length; i += SLUGS_PER_CHECK) {
        const params: Record<string, string> = { domain }
        slotNames.forEach((name, j) => (params[name] = slugs[i + j] ?? ''))
        for (const r of slugsTaken.all(params)) taken.add(r.slug as string)
      }
      return taken
    },
  }
}
