// Steps 1 and 5 of polishDocument (openapi-polish.ts): each schema tidied into valid JSON Schema 2020-12,
// and the titled schemas that repeat moved to components.schemas.
import { DOCUMENT_ONLY } from '../../http/published-schema'
import { isObj, mapSubschemas, type Obj, type OpenApiDoc, transformSchemas } from './openapi-document'

const COERCED_STRING_FORMATS = new Set(['numeric', 'integer', 'boolean', 'ArrayString', 'ObjectString'])
const NOT_JSON_TYPES = new Set(['undefined', 'void', 'Date', 'Uint8Array', 'function', 'symbol', 'bigint'])

/** The string branch Elysia adds to a coercing type, next to the real one. */
const isCoercionBranch = (s: unknown) => isObj(s) && s.type === 'string' && COERCED_STRING_FORMATS.has(s.format)

/** t.Date's union: a date-time string, a date string, an epoch number; JSON responses carry the first. */
function isElysiaDate(members: unknown[]) {
  const kind = (s: unknown) => (isObj(s) ? (s.type === 'string' ? s.format : s.type) : undefined)
  return members.some((m) => kind(m) === 'date-time') && members.every((m) => ['date-time', 'date', 'number', 'Date'].includes(kind(m)))
}

/**
 * The generator writes every union of literals as `type: string` whatever the literals are (so 301 | 302
 * became a string enum no value satisfies), and a nullable one without null among its values. The type is
 * the literals' own, and null is a value where the type allows it.
 */
function fixEnumType(schema: Obj) {
  const declared: unknown[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []
  if (declared.includes('null') && !schema.enum.includes(null)) schema.enum = [...schema.enum, null]
  const types = [...new Set(schema.enum.map((v: unknown) => (v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v)))]
  schema.type = types.length === 1 ? types[0] : types
}

/** Step 1, on one schema and everything inside it. */
export function tidySchema(schema: unknown): unknown {
  if (!isObj(schema)) return schema
  const out = mapSubschemas(schema, tidySchema)
  delete out.elysiaMeta
  if (isObj(out[DOCUMENT_ONLY])) Object.assign(out, out[DOCUMENT_ONLY])
  delete out[DOCUMENT_ONLY]
  delete out.nullable
  // A record's pattern matches every name, so additionalProperties says nothing; Elysia adds it to the schema
  // object while it compiles a route's validator, and the document would depend on which routes ran first.
  if (isObj(out.patternProperties) && Object.keys(out.patternProperties).length === 1 && '^(.*)$' in out.patternProperties) delete out.additionalProperties
  if (Array.isArray(out.enum)) fixEnumType(out)
  if (isObj(out.properties)) {
    for (const [name, prop] of Object.entries(out.properties)) {
      if (isObj(prop) && NOT_JSON_TYPES.has(prop.type)) {
        delete out.properties[name]
        if (Array.isArray(out.required)) out.required = out.required.filter((r: string) => r !== name)
      }
    }
  }
  for (const key of ['anyOf', 'oneOf']) {
    if (!Array.isArray(out[key])) continue
    let members: unknown[] = out[key]
    if (members.length > 1 && members.some((m) => !isCoercionBranch(m))) members = members.filter((m) => !isCoercionBranch(m))
    if (members.length > 1 && isElysiaDate(members)) members = [{ type: 'string', format: 'date-time' }]
    if (members.length === 1 && isObj(members[0])) {
      // One type left: it replaces the union; the union's own annotations (description, minimum, …) stay.
      const { [key]: _union, ...annotations } = out
      return tidySchema({ ...members[0], ...annotations })
    }
    out[key] = members
  }
  return out
}

/** Step 5: hoist titled schemas that occur more than once, identically, into components.schemas. */
export function hoistRepeatedSchemas(doc: OpenApiDoc) {
  const seen = new Map<string, { json: string; count: number; same: boolean; schema: Obj }>()
  const collect = (s: unknown): unknown => {
    if (!isObj(s)) return s
    mapSubschemas(s, collect)
    if (typeof s.title === 'string' && !('$ref' in s)) {
      const json = JSON.stringify(s)
      const entry = seen.get(s.title)
      if (!entry) seen.set(s.title, { json, count: 1, same: true, schema: s })
      else {
        entry.count++
        entry.same &&= entry.json === json
      }
    }
    return s
  }
  transformSchemas(doc, collect)
  const hoisted = new Set(
    [...seen].filter(([name, e]) => e.count > 1 && e.same && /^[A-Za-z0-9._-]+$/.test(name) && !(name in doc.components.schemas)).map(([name]) => name),
  )
  if (hoisted.size === 0) return
  const replace = (s: unknown): unknown => {
    if (!isObj(s)) return s
    if (typeof s.title === 'string' && hoisted.has(s.title)) return { $ref: `#/components/schemas/${s.title}` }
    return mapSubschemas(s, replace)
  }
  transformSchemas(doc, replace)
  for (const name of hoisted) doc.components.schemas[name] = mapSubschemas(seen.get(name)!.schema, replace)
}
