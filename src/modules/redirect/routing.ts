// Routing rules and A/B variants (contract 7.1), pure: which destination a visit gets, given the link and what
// is known of the visit. Nothing here reads, writes or awaits; the facts of a visit are asked for through
// getters, one per field, so a visit is looked up (country, parsed agent…) only as far as a rule asks.
//
// Order: the link's rules in order, the first whose conditions match wins; else a variant; else the link's
// destination. A condition reads one fact and holds as platform/conditions.ts says, a missing fact (null)
// satisfying only `not_exists`; `ip` tests the address against addresses and CIDRs, `time` the visit's instant
// against ISO 8601 instants. A rule's conditions are compiled once per stored list (the link cache keeps the
// same array for as long as the link is unchanged), so a visit runs plain closures.
//
// Variants: weighted rendezvous hashing over the keyed visitor hash. Each variant scores -weight / ln(u), u in
// (0, 1) a hash of the visitor and the variant's id, and the highest score wins: a variant's share is its
// weight over the sum, a visitor keeps their variant while the list is unchanged (no cookie), and adding or
// removing a variant moves only the visitors who go to or come from it.
import type { RoutingCondition, RoutingRule, Variant } from '../../db/schema'
import { type ConditionOp, conditionHolds, isoInstant } from '../../platform/conditions'
import { addressMatcher } from '../../platform/ip'
import type { RedirectLink } from '../links'

export type Trigger = 'link' | 'qr'
export type FactDevice = 'desktop' | 'mobile' | 'tablet'
export type FactOs = 'ios' | 'android' | 'windows' | 'macos' | 'linux' | 'chromeos' | 'other'
export type FactBrowser = 'chrome' | 'safari' | 'firefox' | 'edge' | 'opera' | 'samsung' | 'other'

/** What a rule may ask of a visit; each is computed on first use and kept (a getter per field). */
export interface VisitFacts {
  country(): string | null
  continent(): string | null
  city(): string | null
  device(): FactDevice | null
  os(): FactOs | null
  browser(): FactBrowser | null
  language(): string | null
  locale(): string | null
  referrer(): string | null
  ip(): string | null
  /** The visit's instant, epoch ms. */
  time(): number
  query(name: string): string | null
  trigger(): Trigger
  /** The keyed visitor hash (address + user agent), for variants. */
  visitor(): string
}

export interface Route {
  destinationUrl: string
  ruleId: string | null
  variantId: string | null
}

export interface RuleTrace {
  ruleId: string
  matched: boolean
  conditions: boolean[]
}

export type RoutedLink = Pick<RedirectLink, 'destinationUrl' | 'routingRules' | 'variants'>

type Read = (f: VisitFacts) => string | number | null
type Test = (f: VisitFacts) => boolean

const FIELDS: Record<string, Read> = {
  country: (f) => f.country(),
  continent: (f) => f.continent(),
  city: (f) => f.city(),
  device: (f) => f.device(),
  os: (f) => f.os(),
  browser: (f) => f.browser(),
  language: (f) => f.language(),
  locale: (f) => f.locale(),
  referrer: (f) => f.referrer(),
  ip: (f) => f.ip(),
  time: (f) => f.time(),
  trigger: (f) => f.trigger(),
}

const QUERY_PREFIX = 'query.'

function readerOf(field: string): Read | null {
  if (field.startsWith(QUERY_PREFIX)) {
    const name = field.slice(QUERY_PREFIX.length)
    return (f) => f.query(name)
  }
  return Object.hasOwn(FIELDS, field) ? FIELDS[field]! : null
}

const ORDER_OPS = new Set<string>(['gt', 'gte', 'lt', 'lte'])

/** One condition as a closure over the facts; what validation let through and nothing else is expected here. */
function compileCondition(c: RoutingCondition): Test {
  const op = c.op as ConditionOp
  const value = c.value
  const read = readerOf(c.field)
  // A field this version does not know reads as missing: only not_exists holds, as for a fact not found.
  if (read === null) return () => op === 'not_exists'
  if (c.field === 'ip' && (op === 'in' || op === 'nin' || op === 'eq' || op === 'neq')) {
    const list = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : []
    const inList = addressMatcher(list)
    const positive = op === 'in' || op === 'eq'
    return (f) => {
      const ip = f.ip()
      return ip !== null && inList(ip) === positive
    }
  }
  if (c.field === 'time' && ORDER_OPS.has(op)) {
    const at = typeof value === 'number' ? value : isoInstant(value)
    if (at === null) return () => false
    return (f) => conditionHolds(op, true, f.time(), at)
  }
  // The common cases, spelled out: a fact against a string or a list of them. The same answers as
  // conditionHolds (a missing fact matches neither way), without its general comparison.
  if ((op === 'eq' || op === 'neq') && typeof value === 'string') {
    const wanted = op === 'eq'
    return (f) => {
      const found = read(f)
      return found !== null && (found === value) === wanted
    }
  }
  if ((op === 'in' || op === 'nin') && Array.isArray(value)) {
    const list = new Set(value)
    const wanted = op === 'in'
    return (f) => {
      const found = read(f)
      return found !== null && list.has(found) === wanted
    }
  }
  return (f) => {
    const found = read(f)
    return conditionHolds(op, found !== null, found, value)
  }
}

