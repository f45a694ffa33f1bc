// TypeBox shapes of links: the create body of spec 2.3 (plus conversionTracking), the PATCH body, and the
// Link of spec 2.2 with every stored field.
import type { TSchema } from '@sinclair/typebox'
import { t, type Static } from 'elysia'
import type { RoutingCondition as StoredCondition } from '../../db/schema'
import type { EventDefinition } from '../../events/catalogue'
import type { Config } from '../../platform/config'
import { checkedByService, publishedString } from '../../http/published-schema'

// The slug rules and short-URL building are pure and used beside the redirect path, by areas the links module
// itself depends on (pages): they are reached here, not through index.ts, so no import cycle forms.
export { isReservedSlug, RESERVED_SLUGS, shortUrl } from './slug'

const nullableString = (max: number, description?: string) => t.Optional(t.Union([t.String({ maxLength: max }), t.Null()], description ? { description } : {}))
// The format is published, not enforced here: the service's checkUrl decides (see http/published-schema.ts), so
// URLs it accepts that RFC 3986 would not (an IDN host, an unescaped space) keep working, with its messages.
// Each field gets its own copy with its description: the generator keeps the string's description, not the
// null union's, for a nullable field.
const url = (what?: string) =>
  publishedString('HttpUrl', {
    format: 'uri',
    minLength: 1,
    maxLength: 2048,
    description: `${what ? `${what}. ` : ''}Absolute http(s) URL, at most 2048 characters; read as browsers read URLs (WHATWG), so an IDN host or an unescaped space is accepted too`,
  })
const Url = url('Where the link sends visitors; not a short link of this service (it would loop)')
const Timestamp = t.String({ format: 'date-time' })

export const SLUG_PATTERN = '^[A-Za-z0-9_-]{1,64}$'

export const TwitterCard = t.Union([t.Literal('summary'), t.Literal('summary_large_image'), t.Literal('player')])
export const RedirectStatus = t.Union([t.Literal(301), t.Literal(302), t.Literal(307), t.Literal(308)])

// --- Routing rules and A/B variants (contract 7.1) ------------------------------------------------------------
// The value sets and limits the service checks (routing-fields.ts) and the document publishes, written once here.

export const ROUTING_LIMITS = {
  rules: 50,
  conditions: 20,
  minVariants: 2,
  maxVariants: 10,
  minWeight: 1,
  maxWeight: 100,
  listValues: 100,
  text: 1024,
  name: 200,
}
export const CONTINENTS = ['AF', 'AN', 'AS', 'EU', 'NA', 'OC', 'SA'] as const
export const DEVICES = ['desktop', 'mobile', 'tablet'] as const
export const OSES = ['ios', 'android', 'windows', 'macos', 'linux', 'chromeos', 'other'] as const
export const BROWSERS = ['chrome', 'safari', 'firefox', 'edge', 'opera', 'samsung', 'other'] as const
export const TRIGGERS = ['link', 'qr'] as const
export const QUERY_FIELD_PATTERN = '^query\\.[^\\s]{1,100}$'

const literals = <T extends string>(values: readonly T[], options: Record<string, unknown> = {}) =>
  t.Union(
    values.map((v) => t.Literal(v)),
    options,
  )
const list = (item: TSchema) => t.Array(item, { minItems: 1, maxItems: ROUTING_LIMITS.listValues })
const Text = t.String({ minLength: 1, maxLength: ROUTING_LIMITS.text })

/**
 * What each field takes: op groups with the value each group needs (none for exists / not_exists). One object
 * per field and op group in the document, so a generated client knows a country's `in` takes codes.
 */
