// GET /webhooks/types: the event catalogue's JSON Schemas as TypeScript or Go (contract section 5).
//
// The schemas come from TypeBox, so only what TypeBox emits needs a mapping: objects (required lists
// decide optional fields), arrays, records (patternProperties / additionalProperties), anyOf unions (with
// null: nullable), const literals and enums, allOf (t.Composite already merges into one object, but an
// allOf is still read as an intersection), and empty schemas (unknown). Formats are ignored, with one
// exception: Elysia's t.Numeric is `anyOf [string with format integer|numeric, number]` so that query
// strings validate; event bodies always carry the number, so that string member is dropped.
// Output is deterministic: catalogue order, then each schema's property order.
import type { EventDefinition } from '../../events/catalogue'
import { EVENT_CATALOGUE } from './model'

export type Schema = Record<string, unknown>

const list = (v: unknown): Schema[] => (Array.isArray(v) ? (v as Schema[]) : [])
const isNull = (s: Schema) => s.type === 'null'
const isNumeric = (s: Schema) => s.type === 'number' || s.type === 'integer'

/** anyOf members without Elysia's coercion-only numeric strings, nested unions flattened. */
export function unionMembers(schema: Schema): Schema[] {
  const flat = list(schema.anyOf ?? schema.oneOf).flatMap((m) => (m.anyOf || m.oneOf ? unionMembers(m) : [m]))
  const hasNumber = flat.some(isNumeric)
  return flat.filter((m) => !(hasNumber && m.type === 'string' && (m.format === 'integer' || m.format === 'numeric')))
}

/** The union with null split off, for languages where nullability is its own notion (Go pointers). */
export function splitNull(schema: Schema): { nullable: boolean; members: Schema[] } {
  if (!schema.anyOf && !schema.oneOf) {
    if (Array.isArray(schema.type)) {
      const types = (schema.type as string[]).filter((t) => t !== 'null')
      return { nullable: types.length < (schema.type as string[]).length, members: types.map((type) => ({ ...schema, type })) }
    }
    return { nullable: false, members: [schema] }
  }
  const members = unionMembers(schema)
  return { nullable: members.some(isNull), members: members.filter((m) => !isNull(m)) }
}

export const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')

export interface CatalogueEntry {
  name: string
  type: string
  description: string
  data: Schema
}

/** The catalogue as plain JSON Schema (TypeBox's symbol keys dropped), with type names. */
export function catalogueEntries(catalogue: readonly EventDefinition[] = EVENT_CATALOGUE): CatalogueEntry[] {
  return catalogue.map((e) => ({ name: pascal(e.type), type: e.type, description: e.description, data: JSON.parse(JSON.stringify(e.data)) as Schema }))
}

// ---- TypeScript -----------------------------------------------------------------------------------------

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const doc = (text: unknown, pad: string) => (typeof text === 'string' && text ? `${pad}/** ${text.replace(/\*\//g, '* /').replace(/\s+/g, ' ')} */\n` : '')

function tsObject(schema: Schema, pad: string): string {
  const props = Object.entries((schema.properties ?? {}) as Record<string, Schema>)
  const required = new Set(list(schema.required) as unknown as string[])
  const extra =
    Object.values((schema.patternProperties ?? {}) as Record<string, Schema>)[0] ??
    (typeof schema.additionalProperties === 'object' ? (schema.additionalProperties as Schema) : null)
  if (!props.length) return extra ? `Record<string, ${tsType(extra, pad)}>` : 'Record<string, unknown>'
  const inner = pad + '  '
  const lines = props.map(
    ([key, s]) => `${doc(s.description, inner)}${inner}${IDENT.test(key) ? key : JSON.stringify(key)}${required.has(key) ? '' : '?'}: ${tsType(s, inner)}`,
  )
  if (extra) lines.push(`${inner}[key: string]: unknown`)
  return `{\n${lines.join('\n')}\n${pad}}`
}

