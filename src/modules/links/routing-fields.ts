// The checks of a link's routingRules and variants (contract 7.1), and their normalising into what is stored.
// The route's validator lets both through as they are (a TypeBox union would report a nested problem as one
// "Expected union value" on the whole field); here every problem is named by its exact path, e.g.
// `routingRules.0.conditions.1.op` or `variants.2.weight`, all at once.
//
// Ids: the service names every rule `rr_…` and every variant `var_…`. An id sent back that is one of the
// link's own (rules for rules, variants for variants) is kept, wherever the item moved in the list; any other
// id (left out, null, made up, copied from another link, or a repeat within the list) is replaced by a new one.
// Clicks and analytics are keyed by these ids, so an id never moves to another link and never names two items.
import { CONDITION_OPS, type ConditionOp, isoInstant, valueIssue } from '../../platform/conditions'
import type { Issues } from '../../platform/errors'
import { parseRange } from '../../platform/ip'
import { newId } from '../../platform/random'
import type { RoutingCondition, RoutingRule, Variant } from '../../db/schema'
import type { LinksCtx } from './context'
import { checkUrl } from './fields'
import { BROWSERS, CONTINENTS, DEVICES, OSES, QUERY_FIELD_PATTERN, QUERY_GROUPS, ROUTING_FIELDS, ROUTING_LIMITS, TRIGGERS } from './routing-model'

/** The stored values a write starts from: nothing on create, the link's own on PATCH. */
export interface StoredRouting {
  routingRules: RoutingRule[] | null
  variants: Variant[] | null
  bridgePageId: string | null
}

/** What a write sent, as the route's validator let it through. */
export interface RoutingInput {
  routingRules?: unknown
  variants?: unknown
  bridgePageId?: string | null
}

