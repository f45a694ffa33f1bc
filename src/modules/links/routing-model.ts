// TypeBox shapes of a link's routingRules and variants (contract 7.1), and the value sets and limits that the
// service's checks (routing-fields.ts) and the OpenAPI document share, written once here.
import type { TSchema } from '@sinclair/typebox'
import { t } from 'elysia'
import type { RoutingCondition as StoredCondition } from '../../db/schema'
import { checkedByService } from '../../http/published-schema'
import { url } from './url-schema'

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

export const RULES_DOC =
  'Evaluated in order on each visit (after the gates; never for link-preview crawlers): the first rule that matches picks the destination. ' +
  'null (or []) for none. See docs/routing.md'
export const VARIANTS_DOC =
  'A/B split when no rule matched: each visitor (address + user agent) always gets the same variant while the list is unchanged. ' +
  'null (or []) for none. See docs/routing.md'

/** The request side: published exactly, checked by the service (routing-fields.ts) so each problem is named by its path. */
export const routingInput = {
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
