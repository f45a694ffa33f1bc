// The routing editors' state (contract 7.1): rules with conditions, and weighted variants, kept as the text
// and choices a person edits, and how they become the link's `routingRules` and `variants`. Each draft has a
// `key` of its own so a list keeps each row's inputs (and focus) when rows move.
import { countryChoices } from './countries'
import type { Link } from './model'
import { fromZonedInput, toZonedInput, VIEWER_ZONE } from './zones'

/** The API's shapes, from the generated schema. */
export type ApiRule = NonNullable<Link['routingRules']>[number]
export type ApiCondition = ApiRule['conditions'][number]
export type ApiVariant = NonNullable<Link['variants']>[number]

/** How a field's value is picked: one of a fixed set, free text, addresses, or an instant. */
export type ValueKind = 'choice' | 'text' | 'ip' | 'time'

export interface FieldSpec {
  field: string
  label: string
  kind: ValueKind
  ops: readonly string[]
  /** The allowed values of a choice field, each with the name a person reads. */
  choices?: () => readonly { value: string; label: string }[]
  hint?: string
}

const CHOICE_OPS = ['eq', 'neq', 'in', 'nin', 'exists', 'not_exists'] as const
/** A locale can also be matched by its start (pt- for every Portuguese). */
const LOCALE_OPS = ['eq', 'neq', 'starts_with', 'in', 'nin', 'exists', 'not_exists'] as const
const TEXT_OPS = ['eq', 'neq', 'in', 'nin', 'contains', 'not_contains', 'starts_with', 'exists', 'not_exists'] as const

export const OP_LABELS: Record<string, string> = {
  eq: 'is',
  neq: 'is not',
  in: 'is one of',
  nin: 'is none of',
  contains: 'contains',
  not_contains: 'does not contain',
  starts_with: 'starts with',
  gt: 'is after',
  gte: 'is at or after',
  lt: 'is before',
  lte: 'is at or before',
  exists: 'is known',
  not_exists: 'is unknown',
}

const named = (pairs: readonly (readonly [string, string])[]) => () => pairs.map(([value, label]) => ({ value, label }))

export const FIELDS: readonly FieldSpec[] = [
  { field: 'country', label: 'Country', kind: 'choice', ops: CHOICE_OPS, choices: countryChoices },
  {
    field: 'continent',
    label: 'Continent',
    kind: 'choice',
    ops: CHOICE_OPS,
    choices: named([
      ['AF', 'Africa'],
      ['AN', 'Antarctica'],
      ['AS', 'Asia'],
      ['EU', 'Europe'],
      ['NA', 'North America'],
      ['OC', 'Oceania'],
      ['SA', 'South America'],
    ]),
  },
  { field: 'city', label: 'City', kind: 'text', ops: TEXT_OPS, hint: 'Known only when the server has a city database' },
  {
    field: 'device',
    label: 'Device',
    kind: 'choice',
    ops: CHOICE_OPS,
    choices: named([
      ['desktop', 'Desktop'],
      ['mobile', 'Mobile'],
      ['tablet', 'Tablet'],
    ]),
  },
  {
    field: 'os',
    label: 'Operating system',
    kind: 'choice',
    ops: CHOICE_OPS,
    choices: named([
      ['ios', 'iOS'],
      ['android', 'Android'],
      ['windows', 'Windows'],
      ['macos', 'macOS'],
      ['linux', 'Linux'],
      ['chromeos', 'ChromeOS'],
      ['other', 'Other'],
    ]),
  },
  {
    field: 'browser',
    label: 'Browser',
    kind: 'choice',
    ops: CHOICE_OPS,
    choices: named([
      ['chrome', 'Chrome'],
      ['safari', 'Safari'],
      ['firefox', 'Firefox'],
      ['edge', 'Edge'],
      ['opera', 'Opera'],
      ['samsung', 'Samsung Internet'],
      ['other', 'Other'],
    ]),
  },
  { field: 'language', label: 'Language', kind: 'text', ops: CHOICE_OPS, hint: 'First language the browser asks for, lower case: pt' },
  { field: 'locale', label: 'Locale', kind: 'text', ops: LOCALE_OPS, hint: 'That whole tag, lower case: pt-br' },
  { field: 'referrer', label: 'Referrer', kind: 'text', ops: TEXT_OPS, hint: 'Host of the page the visitor came from: news.example' },
  { field: 'ip', label: 'IP address', kind: 'ip', ops: ['in', 'nin', 'eq', 'neq'], hint: 'Addresses or CIDR ranges, IPv4 or IPv6' },
  { field: 'time', label: 'Time of the visit', kind: 'time', ops: ['gt', 'gte', 'lt', 'lte'] },
  { field: 'query', label: 'Query parameter', kind: 'text', ops: TEXT_OPS },
  {
    field: 'trigger',
    label: 'Opened by',
    kind: 'choice',
    ops: CHOICE_OPS,
    choices: named([
      ['link', 'The link'],
      ['qr', 'A QR code'],
    ]),
  },
]

