// The Link of spec 2.2 as answered and as carried by the link events, built from a stored row.
import type { Deps } from '../../context'
import { iso, isoOrNull } from '../../platform/clock'
import type { LinksCtx } from './context'
import type { Static } from 'elysia'
import type { QrObject, RoutingRule } from './model'
import type { LinkRow } from './port'
import { shortUrl } from './slug'

export function toLink(ctx: Pick<Deps, 'config'>, row: LinkRow) {
  return {
    id: row.id,
    slug: row.slug,
    domain: row.domain,
    destinationUrl: row.destinationUrl,
    shortUrl: shortUrl(ctx, row),
    title: row.title,
    description: row.description,
    tags: row.tags,
    folderId: row.folderId,
    campaignId: row.campaignId,
    redirectStatus: row.redirectStatus as 301 | 302 | 307 | 308,
    fallbackUrl: row.fallbackUrl,
    hasPassword: row.passwordHash !== null,
    expiresAt: isoOrNull(row.expiresAt),
    clickLimit: row.clickLimit,
    uniqueIpLimit: row.uniqueIpLimit,
    publicStatsEnabled: row.publicStatsEnabled,
    utmSource: row.utmSource,
    utmMedium: row.utmMedium,
    utmCampaign: row.utmCampaign,
    utmTerm: row.utmTerm,
    utmContent: row.utmContent,
    ogTitle: row.ogTitle,
    ogDescription: row.ogDescription,
    ogImageUrl: row.ogImageUrl,
    twitterCard: row.twitterCard,
    deepLinkEnabled: row.deepLinkEnabled,
    captchaEnabled: row.captchaEnabled,
    consentRequired: row.consentRequired,
    conversionTracking: row.conversionTracking,
    bridgePageId: row.bridgePageId,
    // Stored only after routing-fields.ts checked each condition against its field's shape, which the type states.
    routingRules: row.routingRules as Static<typeof RoutingRule>[] | null,
    variants: row.variants,
    totalClicks: row.totalClicks,
    uniqueClicks: row.uniqueClicks,
    isActive: row.isActive,
    isArchived: row.isArchived,
    isTest: row.isTest,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    lastClickedAt: isoOrNull(row.lastClickedAt),
    externalId: row.externalId,
  }
}

export type LinkView = ReturnType<typeof toLink> & { qr?: QrObject }

export async function withQr(ctx: Pick<LinksCtx, 'config' | 'qr'>, view: LinkView, include: boolean): Promise<LinkView> {
  return include ? { ...view, qr: await ctx.qr(ctx.config, view.shortUrl) } : view
}
