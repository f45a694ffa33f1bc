// Endpoint filters (spec 2.5): which events an endpoint receives beyond its `events` list.
//
// Rules read dot paths of the whole event envelope (`type`, `mode`, `data.link.domain`, `data.link.tags.0`);
// numeric segments index arrays; only own properties are followed, so `constructor` or `__proto__` never
// reach a prototype. A field is missing when a segment does not exist or the value is undefined. What each
// operator means on a found or missing field is written once in `platform/conditions.ts`, shared with link
// routing rules. `match: all` needs every rule, `match: any` one of them; with no rules both match. `events`,
// when not null, must also match the event type (same patterns as the endpoint's `events`).
import { type ConditionOp, CONDITION_OPS, conditionHolds, isoInstant, valueIssue } from '../../platform/conditions'
import { EVENT_CATALOGUE } from './model'

export type FilterOp = ConditionOp
export { isoInstant }

export interface FilterRule {
  field: string
  op: FilterOp
  value?: unknown
}

export interface WebhookFilters {
  match: 'all' | 'any'
  events: string[] | null
  rules: FilterRule[]
}

export interface Issue {
  path: string
  message: string
}

export const FILTER_OPS: readonly FilterOp[] = CONDITION_OPS
export const MAX_RULES = 50
export const MAX_FIELD_LENGTH = 200
export const MAX_EVENT_PATTERNS = 100

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Reads a dot path; `found` is false when any segment is missing or the value is undefined. */
export function readPath(source: unknown, path: string): { found: boolean; value: unknown } {
  let current = source
  for (const segment of path.split('.')) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) return { found: false, value: undefined }
      current = current[Number(segment)]
    } else if (isRecord(current) && Object.hasOwn(current, segment)) {
      current = current[segment]
    } else {
      return { found: false, value: undefined }
    }
    if (current === undefined) return { found: false, value: undefined }
  }
  return { found: true, value: current }
}

function ruleMatches(rule: FilterRule, envelope: unknown): boolean {
  const { found, value } = readPath(envelope, rule.field)
  return conditionHolds(rule.op, found, value, rule.value)
}

/** `*`, an exact type, or `prefix.*` for every type under that prefix. */
export function eventMatches(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))))
}

export function matchesFilters(filters: WebhookFilters | null, envelope: { type: string; [k: string]: unknown }): boolean {
  if (!filters) return true
  if (filters.events && !eventMatches(filters.events, envelope.type)) return false
  if (!filters.rules.length) return true
  return filters.match === 'any' ? filters.rules.some((r) => ruleMatches(r, envelope)) : filters.rules.every((r) => ruleMatches(r, envelope))
}

/** Issues with a list of event patterns; `base` is the JSON pointer of the list in the request body. */
export function validateEventPatterns(patterns: unknown, known: readonly string[], base = '/events'): Issue[] {
  if (!Array.isArray(patterns)) return [{ path: base, message: 'must be an array of event names' }]
  if (patterns.length > MAX_EVENT_PATTERNS) return [{ path: base, message: `at most ${MAX_EVENT_PATTERNS} event names` }]
  const issues: Issue[] = []
  patterns.forEach((p, i) => {
    const path = `${base}/${i}`
    if (typeof p !== 'string') return issues.push({ path, message: 'must be a string' })
    if (p === '*' || known.includes(p)) return
    if (p.endsWith('.*')) {
      const prefix = p.slice(0, -1)
      if (prefix.length > 1 && known.some((k) => k.startsWith(prefix))) return
      return issues.push({ path, message: `"${p}" matches no known event type` })
    }
    issues.push({ path, message: `"${p}" is not a known event type (use *, an exact type, or a prefix such as link.*)` })
  })
  return issues
}

function fieldIssue(field: unknown): string | null {
  if (typeof field !== 'string') return 'field must be a string'
  if (field.length < 1 || field.length > MAX_FIELD_LENGTH) return `field must be 1-${MAX_FIELD_LENGTH} characters`
  if (field.split('.').some((s) => s === '')) return `field "${field}" has an empty segment; use a dot path such as data.link.domain`
  return null
}

function validateRule(rule: unknown, i: number, issues: Issue[]): FilterRule | null {
  const base = `/filters/rules/${i}`
  const add = (key: string, message: string) => issues.push({ path: key ? `${base}/${key}` : base, message: `rule ${i}: ${message}` })
  if (!isRecord(rule)) return (add('', 'must be an object with field, op and value'), null)
  const extra = Object.keys(rule).filter((k) => k !== 'field' && k !== 'op' && k !== 'value')
  for (const k of extra) add(k, `unknown property "${k}"`)
  const fieldProblem = fieldIssue(rule.field)
  if (fieldProblem) add('field', fieldProblem)
  if (typeof rule.op !== 'string' || !FILTER_OPS.includes(rule.op as FilterOp)) {
    add('op', `op must be one of ${FILTER_OPS.join(', ')}`)
    return null
  }
  const op = rule.op as FilterOp
  const hasValue = Object.hasOwn(rule, 'value') && rule.value !== undefined
  const valueProblem = valueIssue(op, rule.value, hasValue)
  if (valueProblem) add('value', valueProblem)
  if (fieldProblem || valueProblem || extra.length) return null
  return op === 'exists' || op === 'not_exists' ? { field: rule.field as string, op } : { field: rule.field as string, op, value: rule.value }
}

/** Checks filters from a request body; paths are JSON pointers rooted at /filters. */
export function validateFilters(input: unknown): { ok: true; value: WebhookFilters | null } | { ok: false; issues: Issue[] } {
  if (input === null || input === undefined) return { ok: true, value: null }
  if (!isRecord(input)) return { ok: false, issues: [{ path: '/filters', message: 'must be an object with match, events and rules, or null' }] }
  const issues: Issue[] = []
  for (const k of Object.keys(input)) {
    if (k !== 'match' && k !== 'events' && k !== 'rules') issues.push({ path: `/filters/${k}`, message: `unknown property "${k}"` })
  }
  const match = input.match ?? 'all'
  if (match !== 'all' && match !== 'any') issues.push({ path: '/filters/match', message: 'match must be "all" or "any"' })
  const events = input.events ?? null
  if (events !== null) {
    issues.push(
      ...validateEventPatterns(
        events,
        EVENT_CATALOGUE.map((e) => e.type),
        '/filters/events',
      ),
    )
    if (Array.isArray(events) && !events.length) issues.push({ path: '/filters/events', message: 'must list at least one event, or be null for all' })
  }
  const rawRules = input.rules ?? []
  const rules: FilterRule[] = []
  if (!Array.isArray(rawRules)) issues.push({ path: '/filters/rules', message: 'rules must be an array' })
  else if (rawRules.length > MAX_RULES) issues.push({ path: '/filters/rules', message: `at most ${MAX_RULES} rules` })
  else
    rawRules.forEach((r, i) => {
      const rule = validateRule(r, i, issues)
      if (rule) rules.push(rule)
    })
  if (issues.length) return { ok: false, issues }
  return { ok: true, value: { match: match as 'all' | 'any', events: events as string[] | null, rules } }
}
