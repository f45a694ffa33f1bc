// The links area's statements that only SQLite runs, prepared once on the driver (db/hot.ts): the redirect's
// synchronous reads (a link-cache miss, the cache fill at start) and the per-link statements of a bulk create,
// which repo.ts calls inside its transaction on the same connection. Everything else is written once in repo.ts.
import { and, asc, eq, getTableColumns, gt, inArray, sql, type Placeholder } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { hotStatement } from '../../db/hot'
import { linkTags, links } from '../../db/schema'
import { preparedPublisher } from '../../events/outbox'
import type { LinkRow, LinkStatements, RedirectLink, RedirectReads } from './port'
import { redirectColumns } from './repo'

/** The slugs one prepared statement checks at once: a generated-slug round asks for 8 candidates. */
const SLUGS_PER_CHECK = 8

/** Link rows from the driver are decoded by this mapping, derived from the table so it follows the schema. */
const LINK_COLUMNS = Object.entries(getTableColumns(links)).map(([key, column]) => ({ key, column }))

function decodeLink(raw: Record<string, unknown>): LinkRow {
  const row: Record<string, unknown> = {}
  for (const { key, column } of LINK_COLUMNS) {
    const v = raw[column.name]
    row[key] = v === null || v === undefined ? null : column.mapFromDriverValue(v)
  }
  return row as unknown as LinkRow
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
    routingRules: r.routing_rules == null ? null : JSON.parse(r.routing_rules as string),
    variants: r.variants == null ? null : JSON.parse(r.variants as string),
    isActive: r.is_active === 1,
    isTest: r.is_test === 1,
    totalClicks: r.total_clicks as number,
  }
}

/** The redirect's reads on `db`, the requests' connection: what a link-cache miss and the cache fill cost. */
export function createRedirectReads(db: Db): RedirectReads {
  const intern = interner()
  const columns = redirectColumns(links)
  const byDomainSlug = hotStatement(
    db,
    db
      .select(columns)
      .from(links)
      .where(and(eq(links.domain, sql.placeholder('domain')), eq(links.slug, sql.placeholder('slug')))),
  )
  const page = hotStatement(
    db,
    db
      .select(columns)
      .from(links)
      .where(gt(links.id, sql.placeholder('afterId')))
      .orderBy(asc(links.id))
      .limit(sql.placeholder('limit')),
  )
  return {
    findRedirectSync(domain, slug) {
      const raw = byDomainSlug.get({ domain, slug })
      return raw && decodeRedirectLink(raw, intern)
    },
    redirectLinksSync(afterId, limit) {
      return page.all({ afterId, limit }).map((raw) => decodeRedirectLink(raw, intern))
    },
  }
}

/**
 * A bulk create's per-link statements and the slug checks (port.ts, LinkStatements), prepared once: they keep
 * 1,000 links with their tags and events to about a tenth of a second.
 */
export function createLinkStatements(db: Db): LinkStatements {
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
      .where(
        and(
          eq(links.domain, sql.placeholder('domain')),
          inArray(
            links.slug,
            slotNames.map((name) => sql.placeholder(name)),
          ),
        ),
      ),
  )
  const insertTag = hotStatement(
    db,
    db
      .insert(linkTags)
      .values({ linkId: sql.placeholder('linkId'), tag: sql.placeholder('tag') })
      .onConflictDoNothing(),
  )
  const publish = preparedPublisher(db)
  return {
    insertLink(row) {
      const raw = insertLink.get(row)
      return raw && decodeLink(raw)
    },
    insertTag(linkId, tag) {
      insertTag.run({ linkId, tag })
    },
    publish(input, now) {
      publish(input, now)
    },
    slugsInUse(domain, slugs) {
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