export function tsType(schema: Schema, pad = ''): string {
  if ('const' in schema) return JSON.stringify(schema.const)
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ')
  if (schema.anyOf || schema.oneOf || Array.isArray(schema.type)) {
    const { nullable, members } = splitNull(schema)
    const parts = [...new Set(members.map((m) => tsType(m, pad)))]
    if (nullable) parts.push('null')
    return parts.length ? parts.join(' | ') : 'never'
  }
  if (schema.allOf)
    return list(schema.allOf)
      .map((m) => `(${tsType(m, pad)})`)
      .join(' & ')
  switch (schema.type) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array': {
      const item = schema.items && typeof schema.items === 'object' ? tsType(schema.items as Schema, pad) : 'unknown'
      return /^[\w.]+$/.test(item) ? `${item}[]` : `Array<${item}>`
    }
    case 'object':
      return tsObject(schema, pad)
    default:
      return 'unknown'
  }
}

function typescript(entries: CatalogueEntry[]): string {
  const out = ['// Webhook event types of lnk, generated from the event catalogue. Do not edit.', '', "export type WebhookMode = 'live' | 'test'", '']
  for (const e of entries) {
    out.push(`${doc(`Data of ${e.type}.`, '')}export type ${e.name}Data = ${tsType(e.data)}`, '')
    out.push(`${doc(e.description, '')}export interface ${e.name}Event {`)
    out.push(
      '  /** evt_…, unique per event */',
      '  id: string',
      `  type: ${JSON.stringify(e.type)}`,
      '  /** ISO 8601 */',
      '  timestamp: string',
      '  mode: WebhookMode',
      `  data: ${e.name}Data`,
      '}',
      '',
    )
  }
  out.push(`/** Any event; narrow on \`type\`. */`, `export type WebhookEvent =\n${entries.map((e) => `  | ${e.name}Event`).join('\n')}`, '')
  out.push(
    '/** What a batching endpoint receives. */',
    'export interface WebhookBatch {',
    "  type: 'batch'",
    '  count: number',
    '  events: WebhookEvent[]',
    '}',
    '',
  )
  out.push('export type WebhookPayload = WebhookEvent | WebhookBatch', '')
  return out.join('\n')
}

// ---- Go -------------------------------------------------------------------------------------------------

const INITIALISMS = new Set(['Id', 'Url', 'Ip', 'Utm', 'Api', 'Http', 'Json', 'Uuid'])

export function goName(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
  const name = words
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .map((w) => (INITIALISMS.has(w) ? w.toUpperCase() : w))
    .join('')
  return /^[A-Za-z]/.test(name) ? name : `F${name}`
}

interface GoStruct {
  name: string
  doc: string
  fields: { name: string; type: string; tag: string; doc: string }[]
}

class GoWriter {
  structs: GoStruct[] = []
  private used = new Set<string>()

  private unique(name: string): string {
    let candidate = name
    for (let i = 2; this.used.has(candidate); i++) candidate = `${name}${i}`
    this.used.add(candidate)
    return candidate
  }

  reserve(name: string) {
    return this.unique(name)
  }

  struct(schema: Schema, name: string, doc = ''): string {
    const struct: GoStruct = { name: this.unique(name), doc, fields: [] }
    this.structs.push(struct)
    const required = new Set(list(schema.required) as unknown as string[])
    const taken = new Set<string>()
    for (const [key, s] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
      let field = goName(key)
      for (let i = 2; taken.has(field); i++) field = `${goName(key)}${i}`
      taken.add(field)
      const optional = !required.has(key)
      let type = this.type(s, struct.name + field)
      if (optional && !/^(\*|\[\]|map\[|any$)/.test(type)) type = `*${type}`
      const tag = `\`json:"${key}${optional ? ',omitempty' : ''}"\``
      struct.fields.push({ name: field, type, tag, doc: typeof s.description === 'string' ? s.description : '' })
    }
    return struct.name
  }