/** The spec of a draft's field; a field this console does not know is edited as text. */
export const specOf = (field: string): FieldSpec => FIELDS.find((f) => f.field === field) ?? { field, label: field, kind: 'text', ops: TEXT_OPS }

export const takesNoValue = (op: string) => op === 'exists' || op === 'not_exists'
export const takesList = (op: string) => op === 'in' || op === 'nin'

export interface ConditionDraft {
  key: number
  /** A field of FIELDS; `query` stands for `query.<queryName>`. */
  field: string
  queryName: string
  op: string
  /** The one value (text, a choice, or a datetime-local for time). */
  value: string
  /** The chosen values of a choice field with in/nin. */
  values: string[]
  /** Text or addresses with in/nin: one per line or separated by commas. */
  list: string
  /** The time zone `value` is read in, for time. */
  zone: string
}

export interface RuleDraft {
  key: number
  id?: string
  name: string
  match: 'all' | 'any'
  conditions: ConditionDraft[]
  destinationUrl: string
}

export interface VariantDraft {
  key: number
  id?: string
  destinationUrl: string
  weight: string
}

let nextKey = 1
const newKey = () => nextKey++

export function newCondition(field = 'country'): ConditionDraft {
  return { key: newKey(), field, queryName: '', op: specOf(field).ops[0] ?? 'eq', value: '', values: [], list: '', zone: VIEWER_ZONE }
}

export const newRule = (): RuleDraft => ({ key: newKey(), name: '', match: 'all', conditions: [newCondition()], destinationUrl: '' })
export const newVariant = (weight = '50'): VariantDraft => ({ key: newKey(), destinationUrl: '', weight })

/** A condition with another field: the operator stays when the new field allows it, values start over. */
export function withField(c: ConditionDraft, field: string): ConditionDraft {
  const ops = specOf(field).ops
  return { ...c, field, op: ops.includes(c.op) ? c.op : (ops[0] ?? 'eq'), value: '', values: [], list: '' }
}

/** A condition with another operator; a single value and a list carry over into each other. */
export function withOp(c: ConditionDraft, op: string): ConditionDraft {
  const next = { ...c, op }
  if (takesList(op) && !takesList(c.op) && c.value) {
    next.values = specOf(c.field).kind === 'choice' ? [c.value] : []
    next.list = specOf(c.field).kind === 'choice' ? '' : c.value
  }
  if (!takesList(op) && takesList(c.op)) next.value = c.values[0] ?? splitList(c.list)[0] ?? ''
  return next
}

export const splitList = (text: string) =>
  text
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter(Boolean)

function conditionDraft(c: ApiCondition): ConditionDraft {
  const raw = c as { field: string; op: string; value?: unknown }
  const query = raw.field.startsWith('query.')
  const draft = { ...newCondition(query ? 'query' : raw.field), op: raw.op, queryName: query ? raw.field.slice('query.'.length) : '' }
  const kind = specOf(draft.field).kind
  if (Array.isArray(raw.value)) {
    const items = raw.value.map(String)
    if (kind === 'choice') draft.values = items
    else draft.list = items.join(kind === 'ip' ? '\n' : ', ')
  } else if (raw.value != null) {
    draft.value = kind === 'time' ? toZonedInput(String(raw.value), draft.zone) : String(raw.value)
  }
  return draft
}

export const rulesOf = (rules: Link['routingRules']): RuleDraft[] =>
  (rules ?? []).map((r) => ({
    key: newKey(),
    id: r.id,
    name: r.name ?? '',
    match: r.match === 'any' ? 'any' : 'all',
    conditions: r.conditions.map(conditionDraft),
    destinationUrl: r.destinationUrl,
  }))

export const variantsOf = (variants: Link['variants']): VariantDraft[] =>
  (variants ?? []).map((v) => ({ key: newKey(), id: v.id, destinationUrl: v.destinationUrl, weight: String(v.weight) }))

const whole = (text: string): number | string => (/^\s*\d+\s*$/.test(text) ? Number(text) : text.trim())