/** The values to store; a field left undefined was not sent and stays as it is. */
export interface RoutingColumns {
  routingRules?: RoutingRule[] | null
  variants?: Variant[] | null
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const QUERY_FIELD = new RegExp(QUERY_FIELD_PATTERN)
const FIELD_NAMES = [...Object.keys(ROUTING_FIELDS), 'query.<name>'].join(', ')
// RFC 3339 as the document's `date-time` is: seconds present, a zone (Z or an offset), a day the month has
// (Date.parse would roll 2026-02-30 over into March, and take 24:00).
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/
function instant(v: unknown): boolean {
  const m = typeof v === 'string' ? INSTANT.exec(v) : null
  if (!m || isoInstant(v) === null) return false
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate()
  const offsetOk = m[8] === 'Z' || (Number(m[9]) <= 23 && Number(m[10]) <= 59)
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && offsetOk
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' })
// Region codes the locale data knows that name no country a click can carry: groupings, the unknown region,
// and UK, which ISO 3166-1 only reserves (the United Kingdom is GB).
const NOT_COUNTRIES = new Set(['EU', 'EZ', 'UN', 'QO', 'ZZ', 'UK'])

const oneOf = (values: readonly string[]) => (v: unknown) => (typeof v === 'string' && values.includes(v) ? null : `must be one of ${values.join(', ')}`)
const text = (v: unknown) =>
  typeof v === 'string' && v.length >= 1 && v.length <= ROUTING_LIMITS.text ? null : `must be a string of 1-${ROUTING_LIMITS.text} characters`

function country(v: unknown): string | null {
  if (v === 'UK') return 'must be an ISO 3166-1 alpha-2 code: the United Kingdom is GB'
  const known = typeof v === 'string' && /^[A-Z]{2}$/.test(v) && !NOT_COUNTRIES.has(v) && regionNames.of(v) !== undefined
  return known ? null : 'must be an ISO 3166-1 alpha-2 country code in upper case, e.g. US'
}

/** A host name as a visit's referrer is read (the Referer URL's hostname): lower case, IDN in punycode, no port. */
function host(v: unknown): string | null {
  const message = 'must be a host name as the Referer names it, lower case and without a port, e.g. news.example.com (an IDN host in punycode: xn--…)'
  if (typeof v !== 'string' || !v || v.length > 253 || /[/?#@\s]/.test(v)) return message
  try {
    return new URL(`http://${v}`).hostname === v ? null : message
  } catch {
    return message
  }
}

/** A piece of a host for contains / starts_with: what a lower-cased host can hold. */
const hostPart = (v: unknown) =>
  typeof v === 'string' && v.length >= 1 && v.length <= 253 && v === v.toLowerCase() && !/[/?#@\s]/.test(v)
    ? null
    : 'must be part of a host, in lower case (example.com)'

type Check = (v: unknown) => string | null

/** How each field's scalar values are checked, by op; `list` ops check each element with the same function. */
const VALUE_CHECKS: Record<string, (op: ConditionOp) => Check> = {
  country: () => country,
  continent: () => oneOf(CONTINENTS),
  city: () => text,
  device: () => oneOf(DEVICES),
  os: () => oneOf(OSES),
  browser: () => oneOf(BROWSERS),
  trigger: () => oneOf(TRIGGERS),
  language: () => (v) => (typeof v === 'string' && /^[a-z]{2,8}$/.test(v) ? null : 'must be a primary language subtag in lower case, e.g. pt'),
  locale: (op) =>
    op === 'starts_with'
      ? (v) => (typeof v === 'string' && /^[a-z0-9-]{1,100}$/.test(v) ? null : 'must be the start of a language tag in lower case, e.g. pt- or en')
      : (v) =>
          typeof v === 'string' && v.length <= 100 && /^[a-z]{2,8}(-[a-z0-9]{1,8})*$/.test(v) ? null : 'must be a language tag in lower case, e.g. pt-br',
  referrer: (op) => (op === 'contains' || op === 'not_contains' || op === 'starts_with' ? hostPart : host),
  ip: () => (v) =>
    typeof v === 'string' && v.length <= 100 && parseRange(v) !== null ? null : 'must be an IPv4 or IPv6 address or CIDR range, e.g. 10.0.0.0/8',
  time: () => (v) => (instant(v) ? null : 'must be an ISO 8601 date-time with seconds and a zone, e.g. 2026-05-01T09:00:00Z'),
  query: () => text,
}

/** Own keys only: `constructor` or `__proto__` name no field. */
const isNamedField = (field: string): field is keyof typeof ROUTING_FIELDS => Object.hasOwn(ROUTING_FIELDS, field)

function opsOf(field: string): readonly string[] {
  const groups = isNamedField(field) ? ROUTING_FIELDS[field].groups : QUERY_GROUPS
  return groups.flatMap((g) => g.ops)
}

function unknownKeys(issues: Issues, path: string, value: Record<string, unknown>, allowed: readonly string[]) {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) issues.add(`${path}.${key}`, `unknown property "${key}" (allowed: ${allowed.join(', ')})`)
}

/** The condition as stored, or null when it added an issue. */
function checkCondition(issues: Issues, path: string, c: unknown): RoutingCondition | null {
  if (!isRecord(c)) return (issues.add(path, 'must be an object with field, op and value'), null)
  const before = issues.list.length
  unknownKeys(issues, path, c, ['field', 'op', 'value'])
  const field = c.field
  const known = typeof field === 'string' && (isNamedField(field) || QUERY_FIELD.test(field))
  if (!known) issues.add(`${path}.field`, `must be one of ${FIELD_NAMES}`)
  if (typeof c.op !== 'string' || !(CONDITION_OPS as readonly string[]).includes(c.op)) {
    issues.add(`${path}.op`, `must be one of ${CONDITION_OPS.join(', ')}`)
    return null
  }
  const op = c.op as ConditionOp
  if (!known) return null
  const allowed = opsOf(field)
  if (!allowed.includes(op)) return (issues.add(`${path}.op`, `${field} takes ${allowed.join(', ')}`), null)
  const hasValue = Object.hasOwn(c, 'value') && c.value !== undefined
  const generic = valueIssue(op, c.value, hasValue)
  if (generic) return (issues.add(`${path}.value`, generic), null)
  if (op === 'exists' || op === 'not_exists') return issues.list.length === before ? { field, op } : null
  const check = VALUE_CHECKS[field.startsWith('query.') ? 'query' : field]!(op)
  if (op === 'in' || op === 'nin') {
    ;(c.value as unknown[]).forEach((item, k) => {
      const problem = check(item)
      if (problem) issues.add(`${path}.value.${k}`, problem)
    })
  } else {
    const problem = check(c.value)
    if (problem) issues.add(`${path}.value`, problem)
  }
  return issues.list.length === before ? { field, op, value: c.value } : null
}

/** Keeps an id sent back when it is one of the link's own and not taken yet in this list; else a new one. */
function idKeeper(prefix: 'rr' | 'var', own: readonly { id: string }[] | null) {
  const owned = new Set((own ?? []).map((x) => x.id))
  const taken = new Set<string>()
  return (issues: Issues, path: string, sent: unknown): string => {
    if (sent !== undefined && sent !== null && typeof sent !== 'string') issues.add(path, `must be a string (${prefix}_…), or left out for a new item`)
    const id = typeof sent === 'string' && owned.has(sent) && !taken.has(sent) ? sent : newId(prefix)
    taken.add(id)
    return id
  }
}

/** A URL is checked as the link's destinationUrl is, unless it is the one the same item already has. */
function checkItemUrl(ctx: LinksCtx, issues: Issues, path: string, value: unknown, stored: string | undefined) {
  if (typeof value !== 'string') return issues.add(path, 'must be an absolute http(s) URL')
  if (value !== stored) checkUrl(ctx, issues, path, value, true)
}

// The lists below hold only the items that passed; whatever they answer is stored only when no issue was added.

function checkRules(ctx: LinksCtx, issues: Issues, value: unknown, stored: RoutingRule[] | null): RoutingRule[] | null {
  if (value === null) return null
  if (!Array.isArray(value)) return (issues.add('routingRules', 'must be an array of rules, or null'), null)
  if (value.length > ROUTING_LIMITS.rules) return (issues.add('routingRules', `at most ${ROUTING_LIMITS.rules} rules`), null)
  if (value.length === 0) return null
  const keepId = idKeeper('rr', stored)
  const byId = new Map((stored ?? []).map((r) => [r.id, r]))
  return value.flatMap((r, i): RoutingRule[] => {
    const path = `routingRules.${i}`
    if (!isRecord(r)) return (issues.add(path, 'must be an object with conditions and destinationUrl'), [])
    unknownKeys(issues, path, r, ['id', 'name', 'match', 'conditions', 'destinationUrl'])
    const id = keepId(issues, `${path}.id`, r.id)
    const name = r.name ?? null
    if (name !== null && (typeof name !== 'string' || name.length > ROUTING_LIMITS.name))
      issues.add(`${path}.name`, `must be a string of at most ${ROUTING_LIMITS.name} characters, or null`)
    const match = r.match ?? 'all'
    if (match !== 'all' && match !== 'any') issues.add(`${path}.match`, 'must be "all" or "any"')
    let conditions: RoutingCondition[] = []
    if (!Array.isArray(r.conditions) || r.conditions.length < 1 || r.conditions.length > ROUTING_LIMITS.conditions)
      issues.add(`${path}.conditions`, `must be an array of 1-${ROUTING_LIMITS.conditions} conditions`)
    else conditions = r.conditions.flatMap((c, j) => checkCondition(issues, `${path}.conditions.${j}`, c) ?? [])
    checkItemUrl(ctx, issues, `${path}.destinationUrl`, r.destinationUrl, byId.get(id)?.destinationUrl)
    return [{ id, name: name as string | null, match: match as 'all' | 'any', conditions, destinationUrl: r.destinationUrl as string }]
  })
}

function checkVariants(ctx: LinksCtx, issues: Issues, value: unknown, stored: Variant[] | null): Variant[] | null {
  if (value === null) return null
  const { minVariants, maxVariants, minWeight, maxWeight } = ROUTING_LIMITS
  if (!Array.isArray(value)) return (issues.add('variants', 'must be an array of variants, or null'), null)
  if (value.length === 0) return null
  if (value.length < minVariants || value.length > maxVariants)
    return (issues.add('variants', `must hold ${minVariants}-${maxVariants} variants (or be null for none)`), null)
  const keepId = idKeeper('var', stored)
  const byId = new Map((stored ?? []).map((v) => [v.id, v]))
  return value.flatMap((v, i): Variant[] => {
    const path = `variants.${i}`
    if (!isRecord(v)) return (issues.add(path, 'must be an object with destinationUrl and weight'), [])
    unknownKeys(issues, path, v, ['id', 'destinationUrl', 'weight'])
    const id = keepId(issues, `${path}.id`, v.id)
    if (typeof v.weight !== 'number' || !Number.isInteger(v.weight) || v.weight < minWeight || v.weight > maxWeight)
      issues.add(`${path}.weight`, `must be an integer from ${minWeight} to ${maxWeight}`)
    checkItemUrl(ctx, issues, `${path}.destinationUrl`, v.destinationUrl, byId.get(id)?.destinationUrl)
    return [{ id, destinationUrl: v.destinationUrl as string, weight: v.weight as number }]
  })
}

/**
 * Checks the routing fields a create or PATCH sent, against what the link stores (`stored`: null on create),
 * adding each problem to `issues`. An empty list is stored as null: no rules, no variants, nothing to pay on
 * a visit. A bridge page shows instead of any redirect, so a link has one or the other, never both.
 */
export function checkRouting(ctx: LinksCtx, issues: Issues, input: RoutingInput, stored: StoredRouting | null): RoutingColumns {
  const out: RoutingColumns = {}
  if (input.routingRules !== undefined) out.routingRules = checkRules(ctx, issues, input.routingRules, stored?.routingRules ?? null)
  if (input.variants !== undefined) out.variants = checkVariants(ctx, issues, input.variants, stored?.variants ?? null)
  const rules = out.routingRules !== undefined ? out.routingRules : (stored?.routingRules ?? null)
  const variants = out.variants !== undefined ? out.variants : (stored?.variants ?? null)
  const bridgePageId = input.bridgePageId !== undefined ? input.bridgePageId : (stored?.bridgePageId ?? null)
  if (bridgePageId !== null && (rules !== null || variants !== null)) {
    const message = 'a link shows its bridge page or routes its visitors, not both: set bridgePageId to null, or routingRules and variants to null'
    // The fields this request set are the ones named: the stored one is what it collides with.
    const sent = [
      ...(input.bridgePageId != null ? ['bridgePageId'] : []),
      ...(out.routingRules != null ? ['routingRules'] : []),
      ...(out.variants != null ? ['variants'] : []),
    ]
    for (const field of sent.length ? sent : ['bridgePageId']) issues.add(field, message)
  }
  return out
}
