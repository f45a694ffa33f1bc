// Synthetic sample events (GET /zapier/samples when the caller has no real one yet). Zapier and Make build a
// Zap's field list from the sample, so it is generated from the catalogue's own schema: a new event type or
// field gets a valid sample without anyone writing one. Values are plausible rather than schema-minimal
// (ids with the prefix their description names, URLs for url-ish names, a currency code for `^[A-Z]{3}$`),
// nullable fields carry a value so every field can be mapped, and everything except the timestamps (the
// clock) is the same on every call. Pure.
import { Kind, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { EventDefinition } from '../../events/catalogue'
import { iso } from '../../platform/clock'
import { splitNull, type Schema } from '../webhooks'

type Hint = unknown | ((now: number) => unknown)

/**
 * Plausible values by field name, or by `parent.field` where the parent decides (a dark theme's colours).
 * A hint is used only where it validates against the field's schema, so a renamed or retyped field falls
 * back to the generic rules instead of producing an invalid sample.
 */
const HINTS: Record<string, Hint> = {
  slug: 'spring-sale',
  domain: 'go.example.com',
  unicodeDomain: 'go.example.com',
  title: 'Spring sale',
  description: 'Everything 20 % off until Sunday',
  destinationUrl: 'https://shop.example.com/spring-sale',
  shortUrl: 'https://go.example.com/spring-sale',
  url: 'https://go.example.com/p/spring-sale',
  'httpCheck.url': 'http://go.example.com/.well-known/lnk/3Jq8nTzV',
  ogImageUrl: 'https://shop.example.com/images/spring-sale.png',
  tags: ['spring', 'newsletter'],
  changes: ['title'],
  folderId: 'marketing',
  campaignId: 'spring-2026',
  utmSource: 'newsletter',
  utmMedium: 'email',
  utmCampaign: 'spring-sale',
  utmTerm: 'shoes',
  utmContent: 'header-button',
  ogTitle: 'Spring sale',
  ogDescription: 'Everything 20 % off until Sunday',
  referrer: 'https://news.example.org/',
  userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  unique: true,
  isActive: true,
  served: true,
  ok: true,
  reached: true,
  detail: 'HTTP 200 from the well-known path',
  'records.name': '_lnk-challenge.go.example.com',
  'records.value': 'lnk-verify=3Jq8nTzV',
  seen: ['lnk-verify=3Jq8nTzV'],
  lookupErrors: [],
  failureReason: null,
  totalClicks: 42,
  uniqueClicks: 31,
  clickLimit: 1000,
  uniqueIpLimit: 1,
  blockCount: 4,
  archivedLinks: 3,
  eventName: 'purchase',
  value: 19.99,
  currency: 'USD',
  metadata: { orderId: 'A-1001', plan: 'pro' },
  lang: 'en',
  templateSlug: 'link-in-bio',
  savedTemplateId: null,
  message: 'This is a test ping from lnk. If you can read this, the endpoint works.',
  'light.background': '#ffffff',
  'light.text': '#1f2937',
  'light.accent': '#1d4ed8',
  'light.accentText': '#ffffff',
  'dark.background': '#111827',
  'dark.text': '#f9fafb',
  'dark.accent': '#93c5fd',
  'dark.accentText': '#111827',
}

/** Id prefixes of the things events name, for `id` (by the enclosing object) and `<thing>Id` fields. */
const ID_PREFIXES: Record<string, string> = {
  click: 'clk',
  conversion: 'cnv',
  domain: 'dom',
  folder: 'fld',
  bridgePage: 'bp',
  workspace: 'ws',
  endpoint: 'whe',
  savedTemplate: 'tpl',
  event: 'evt',
}

/** Values tried, in order, against a pattern no hint satisfied. */
const PATTERN_CANDIDATES = ['USD', '#1d4ed8', 'spring-sale', 'spring-2026', 'example', 'EXAMPLE', 'Example', 'abc123', 'a', 'A', '0', '1', 'en', 'en-US']

const FORMATS: Record<string, (now: number) => string> = {
  'date-time': iso,
  date: (now) => iso(now).slice(0, 10),
  time: (now) => iso(now).slice(11, 19) + 'Z',
  email: () => 'jane@example.com',
  uri: () => 'https://example.com/',
  url: () => 'https://example.com/',
  hostname: () => 'go.example.com',
  ipv4: () => '203.0.113.7',
  ipv6: () => '2001:db8::7',
}

interface Place {
  /** The property (or the array's property) being filled; '' at the top. */
  key: string
  /** The object it belongs to: the enclosing property's name, or the event's noun at the top. */
  parent: string
  now: number
}

/** The event's `data`: valid against `def.data`. */
export function exampleData(def: EventDefinition, now: number): Record<string, unknown> {
  const noun = camel(def.type.split('.')[0]!)
  return generate(def.data as unknown as Schema, { key: '', parent: noun, now }) as Record<string, unknown>
}

/** A whole envelope as an endpoint would receive it, flagged `sample: true`, with a fixed id per type. */
export function sampleEnvelope(def: EventDefinition, mode: 'live' | 'test', now: number): Record<string, unknown> {
  return { id: `evt_sample_${def.type.replace(/\W/g, '_')}`, type: def.type, timestamp: iso(now), mode, sample: true, data: exampleData(def, now) }
}

function generate(schema: Schema, at: Place): unknown {
  const hint = hintFor(schema, at)
  if (hint !== undefined) return hint
  if ('const' in schema) return schema.const
  if (Array.isArray(schema.enum)) return schema.enum[0]
  if (schema.anyOf || schema.oneOf || Array.isArray(schema.type)) {
    const { members } = splitNull(schema)
    return members.length ? generate(members[0]!, at) : null
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...(schema.allOf as Schema[]).map((m) => generate(m, at)))
  switch (schema.type) {
    case 'object':
      return objectOf(schema, at)
    case 'array':
      return arrayOf(schema, at)
    case 'string':
      return stringOf(schema, at)
    case 'number':
    case 'integer':
      return numberOf(schema)
    case 'boolean':
      return false
    case 'null':
      return null
    default:
      return 'example'
  }
}

function hintFor(schema: Schema, at: Place): unknown {
  for (const name of [`${at.parent}.${at.key}`, at.key]) {
    if (!(name in HINTS)) continue
    const hint = HINTS[name]
    const value = typeof hint === 'function' ? (hint as (now: number) => unknown)(at.now) : hint
    if (fits(schema, value)) return structuredClone(value)
  }
  return undefined
}

/** Only TypeBox's own schema objects can be checked; the members split off a `type` list are plain. */
const fits = (schema: Schema, value: unknown) => Kind in schema && Value.Check(schema as unknown as TSchema, value)

function objectOf(schema: Schema, at: Place): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const parent = at.key || at.parent
  for (const [key, s] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) out[key] = generate(s, { key, parent, now: at.now })
  return out
}