interface CompiledRule {
  id: string
  any: boolean
  tests: Test[]
  destinationUrl: string
}

const compiled = new WeakMap<readonly RoutingRule[], CompiledRule[]>()

function compile(rules: readonly RoutingRule[]): CompiledRule[] {
  let out = compiled.get(rules)
  if (out === undefined) {
    out = rules.map((r) => ({ id: r.id, any: r.match === 'any', tests: r.conditions.map(compileCondition), destinationUrl: r.destinationUrl }))
    compiled.set(rules, out)
  }
  return out
}

/** `all`: every condition holds; `any`: one does. Stops at the first condition that settles it. */
function matches(rule: CompiledRule, facts: VisitFacts): boolean {
  const tests = rule.tests
  if (rule.any) {
    for (let i = 0; i < tests.length; i++) if (tests[i]!(facts)) return true
    return false
  }
  for (let i = 0; i < tests.length; i++) if (!tests[i]!(facts)) return false
  return tests.length > 0
}

/** First matching rule, else a variant, else the link's destination. A link with neither never touches facts. */
export function route(link: RoutedLink, facts: VisitFacts): Route {
  const rules = link.routingRules
  if (rules !== null && rules.length) {
    const list = compile(rules)
    for (let i = 0; i < list.length; i++) {
      const rule = list[i]!
      if (matches(rule, facts)) return { destinationUrl: rule.destinationUrl, ruleId: rule.id, variantId: null }
    }
  }
  const variants = link.variants
  if (variants !== null && variants.length) {
    const chosen = pickVariant(variants, facts.visitor())
    return { destinationUrl: chosen.destinationUrl, ruleId: null, variantId: chosen.id }
  }
  return { destinationUrl: link.destinationUrl, ruleId: null, variantId: null }
}

/**
 * route() with the trace of how it got there: every rule up to and including the first that matched (later ones
 * are not evaluated, as on a visit), each with the outcome of every one of its conditions in order.
 */
export function explain(link: RoutedLink, facts: VisitFacts): Route & { trace: RuleTrace[] } {
  const trace: RuleTrace[] = []
  for (const rule of compile(link.routingRules ?? [])) {
    const conditions = rule.tests.map((test) => test(facts))
    const matched = conditions.length > 0 && (rule.any ? conditions.includes(true) : !conditions.includes(false))
    trace.push({ ruleId: rule.id, matched, conditions })
    if (matched) return { destinationUrl: rule.destinationUrl, ruleId: rule.id, variantId: null, trace }
  }
  return { ...route({ ...link, routingRules: null }, facts), trace }
}

// The variant hash: two 32-bit lanes over UTF-16 code units, each round a multiply and a rotation, finished
// with murmur3's avalanche step so one changed character flips about half the bits. Not cryptographic: the
// visitor hash it starts from is keyed already, and nothing here is secret.
let laneA = 0
let laneB = 0

function absorb(s: string, a: number, b: number) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    a = Math.imul(a ^ c, 0x9e3779b1)
    a = (a << 13) | (a >>> 19)
    b = Math.imul(b ^ c, 0x85ebca77)
    b = (b << 17) | (b >>> 15)
  }
  laneA = a ^ s.length
  laneB = b ^ Math.imul(s.length, 0x27d4eb2f)
}

function avalanche(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return h ^ (h >>> 16)
}

/** Each variant id's two lanes, hashed once per stored list (the link cache keeps the same array). */
const idLanes = new WeakMap<readonly Variant[], Int32Array>()

function lanesOf(variants: readonly Variant[]): Int32Array {
  let lanes = idLanes.get(variants)
  if (lanes === undefined) {
    lanes = new Int32Array(variants.length * 2)
    for (let i = 0; i < variants.length; i++) {
      absorb(variants[i]!.id, 0x3c6ef372, 0xa54ff53a)
      lanes[2 * i] = avalanche(laneA)
      lanes[2 * i + 1] = avalanche(laneB ^ lanes[2 * i]!)
    }
    idLanes.set(variants, lanes)
  }
  return lanes
}

/** A number in (0, 1), never 0 or 1, from the visitor's lanes and a variant's: 52 bits and a half. */
function unit(visitorA: number, visitorB: number, idA: number, idB: number): number {
  const a = avalanche(visitorA ^ idA)
  const b = avalanche(visitorB ^ idB ^ Math.imul(a, 0x9e3779b1))
  return ((a >>> 0) * 1_048_576 + (b >>> 12) + 0.5) / 4_503_599_627_370_496
}

/** The variant a visitor gets: highest random weight, the weight scaling the score (see the head of this file). */
export function pickVariant(variants: readonly Variant[], visitor: string): Variant {
  absorb(visitor, 0x6a09e667, 0xbb67ae85)
  const va = avalanche(laneA)
  const vb = avalanche(laneB ^ va)
  const ids = lanesOf(variants)
  let best = variants[0]!
  let bestScore = -Infinity
  for (let i = 0; i < variants.length; i++) {
    const v = variants[i]!
    if (!(v.weight > 0)) continue
    const score = -v.weight / Math.log(unit(va, vb, ids[2 * i]!, ids[2 * i + 1]!))
    if (score > bestScore) {
      bestScore = score
      best = v
    }
  }
  return best
}
