// The shape of the OpenAPI document the platform builds, and the walks over its schemas that the polishing
// passes share (openapi-polish.ts, openapi-schemas.ts, openapi-paths.ts).

export type Obj = Record<string, any>

export type PathItem = Record<string, Obj>
export interface OpenApiDoc {
  openapi: string
  info: Obj
  servers: { url: string; description?: string }[]
  tags: { name: string; description?: string }[]
  security: Obj[]
  paths: Record<string, PathItem>
  components: { securitySchemes: Obj; schemas: Record<string, unknown>; parameters: Record<string, Obj> }
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

// Where a schema holds other schemas (JSON Schema 2020-12): one schema, a list of them, or a map of them.
const ONE_SUBSCHEMA = [
  'items',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'contentSchema',
]
const LIST_SUBSCHEMAS = ['anyOf', 'oneOf', 'allOf', 'prefixItems']
const MAP_SUBSCHEMAS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']

/** A copy of `schema` with `fn` applied to each immediate subschema. */
export function mapSubschemas(schema: Obj, fn: (s: unknown) => unknown): Obj {
  const out: Obj = { ...schema }
  for (const key of ONE_SUBSCHEMA) if (isObj(out[key])) out[key] = fn(out[key])
  for (const key of LIST_SUBSCHEMAS) if (Array.isArray(out[key])) out[key] = out[key].map(fn)
  for (const key of MAP_SUBSCHEMAS) if (isObj(out[key])) out[key] = Object.fromEntries(Object.entries(out[key]).map(([k, v]) => [k, fn(v)]))
  return out
}

/** Applies `fn` to every top-level schema slot of the document (parameters, bodies, responses, components). */
export function transformSchemas(doc: OpenApiDoc, fn: (s: unknown) => unknown) {
  const media = (content: unknown) => {
    if (isObj(content)) for (const m of Object.values(content)) if (isObj(m) && 'schema' in m) m.schema = fn(m.schema)
  }
  for (const item of Object.values(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method]
      if (!isObj(op)) continue
      for (const p of op.parameters ?? []) {
        if (isObj(p) && 'schema' in p) p.schema = fn(p.schema)
        if (isObj(p)) media(p.content)
      }
      if (isObj(op.requestBody)) media(op.requestBody.content)
      for (const r of Object.values(op.responses ?? {})) {
        if (!isObj(r)) continue
        media(r.content)
        for (const h of Object.values(r.headers ?? {})) if (isObj(h) && 'schema' in h) h.schema = fn(h.schema)
      }
    }
  }
  for (const [name, s] of Object.entries(doc.components.schemas)) doc.components.schemas[name] = fn(s)
}