function arrayOf(schema: Schema, at: Place): unknown[] {
  const items = schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items) ? (schema.items as Schema) : {}
  const count = Math.max(1, Number(schema.minItems ?? 1))
  // Items of `records` are each a record: they take the array's name as their parent.
  return Array.from({ length: count }, () => generate(items, { key: '', parent: at.key || at.parent, now: at.now }))
}

function stringOf(schema: Schema, at: Place): string {
  const value = plainString(schema, at)
  const min = Number(schema.minLength ?? 0)
  const max = Number(schema.maxLength ?? Infinity)
  return value.padEnd(min, 'x').slice(0, max)
}

function plainString(schema: Schema, at: Place): string {
  if (typeof schema.format === 'string' && FORMATS[schema.format]) return FORMATS[schema.format]!(at.now)
  if (schema.format === 'uuid') return uuidFor(at.key === 'id' ? at.parent : at.key)
  if (typeof schema.pattern === 'string') return patterned(schema.pattern)
  const named = typeof schema.description === 'string' ? /(?:^|\()([a-z]{2,5})_…/.exec(schema.description) : null
  if (named) return idWith(named[1]!)
  const thing = at.key === 'id' ? at.parent : at.key.endsWith('Id') ? at.key.slice(0, -2) : null
  if (thing !== null) return ID_PREFIXES[thing] ? idWith(ID_PREFIXES[thing]) : uuidFor(thing)
  if (/url$/i.test(at.key)) return `https://example.com/${kebab(at.key.replace(/url$/i, '')) || 'page'}`
  return 'example'
}

function patterned(pattern: string): string {
  const re = new RegExp(pattern)
  const found = PATTERN_CANDIDATES.find((c) => re.test(c))
  // Thrown at generation, which the catalogue's test runs for every type: a new pattern needs a candidate.
  if (found === undefined) throw new Error(`no sample value matches the pattern ${pattern}: add one to PATTERN_CANDIDATES`)
  return found
}

function numberOf(schema: Schema): number {
  const integer = schema.type === 'integer'
  let n = 1
  if (typeof schema.minimum === 'number') n = Math.max(n, schema.minimum)
  if (typeof schema.exclusiveMinimum === 'number') n = Math.max(n, integer ? Math.floor(schema.exclusiveMinimum) + 1 : schema.exclusiveMinimum + 1)
  if (typeof schema.maximum === 'number') n = Math.min(n, schema.maximum)
  if (typeof schema.exclusiveMaximum === 'number') n = Math.min(n, integer ? Math.ceil(schema.exclusiveMaximum) - 1 : schema.exclusiveMaximum / 2)
  return integer ? Math.ceil(n) : n
}

// ---- deterministic ids ------------------------------------------------------------------------------------

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** A stream of pseudo-random integers seeded by a name (FNV-1a, then xorshift32): the same name, the same id. */
function seeded(name: string): () => number {
  let h = 0x811c9dc5
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193)
  let x = h >>> 0 || 1
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x
  }
}

/** Shaped like the service's own ids (`clk_` + 20 base62), the same for every sample naming that prefix. */
function idWith(prefix: string): string {
  const next = seeded(prefix)
  let out = ''
  for (let i = 0; i < 20; i++) out += BASE62[next() % 62]
  return `${prefix}_${out}`
}

/** A version-7-shaped UUID, the same for every sample naming that thing. */
function uuidFor(thing: string): string {
  const next = seeded(thing)
  const hex = Array.from({ length: 32 }, () => (next() % 16).toString(16)).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20)}`
}

const camel = (s: string) => s.replace(/[_-](\w)/g, (_, c: string) => c.toUpperCase())
const kebab = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()
