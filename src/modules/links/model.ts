// TypeBox shapes of links: the create body of spec 2.3 (plus conversionTracking), the PATCH body, and the
// Link of spec 2.2 with every stored field.
import type { TSchema } from '@sinclair/typebox'
import { t, type Static } from 'elysia'
import type { EventDefinition } from '../../events/catalogue'
import type { Config } from '../../platform/config'
import { RoutingRule, routingInput, RULES_DOC, ROUTING_LIMITS, Variant, VARIANTS_DOC } from './routing-model'
import { url } from './url-schema'
import { ExternalIdField } from './external-id'

// The slug rules and short-URL building are pure and used beside the redirect path, by areas the links module
// itself depends on (pages): they are reached here, not through index.ts, so no import cycle forms.
export { isReservedSlug, RESERVED_SLUGS, shortUrl } from './slug'
// Routing rules and variants (contract 7.1): their schemas and value sets, for the console's editor and resolve.
export { BROWSERS, CONTINENTS, DEVICES, OSES, ROUTING_FIELDS, ROUTING_LIMITS, RoutingCondition, RoutingRule, TRIGGERS, Variant } from './routing-model'

const nullableString = (max: number, description?: string) => t.Optional(t.Union([t.String({ maxLength: max }), t.Null()], description ? { description } : {}))
const Url = url('Where the link sends visitors; not a short link of this service (it would loop)')
const Timestamp = t.String({ format: 'date-time' })

export const SLUG_PATTERN = '^[A-Za-z0-9_-]{1,64}$'

export const TwitterCard = t.Union([t.Literal('summary'), t.Literal('summary_large_image'), t.Literal('player')])
export const RedirectStatus = t.Union([t.Literal(301), t.Literal(302), t.Literal(307), t.Literal(308)])

/** Fields a link can be created or updated with. */
const linkFields = {
  destinationUrl: Url,
  slug: t.Optional(t.String({ pattern: SLUG_PATTERN, description: '1-64 of A-Z a-z 0-9 _ -, case-sensitive; generated (7 characters) when omitted' })),
  domain: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 253,
      description: "A shared short domain or one of the workspace's verified domains; the first shared domain when omitted",
    }),
  ),
  title: nullableString(500),
  description: nullableString(2000),
  tags: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
  folderId: nullableString(128),
  campaignId: nullableString(128),
  redirectStatus: t.Optional(RedirectStatus),
  fallbackUrl: t.Optional(t.Union([url('Where visitors go once the link expired or reached a limit; a 410 page when null'), t.Null()])),
  password: t.Optional(
    t.Union([t.String({ minLength: 1, maxLength: 128 }), t.Null()], { description: 'Visitors must enter it; stored as an argon2id hash and never returned' }),
  ),
  expiresAt: t.Optional(t.Union([Timestamp, t.Null()], { description: 'When the link stops redirecting; must be in the future (null: never)' })),
  clickLimit: t.Optional(t.Union([t.Integer({ minimum: 1 }), t.Null()])),
  uniqueIpLimit: t.Optional(t.Union([t.Integer({ minimum: 1 }), t.Null()], { description: 'Only the first N distinct client addresses are served' })),
  publicStatsEnabled: t.Optional(t.Boolean()),
  utmSource: nullableString(255),
  utmMedium: nullableString(255),
  utmCampaign: nullableString(255),
  utmTerm: nullableString(255),
  utmContent: nullableString(255),
  ogTitle: nullableString(300),
  ogDescription: nullableString(1000),
  ogImageUrl: t.Optional(t.Union([url('The image link previews show'), t.Null()])),
  twitterCard: t.Optional(t.Union([TwitterCard, t.Null()])),
  deepLinkEnabled: t.Optional(t.Boolean()),
  captchaEnabled: t.Optional(t.Boolean()),
  consentRequired: t.Optional(t.Boolean()),
  conversionTracking: t.Optional(t.Boolean({ description: 'Append lnk_cid=<click id> to the destination, for POST /conversions' })),
  bridgePageId: t.Optional(
    t.Union([t.String({ maxLength: 64 }), t.Null()], {
      description: 'A bridge page of the workspace (bp_…) shown instead of redirecting; null: redirect as usual. Not together with routingRules or variants',
    }),
  ),
  ...routingInput,
  externalId: ExternalIdField,
}