const EQ = ['eq', 'neq'] as const
const IN = ['in', 'nin'] as const
const EXISTS = ['exists', 'not_exists'] as const
const TEXT_OPS = ['eq', 'neq', 'contains', 'not_contains', 'starts_with'] as const
const ORDER = ['gt', 'gte', 'lt', 'lte'] as const
type OpGroup = { ops: readonly string[]; value: TSchema | null }
const codeGroups = (value: TSchema): OpGroup[] => [
  { ops: EQ, value },
  { ops: IN, value: list(value) },
  { ops: EXISTS, value: null },
]
const textGroups = (value: TSchema): OpGroup[] => [
  { ops: TEXT_OPS, value },
  { ops: IN, value: list(value) },
  { ops: EXISTS, value: null },
]
const CountryCode = t.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, upper case (US, GB, BR)' })
const Language = t.String({ pattern: '^[a-z]{2,8}$', description: 'A primary language subtag, lower case (pt)' })
const Locale = t.String({ pattern: '^[a-z]{2,8}(-[a-z0-9]{1,8})*$', maxLength: 100, description: 'A whole language tag, lower case (pt-br)' })
const Host = t.String({ minLength: 1, maxLength: 253, description: 'A host name as the Referer names it, lower case, no port (news.example.com)' })
const IpRange = t.String({ minLength: 1, maxLength: 100, description: 'An IPv4 or IPv6 address, or a CIDR range (10.0.0.0/8, 2001:db8::/32)' })
const Instant = t.String({ format: 'date-time', description: 'ISO 8601 with seconds and a zone (2026-05-01T09:00:00Z)' })

/** Per field: the op groups it takes, and what it is. */
export const ROUTING_FIELDS = {
  country: { groups: codeGroups(CountryCode), description: "The visitor's country by address (needs the IP database)" },
  continent: { groups: codeGroups(literals(CONTINENTS)), description: "The visitor's continent by address" },
  city: { groups: textGroups(Text), description: "The visitor's city by address: present only with a city-level IP database" },
  device: { groups: codeGroups(literals(DEVICES)), description: 'From the User-Agent' },
  os: { groups: codeGroups(literals(OSES)), description: 'From the User-Agent' },
  browser: { groups: codeGroups(literals(BROWSERS)), description: 'From the User-Agent' },
  language: { groups: codeGroups(Language), description: 'The primary subtag of the first Accept-Language tag, lower case (pt)' },
  locale: {
    groups: [...codeGroups(Locale), { ops: ['starts_with'], value: t.String({ pattern: '^[a-z0-9-]{1,100}$' }) }],
    description: 'The first Accept-Language tag whole, lower case (pt-br)',
  },
  referrer: { groups: textGroups(Host), description: 'The host name of the Referer header, lower case, without a port; IDN hosts in punycode (xn--…)' },
  ip: {
    groups: [
      { ops: IN, value: list(IpRange) },
      { ops: EQ, value: IpRange },
    ],
    description: "The visitor's address (as LNK_TRUST_PROXY decides), in (eq: within) or not in addresses or CIDR ranges",
  },
  time: { groups: [{ ops: ORDER, value: Instant }], description: 'When the visit happens' },
  trigger: { groups: codeGroups(literals(TRIGGERS)), description: 'qr for a visit from the QR code of a link with qrAttribution, else link' },
} satisfies Record<string, { groups: OpGroup[]; description: string }>
export type RoutingField = keyof typeof ROUTING_FIELDS
/** query.<name>: a query parameter of the visit, compared as text. */
export const QUERY_GROUPS = textGroups(Text)

function conditionShapes(): TSchema[] {
  const shape = (field: TSchema, group: OpGroup, description: string) =>
    t.Object(
      { field, op: literals(group.ops), ...(group.value ? { value: group.value } : {}) },
      { additionalProperties: false, description: `${description}; ${group.ops.join(' / ')}${group.value ? '' : ' (no value)'}` },
    )
  // device leads: a union's first member is what example generators (the synthetic event samples among them)
  // show, and `device eq desktop` reads as a rule where a made-up string could not pass a country's pattern.
  const fields = Object.entries(ROUTING_FIELDS).sort(([a], [b]) => Number(b === 'device') - Number(a === 'device'))
  const known = fields.flatMap(([name, f]) => f.groups.map((g) => shape(t.Literal(name), g, `${name}: ${f.description}`)))
  const query = QUERY_GROUPS.map((g) =>
    shape(t.String({ pattern: QUERY_FIELD_PATTERN }), g, 'query.<name>: a query parameter of the visit (compared as text; missing when the visit has none)'),
  )
  return [...known, ...query]
}

