// TypeBox shapes of links: the create body of spec 2.3 (plus conversionTracking), the PATCH body, and the
// Link of spec 2.2 with every stored field.
import { t, type Static } from 'elysia'

const nullableString = (max: number, description?: string) => t.Optional(t.Union([t.String({ maxLength: max }), t.Null()], description ? { description } : {}))
const Url = t.String({ minLength: 1, maxLength: 2048, description: 'Absolute http(s) URL, at most 2048 characters' })
const Timestamp = t.String({ format: 'date-time' })

export const SLUG_PATTERN = '^[A-Za-z0-9_-]{1,64}$'

export const TwitterCard = t.Union([t.Literal('summary'), t.Literal('summary_large_image'), t.Literal('player')])
export const RedirectStatus = t.Union([t.Literal(301), t.Literal(302), t.Literal(307), t.Literal(308)])

/** Fields a link can be created or updated with. */
const linkFields = {
  destinationUrl: Url,
  slug: t.Optional(t.String({ pattern: SLUG_PATTERN, description: '1-64 of A-Z a-z 0-9 _ -, case-sensitive; generated (7 characters) when omitted' })),
  domain: t.Optional(t.String({ minLength: 1, maxLength: 253, description: 'A shared short domain or one of the workspace\'s verified domains; the first shared domain when omitted' })),
  title: nullableString(500),
  description: nullableString(2000),
  tags: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
  folderId: nullableString(128),
  campaignId: nullableString(128),
  redirectStatus: t.Optional(RedirectStatus),
  fallbackUrl: t.Optional(t.Union([Url, t.Null()], { description: 'Where visitors go once the link expired or reached a limit; a 410 page when null' })),
  password: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 128 }), t.Null()], { description: 'Visitors must enter it; stored as an argon2id hash and never returned' })),
  expiresAt: t.Optional(t.Union([Timestamp, t.Null()])),
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
  ogImageUrl: t.Optional(t.Union([Url, t.Null()])),
  twitterCard: t.Optional(t.Union([TwitterCard, t.Null()])),
  deepLinkEnabled: t.Optional(t.Boolean()),
  captchaEnabled: t.Optional(t.Boolean()),
  consentRequired: t.Optional(t.Boolean()),
  conversionTracking: t.Optional(t.Boolean({ description: 'Append lnk_cid=<click id> to the destination, for POST /conversions' })),
}

export const Include = t.Array(t.Literal('qr'), { maxItems: 1, description: 'Only "qr" is allowed: returns the link with its qr object' })

export const CreateLinkBody = t.Object({ include: t.Optional(Include), ...linkFields }, { additionalProperties: false, title: 'LinkCreate' })
export type CreateLinkInput = Static<typeof CreateLinkBody>

/** PATCH: any subset of the create fields, plus the link flags; null clears a nullable field. */
export const UpdateLinkBody = t.Object(
  { ...linkFields, destinationUrl: t.Optional(Url), isActive: t.Optional(t.Boolean()), isArchived: t.Optional(t.Boolean()) },
  { additionalProperties: false, title: 'LinkUpdate' },
)
export type UpdateLinkInput = Static<typeof UpdateLinkBody>

export const Qr = t.Object({ svg: t.String({ description: 'Inline SVG' }), png: t.String({ description: '{base_url}/qr/render?data=<short URL>&size=<px>' }) }, { title: 'Qr' })

const NullableString = t.Union([t.String(), t.Null()])

export const Link = t.Object(
  {
    id: t.String({ format: 'uuid' }),
    slug: t.String(),
    domain: t.String(),
    destinationUrl: t.String(),
    shortUrl: t.String(),
    title: NullableString,
    description: NullableString,
    tags: t.Array(t.String()),
    folderId: NullableString,
    campaignId: NullableString,
    redirectStatus: RedirectStatus,
    fallbackUrl: NullableString,
    hasPassword: t.Boolean({ description: 'Whether a password protects the link; the password itself is never returned' }),
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
    totalClicks: t.Integer({ minimum: 0 }),
    uniqueClicks: t.Integer({ minimum: 0 }),
    isActive: t.Boolean(),
    isArchived: t.Boolean(),
    isTest: t.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    qr: t.Optional(Qr),
  },
  { title: 'Link' },
)