export const Include = t.Array(t.Literal('qr'), { maxItems: 1, description: 'Only "qr" is allowed: returns the link with its qr object' })

export const CreateLinkBody = t.Object({ include: t.Optional(Include), ...linkFields }, { additionalProperties: false, title: 'LinkCreate' })
export type CreateLinkInput = Static<typeof CreateLinkBody>

export const Qr = t.Object(
  { svg: t.String({ description: 'Inline SVG' }), png: t.String({ description: '{base_url}/qr/render?data=<short URL>&size=<px>' }) },
  { title: 'Qr' },
)
export type QrObject = Static<typeof Qr>
/** Renders a link's qr object from its short URL (the qr module's linkQr). */
export type LinkQr = (config: Pick<Config, 'baseUrl'>, shortUrl: string) => Promise<QrObject>

/**
 * Fields of the Link that only the server sets. A PATCH may carry them, so a client can send back a Link it
 * fetched; they are ignored (isActive and isArchived are not among them: PATCH changes those).
 */
const readOnlyFields = {
  id: t.String({ format: 'uuid' }),
  shortUrl: t.String(),
  hasPassword: t.Boolean({ description: 'Whether a password protects the link; the password itself is never returned' }),
  totalClicks: t.Integer({ minimum: 0 }),
  uniqueClicks: t.Integer({ minimum: 0 }),
  isTest: t.Boolean({ description: 'Made by a test key (sandboxed); fixed at creation' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  lastClickedAt: t.Union([Timestamp, t.Null()], { description: 'When the newest counted click happened (null: never clicked); kept as clicks are written' }),
  qr: Qr,
}
export const READ_ONLY_LINK_FIELDS = Object.keys(readOnlyFields) as (keyof typeof readOnlyFields)[]

/** A read-only field as the PATCH body states it: accepted (typed as in the Link), marked readOnly, ignored. */
function ignoredWhenSent<T extends TSchema>(schema: T) {
  // Without the title: the Link's own Qr schema stays the one "Qr" of the document.
  const { title: _title, description, ...rest } = schema as T & { title?: string; description?: string }
  return t.Optional({
    ...rest,
    readOnly: true,
    description: `${description ? `${description}. ` : ''}Read-only: ignored when sent, so a fetched Link can be sent back`,
  } as unknown as T)
}

/**
 * PATCH (spec 4.1: the create body's shape): any subset of the create fields, include, the link flags, and
 * the Link's read-only fields, which are ignored. null clears a nullable field; other fields are refused.
 */
export const UpdateLinkBody = t.Object(
  {
    include: t.Optional(Include),
    ...linkFields,
    destinationUrl: t.Optional(Url),
    isActive: t.Optional(t.Boolean()),
    isArchived: t.Optional(t.Boolean()),
    id: ignoredWhenSent(readOnlyFields.id),
    shortUrl: ignoredWhenSent(readOnlyFields.shortUrl),
    hasPassword: ignoredWhenSent(readOnlyFields.hasPassword),
    totalClicks: ignoredWhenSent(readOnlyFields.totalClicks),
    uniqueClicks: ignoredWhenSent(readOnlyFields.uniqueClicks),
    isTest: ignoredWhenSent(readOnlyFields.isTest),
    createdAt: ignoredWhenSent(readOnlyFields.createdAt),
    updatedAt: ignoredWhenSent(readOnlyFields.updatedAt),
    lastClickedAt: ignoredWhenSent(readOnlyFields.lastClickedAt),
    qr: ignoredWhenSent(readOnlyFields.qr),
  },
  { additionalProperties: false, title: 'LinkUpdate' },
)
export type UpdateLinkInput = Static<typeof UpdateLinkBody>

const NullableString = t.Union([t.String(), t.Null()])

export const Link = t.Object(
  {
    id: readOnlyFields.id,
    slug: t.String(),
    domain: t.String(),
    destinationUrl: t.String(),
    shortUrl: readOnlyFields.shortUrl,
    title: NullableString,
    description: NullableString,
    tags: t.Array(t.String()),
    folderId: NullableString,
    campaignId: NullableString,
    redirectStatus: RedirectStatus,
    fallbackUrl: NullableString,
    hasPassword: readOnlyFields.hasPassword,
    expiresAt: t.Union([Timestamp, t.Null()]),
    clickLimit: t.Union([t.Integer(), t.Null()]),
    uniqueIpLimit: t.Union([t.Integer(), t.Null()]),
    publicStatsEnabled: t.Boolean(),
    utmSource: NullableString,
    utmMedium: NullableString,
    utmCampaign: NullableString,
    utmTerm: NullableString,
    utmContent: NullableString,
    ogTitle: NullableString,
    ogDescription: NullableString,
    ogImageUrl: NullableString,
    twitterCard: t.Union([TwitterCard, t.Null()]),
    deepLinkEnabled: t.Boolean(),
    captchaEnabled: t.Boolean(),
    consentRequired: t.Boolean(),
    conversionTracking: t.Boolean(),
    bridgePageId: NullableString,
    routingRules: t.Union([t.Array(RoutingRule, { minItems: 1, maxItems: ROUTING_LIMITS.rules }), t.Null()], { description: RULES_DOC }),
    variants: t.Union([t.Array(Variant, { minItems: ROUTING_LIMITS.minVariants, maxItems: ROUTING_LIMITS.maxVariants }), t.Null()], {
      description: VARIANTS_DOC,
    }),
    totalClicks: readOnlyFields.totalClicks,
    uniqueClicks: readOnlyFields.uniqueClicks,
    isActive: t.Boolean(),
    isArchived: t.Boolean(),
    isTest: readOnlyFields.isTest,
    createdAt: readOnlyFields.createdAt,
    updatedAt: readOnlyFields.updatedAt,
    lastClickedAt: readOnlyFields.lastClickedAt,
    externalId: t.Union([t.String(), t.Null()], { description: 'Your own id for the link, unique within the workspace; null when none' }),
    qr: t.Optional(Qr),
  },
  { title: 'Link' },
)

// --- Events (contract section 5) --------------------------------------------------------------------------
// The link.* events. link.clicked is written by the clicks module's flush; it is a link's event all the same,
// and carries the link the way the others name one.

const LinkData = t.Omit(Link, ['qr'])
/** A link as the events that do not carry it whole name it. */
export const LinkRef = t.Object({ id: t.String(), slug: t.String(), domain: t.String(), shortUrl: t.String(), destinationUrl: t.String() })

export const LINK_EVENTS: EventDefinition[] = [
  { type: 'link.created', description: 'A link was created (also in bulk).', data: LinkData },
  {
    type: 'link.updated',
    description: 'A link was changed; `changes` names the fields that were sent.',
    data: t.Composite([LinkData, t.Object({ changes: t.Array(t.String()) })]),
  },
  { type: 'link.deleted', description: 'A link and its redirect were removed.', data: LinkRef },
  {
    type: 'link.clicked',
    description: 'A redirect was counted (bots, HEAD requests and test links are never counted).',
    data: t.Object({
      click: t.Object({
        id: t.String({ description: 'clk_…; also handed to the destination as lnk_cid when conversionTracking is on' }),
        timestamp: t.String({ format: 'date-time' }),
        unique: t.Boolean({ description: 'First click of this visitor on this link' }),
        referrer: t.Union([t.String(), t.Null()]),
        userAgent: t.Union([t.String(), t.Null()]),
        ruleId: t.Union([t.String(), t.Null()], { description: 'rr_…: the routing rule that chose the destination; null when none matched' }),
        variantId: t.Union([t.String(), t.Null()], { description: 'var_…: the A/B variant the visitor was given; null when none' }),
        destinationUrl: t.String({
          description: 'Where this visit was sent, as stored (the rule’s, the variant’s or the link’s own), before UTM fields and the visitor’s query',
        }),
      }),
      link: LinkRef,
    }),
  },
]