/** Typed as stored (a union built in a loop has no useful static type); validated as the union it is. */
export const RoutingCondition = t.Unsafe<StoredCondition>(
  t.Union(conditionShapes(), {
    title: 'RoutingCondition',
    description: 'One test of a visit: field, op (the webhook filter ops a field allows) and value',
  }),
)

const Match = t.Union([t.Literal('all'), t.Literal('any')], { description: 'all (default): every condition must hold; any: one is enough' })
const Conditions = t.Array(RoutingCondition, { minItems: 1, maxItems: ROUTING_LIMITS.conditions })
const Weight = t.Integer({
  minimum: ROUTING_LIMITS.minWeight,
  maximum: ROUTING_LIMITS.maxWeight,
  description: 'Its share of visitors is weight / sum of weights',
})

export const RoutingRule = t.Object(
  {
    id: t.String({ description: 'rr_…: given by the service, kept across PATCHes that send it back' }),
    name: t.Union([t.String(), t.Null()]),
    match: Match,
    conditions: Conditions,
    destinationUrl: t.String(),
  },
  { additionalProperties: false, title: 'RoutingRule' },
)
export const Variant = t.Object(
  { id: t.String({ description: 'var_…: given by the service, kept across PATCHes that send it back' }), destinationUrl: t.String(), weight: Weight },
  { additionalProperties: false, title: 'Variant' },
)
/** What a request may send: ids and defaults may be left out. */
const RoutingRuleInput = t.Object(
  {
    id: t.Optional(
      t.String({ description: "rr_…: send back a rule's own id to keep it; left out, or not one of the link's rule ids, the rule gets a new one" }),
    ),
    name: t.Optional(t.Union([t.String({ maxLength: ROUTING_LIMITS.name }), t.Null()])),
    match: t.Optional(Match),
    conditions: Conditions,
    destinationUrl: url("Where a visit this rule matches goes; checked as the link's destinationUrl is"),
  },
  { additionalProperties: false, title: 'RoutingRuleInput' },
)
const VariantInput = t.Object(
  {
    id: t.Optional(
      t.String({ description: "var_…: send back a variant's own id to keep it; left out, or not one of the link's variant ids, it gets a new one" }),
    ),
    destinationUrl: url("A variant's destination; checked as the link's destinationUrl is"),
    weight: Weight,
  },
  { additionalProperties: false, title: 'VariantInput' },
)

const RULES_DOC =
  'Evaluated in order on each visit (after the gates; never for link-preview crawlers): the first rule that matches picks the destination. ' +
  'null (or []) for none. See docs/routing.md'
const VARIANTS_DOC =
  'A/B split when no rule matched: each visitor (address + user agent) always gets the same variant while the list is unchanged. ' +
  'null (or []) for none. See docs/routing.md'

/** The request side: published exactly, checked by the service (routing-fields.ts) so each problem is named by its path. */
const routingInput = {
  routingRules: t.Optional(
    checkedByService(
      t.Union([t.Array(RoutingRuleInput, { maxItems: ROUTING_LIMITS.rules }), t.Null()], {
        description: `At most ${ROUTING_LIMITS.rules} rules. ${RULES_DOC}`,
      }),
    ),
  ),
  variants: t.Optional(
    checkedByService(
      t.Union([t.Array(VariantInput, { minItems: ROUTING_LIMITS.minVariants, maxItems: ROUTING_LIMITS.maxVariants }), t.Null()], {
        description: `${ROUTING_LIMITS.minVariants} to ${ROUTING_LIMITS.maxVariants} variants. ${VARIANTS_DOC}`,
      }),
    ),
  ),
}

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
