// The condition operators shared by webhook endpoint filters (spec 2.5) and link routing rules (contract 7.1):
// one list, one meaning, one check of the values a caller may send. What a condition reads (a dot path of an
// event envelope, a fact of a visit) is the caller's business; this file only says whether `op value` holds.
//
// The semantics, written down once:
// - A field is missing when the caller could not find it. A missing field satisfies only `not_exists`: every
//   other operator, `neq` and `nin` and `not_contains` included, is false on it.
// - `null` is a present value: `exists` is true for it, `eq null` matches it, `neq "x"` is true for it.
// - `eq`/`neq` compare JSON values structurally (object key order ignored); strings are case-sensitive.
// - `in`/`nin`: the field is (not) one of the listed scalars, by strict equality.
// - `contains`/`not_contains`: a string field (not) containing the string as a substring, or an array field
//   (not) holding the scalar as an element. On any other field type both are false.
// - `starts_with`: a string field beginning with the string.
// - `gt`/`gte`/`lt`/`lte`: numbers compare numerically, ISO 8601 date-times (with a zone) as instants; a
//   field and value of different kinds, or anything else, compare false.
// - No operator evaluates a regular expression or any code from the user.
import { canonicalJson } from './canonical-json'

export const CONDITION_OPS = ['eq', 'neq', 'in', 'nin', 'contains', 'not_contains', 'starts_with', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'] as const
export type ConditionOp = (typeof CONDITION_OPS)[number]

export const MAX_LIST_VALUES = 100
export const MAX_STRING_VALUE = 1024

type Scalar = string | number | boolean | null

export const isScalar = (v: unknown): v is Scalar =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/

/** Epoch ms of an ISO 8601 date-time with a zone; null for anything else (a zone-less time is ambiguous). */
export function isoInstant(value: unknown): number | null {
  if (typeof value !== 'string' || !ISO_DATE_TIME.test(value)) return null
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? null : ms
}

function compare(field: unknown, value: unknown): number | null {
  if (typeof field === 'number' && typeof value === 'number') return field - value
  const a = isoInstant(field)
  const b = isoInstant(value)
  return a !== null && b !== null ? a - b : null
}

function holds(field: unknown, value: unknown): boolean | null {
  if (typeof field === 'string') return typeof value === 'string' ? field.includes(value) : null
  if (Array.isArray(field)) return field.some((item) => isScalar(item) && item === value)
  return null
}

/** Whether `field op value` holds; `found` false means the field is missing (see the semantics above). */
export function conditionHolds(op: ConditionOp, found: boolean, field: unknown, value: unknown): boolean {
  if (op === 'not_exists') return !found
  if (!found) return false
  switch (op) {
    case 'exists':
      return true
    case 'eq':
      // Two strings need no canonical form: the common case of routing rules skips the JSON text.
      return typeof field === 'string' && typeof value === 'string' ? field === value : canonicalJson(field) === canonicalJson(value)
    case 'neq':
      return typeof field === 'string' && typeof value === 'string' ? field !== value : canonicalJson(field) !== canonicalJson(value)
    case 'in':
      return isScalar(field) && (value as Scalar[]).includes(field)
    case 'nin':
      return isScalar(field) && !(value as Scalar[]).includes(field)
    case 'contains':
      return holds(field, value) === true
    case 'not_contains':
      return holds(field, value) === false
    case 'starts_with':
      return typeof field === 'string' && typeof value === 'string' && field.startsWith(value)
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const d = compare(field, value)
      if (d === null) return false
      return op === 'gt' ? d > 0 : op === 'gte' ? d >= 0 : op === 'lt' ? d < 0 : d <= 0
    }
  }
}

/** What is wrong with the value of a condition whose operator is `op`, whatever field it reads; null when nothing. */
export function valueIssue(op: ConditionOp, value: unknown, hasValue: boolean): string | null {
  const longString = (v: unknown) => typeof v === 'string' && v.length > MAX_STRING_VALUE
  switch (op) {
    case 'exists':
    case 'not_exists':
      return hasValue && value !== null ? `${op} takes no value` : null
    case 'eq':
    case 'neq':
      if (!hasValue) return `${op} needs a value`
      return canonicalJson(value).length > MAX_STRING_VALUE ? `value must be at most ${MAX_STRING_VALUE} characters as JSON` : null
    case 'in':
    case 'nin':
      if (!Array.isArray(value) || !value.length) return `${op} needs a non-empty array of strings, numbers, booleans or null`
      if (value.length > MAX_LIST_VALUES) return `${op} takes at most ${MAX_LIST_VALUES} values`
      if (!value.every(isScalar)) return `${op} values must be strings, numbers, booleans or null`
      return value.some(longString) ? `values must be at most ${MAX_STRING_VALUE} characters` : null
    case 'contains':
    case 'not_contains':
      if (!hasValue || !isScalar(value)) return `${op} needs a string (substring) or a scalar (array element)`
      return longString(value) ? `value must be at most ${MAX_STRING_VALUE} characters` : null
    case 'starts_with':
      if (typeof value !== 'string') return 'starts_with needs a string'
      return longString(value) ? `value must be at most ${MAX_STRING_VALUE} characters` : null
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (typeof value === 'number' && Number.isFinite(value)) return null
      return isoInstant(value) !== null ? null : `${op} needs a number or an ISO 8601 date-time with a zone`
  }
}