function conditionBody(c: ConditionDraft): Record<string, unknown> {
  const field = c.field === 'query' ? `query.${c.queryName.trim()}` : c.field
  const body: Record<string, unknown> = { field, op: c.op }
  if (takesNoValue(c.op)) return body
  const kind = specOf(c.field).kind
  if (takesList(c.op)) body.value = kind === 'choice' ? c.values : splitList(c.list)
  else if (kind === 'time') body.value = c.value ? fromZonedInput(c.value, c.zone) : ''
  else body.value = kind === 'choice' ? c.value : c.value.trim()
  return body
}

/**
 * The `routingRules` the drafts stand for (null when there are none). Values go as typed where they do not
 * parse: the server checks them and names the exact input, so the body is the API's shape in name only.
 */
export function rulesBody(rules: readonly RuleDraft[]): ApiRule[] | null {
  if (!rules.length) return null
  return rules.map((r) => ({
    ...(r.id ? { id: r.id } : {}),
    name: r.name.trim() || null,
    match: r.match,
    conditions: r.conditions.map(conditionBody),
    destinationUrl: r.destinationUrl.trim(),
  })) as ApiRule[]
}

export function variantsBody(variants: readonly VariantDraft[]): ApiVariant[] | null {
  if (!variants.length) return null
  return variants.map((v) => ({ ...(v.id ? { id: v.id } : {}), destinationUrl: v.destinationUrl.trim(), weight: whole(v.weight) })) as ApiVariant[]
}

/** Each variant's share of visitors in percent (weight over the sum of the valid weights); null where the weight is not 1..100. */
export function shares(variants: readonly VariantDraft[]): (number | null)[] {
  const weights = variants.map((v) => (/^\s*\d+\s*$/.test(v.weight) && Number(v.weight) >= 1 && Number(v.weight) <= 100 ? Number(v.weight) : null))
  const sum = weights.reduce<number>((s, w) => s + (w ?? 0), 0)
  return weights.map((w) => (w === null || sum === 0 ? null : (w / sum) * 100))
}

export const formatShare = (share: number | null) => (share === null ? '–' : `${share.toFixed(share % 1 === 0 ? 0 : 1)}%`)

/** Moves the item at `from` by `by` places (−1 up, +1 down); the list as it was when that leaves it. */
export function moved<T>(list: readonly T[], from: number, by: -1 | 1): T[] {
  const to = from + by
  if (to < 0 || to >= list.length) return [...list]
  const next = [...list]
  const [item] = next.splice(from, 1)
  next.splice(to, 0, item as T)
  return next
}

const rowKeys = (rows: readonly (RuleDraft | VariantDraft)[]) =>
  rows.map((r) => ('conditions' in r ? `${r.key}(${r.conditions.map((c) => c.key).join(',')})` : String(r.key))).join(' ')

/** Whether two lists hold the same rows (and conditions) in the same order, whatever their values. */
export const sameRows = (a: readonly (RuleDraft | VariantDraft)[], b: readonly (RuleDraft | VariantDraft)[]) => rowKeys(a) === rowKeys(b)

/** The inputs the rule editor shows, by the issue path each answers for. */
export function rulePaths(rules: readonly RuleDraft[]): Set<string> {
  const paths = new Set<string>()
  rules.forEach((r, i) => {
    for (const p of ['name', 'match', 'destinationUrl', 'conditions']) paths.add(`routingRules.${i}.${p}`)
    r.conditions.forEach((_, j) => {
      for (const p of ['field', 'op', 'value']) paths.add(`routingRules.${i}.conditions.${j}.${p}`)
    })
  })
  return paths
}

export function variantPaths(variants: readonly VariantDraft[]): Set<string> {
  const paths = new Set<string>()
  variants.forEach((_, i) => {
    for (const p of ['destinationUrl', 'weight']) paths.add(`variants.${i}.${p}`)
  })
  return paths
}

/**
 * Issues placed at the input they name: a path deeper than any input (`…value.2`, an item of a list) goes to
 * the nearest input above it; one that names no input (`routingRules`, too many rules) goes under `section`.
 */
export function placeIssues(issues: readonly { path: string; message: string }[], known: ReadonlySet<string>, section: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const issue of issues) {
    if (issue.path !== section && !issue.path.startsWith(`${section}.`)) continue
    const parts = issue.path.split('.')
    while (parts.length && !known.has(parts.join('.'))) parts.pop()
    const at = parts.length ? parts.join('.') : section
    out[at] = out[at] ? `${out[at]}; ${issue.message}` : issue.message
  }
  return out
}