  type(schema: Schema, name: string): string {
    const { nullable, members } = splitNull(schema)
    if (members.length !== 1) {
      const base = this.scalarUnion(members)
      return base && nullable ? `*${base}` : (base ?? 'any')
    }
    const base = this.single(members[0]!, name)
    return nullable && !/^(\*|\[\]|map\[|any$)/.test(base) ? `*${base}` : base
  }

  /** Unions of literals of one kind (TypeBox enums) become that kind; anything else is any. */
  private scalarUnion(members: Schema[]): string | null {
    if (!members.length) return null
    const kinds = new Set(members.map((m) => this.single(m, '')))
    return kinds.size === 1 ? [...kinds][0]! : null
  }

  private single(schema: Schema, name: string): string {
    if ('const' in schema)
      return typeof schema.const === 'string' ? 'string' : typeof schema.const === 'boolean' ? 'bool' : Number.isInteger(schema.const) ? 'int64' : 'float64'
    if (schema.allOf) {
      const parts = list(schema.allOf)
      if (!parts.every((p) => p.type === 'object')) return 'any'
      const merged: Schema = {
        type: 'object',
        properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})),
        required: parts.flatMap((p) => list(p.required)),
      }
      return this.struct(merged, name)
    }
    switch (schema.type) {
      case 'string':
        return 'string'
      case 'integer':
        return 'int64'
      case 'number':
        return 'float64'
      case 'boolean':
        return 'bool'
      case 'array':
        return `[]${schema.items && typeof schema.items === 'object' ? this.type(schema.items as Schema, `${name}Item`) : 'any'}`
      case 'object': {
        if (schema.properties && Object.keys(schema.properties).length) return this.struct(schema, name)
        const extra =
          Object.values((schema.patternProperties ?? {}) as Record<string, Schema>)[0] ??
          (typeof schema.additionalProperties === 'object' ? (schema.additionalProperties as Schema) : null)
        return `map[string]${extra && Object.keys(extra).length ? this.type(extra, `${name}Value`) : 'any'}`
      }
      default:
        return 'any'
    }
  }
}

function goComment(text: string, pad: string): string {
  return text ? `${pad}// ${text.replace(/\s+/g, ' ')}\n` : ''
}

function renderStruct(s: GoStruct): string {
  const width = Math.max(0, ...s.fields.map((f) => f.name.length))
  const typeWidth = Math.max(0, ...s.fields.map((f) => f.type.length))
  const body = s.fields.map((f) => `${goComment(f.doc, '\t')}\t${f.name.padEnd(width)} ${f.type.padEnd(typeWidth)} ${f.tag}`).join('\n')
  return `${goComment(s.doc, '')}type ${s.name} struct {\n${body}${body ? '\n' : ''}}\n`
}

function go(entries: CatalogueEntry[]): string {
  const w = new GoWriter()
  for (const n of ['WebhookEvent', 'WebhookBatch']) w.reserve(n)
  for (const e of entries) {
    const envelope: Schema = {
      type: 'object',
      required: ['id', 'type', 'timestamp', 'mode', 'data'],
      properties: {
        id: { type: 'string', description: 'evt_…, unique per event' },
        type: { type: 'string', description: `Always "${e.type}"` },
        timestamp: { type: 'string', description: 'ISO 8601' },
        mode: { type: 'string', description: '"live" or "test"' },
        data: e.data,
      },
    }
    w.struct(envelope, `${e.name}Event`, `${e.name}Event: ${e.description}`)
  }
  const structs = w.structs.map(renderStruct).join('\n')
  return [
    '// Code generated by lnk from the event catalogue. DO NOT EDIT.',
    '',
    'package lnkevents',
    '',
    'import "encoding/json"',
    '',
    '// WebhookEvent is any event: read Type, then unmarshal Data into the matching <Name>EventData.',
    'type WebhookEvent struct {',
    '\tID        string          `json:"id"`',
    '\tType      string          `json:"type"`',
    '\tTimestamp string          `json:"timestamp"`',
    '\tMode      string          `json:"mode"`',
    '\tData      json.RawMessage `json:"data"`',
    '}',
    '',
    '// WebhookBatch is what a batching endpoint receives.',
    'type WebhookBatch struct {',
    '\tType   string         `json:"type"`',
    '\tCount  int64          `json:"count"`',
    '\tEvents []WebhookEvent `json:"events"`',
    '}',
    '',
    structs,
  ].join('\n')
}

export function eventTypes(lang: 'ts' | 'go', catalogue: readonly EventDefinition[] = EVENT_CATALOGUE): string {
  const entries = catalogueEntries(catalogue)
  return lang === 'ts' ? typescript(entries) : go(entries)
}
