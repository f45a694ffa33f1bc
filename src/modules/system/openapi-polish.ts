// polishDocument: what Elysia and its generator emit that is not valid (or not helpful) OpenAPI 3.1, put right;
// the passes of steps 1 and 5 are in openapi-schemas.ts, of steps 6 and 7 in openapi-paths.ts.
//
//  1. Schemas. Elysia's coercing types are unions with a string branch (t.Numeric and t.Integer accept "5",
//     t.BooleanString "true", t.ArrayString/t.ObjectString JSON text; t.Date also a date or epoch number). The
//     document states the value's real type instead. `elysiaMeta` (Elysia's marker) and `nullable` (OpenAPI 3.0;
//     3.1 uses type: [..., 'null']) are dropped, and so are properties typed 'undefined' or 'void', which are
//     not JSON Schema types. A union of literals gets its literals' own type (the generator says string even
//     for 301 | 302), and a nullable one lists null among its values. Keywords a schema carries under
//     DOCUMENT_ONLY (see documentOnly) join the schema's own.
//  2. Responses. A t.Void()/t.Undefined() response (e.g. 204) comes out as a malformed `content`: removed, as
//     the response has no body. The generic "Response for status N" description becomes the HTTP reason phrase.
//  3. Operations. Request bodies: lnk reads JSON only (and the beacon text/plain), so the form encodings the
//     generator adds beside JSON are removed; a body declared optional is not required. A query parameter with
//     a default is not required. Every /v1 operation declares the headers it reads (Service-Version, and
//     X-Workspace-Id where a key is needed, Idempotency-Key where `x-idempotent` says so) and a `default`
//     response: the error envelope, which any status it does not list (405, 413, 429, 500…) carries. The
//     permission a route needs (x-permission, from the macro) is also said in its description.
//  4. Tags: a tag an operation uses but the top-level list lacks is declared (name only; describe it in
//     OPENAPI_TAGS), and Operations and Documentation go last, after the tags of the API's own resources.
//  5. A titled schema used more than once, identically (such as the error envelope, "Error"), moves to
//     components.schemas and is referenced, so the document states it once and the page lists it as a model.
//  6. Paths and operation ids. A module's `.get('/')` under its prefix comes out as `/v1/api-keys/`; Elysia
//     serves it with or without the slash, and the document names it as the spec does, without. Ids generated
//     from a path (getV1Api-keys) become identifiers (getV1ApiKeys), which client generators need.
//  7. Paths are relative to the server LNK_BASE_URL/v1 (the spec's {base_url}); see relativePaths. A path
//     parameter the router must name otherwise is published under the documents' name (PUBLISHED_PARAMS).
import { STATUS_CODES } from 'node:http'
import { ErrorEnvelope } from '../../http/envelope'
import { HTTP_METHODS, isObj, type OpenApiDoc, transformSchemas } from './openapi-document'
import { relativePaths, tidyPathsAndIds } from './openapi-paths'
import { hoistRepeatedSchemas, tidySchema } from './openapi-schemas'

const TRAILING_TAGS = ['Operations', 'Documentation']
// What the generator lists beside JSON for an object body; lnk reads JSON (and the beacon text/plain) only.
const GENERATED_FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data']

export function polishDocument(doc: OpenApiDoc): OpenApiDoc {
  tidyPathsAndIds(doc)
  transformSchemas(doc, tidySchema)

  const declared = new Set(doc.tags.map((tag) => tag.name))
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method]
      if (!isObj(op)) continue
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (!isObj(response)) continue
        if (isObj(response.content)) {
          const media = Object.entries(response.content).filter(([type, m]) => type.includes('/') && isObj(m))
          if (media.length) response.content = Object.fromEntries(media)
          else delete response.content
        }
        if (typeof response.description !== 'string' || /^Response for status \d+$/.test(response.description)) {
          response.description = STATUS_CODES[status] ?? `Status ${status}`
        }
      }
      const body = op.requestBody
      if (isObj(body) && isObj(body.content)) {
        for (const type of GENERATED_FORM_TYPES) if (body.content['application/json']) delete body.content[type]
      }
      for (const p of op.parameters ?? []) {
        // A parameter with a default may be left out: it is not required, whatever the generator says.
        if (isObj(p) && isObj(p.schema) && 'default' in p.schema) p.required = false
      }
      if (path.startsWith('/v1/')) {
        const refs = ['ServiceVersion']
        if (op['x-permission'] !== undefined) refs.push('WorkspaceId')
        if (op['x-idempotent'] === true) refs.push('IdempotencyKey')
        op.parameters = [...(op.parameters ?? []), ...refs.map((name) => ({ $ref: `#/components/parameters/${name}` }))]
        // Any status a route does not list (405, 413, 429, 500…) still answers the error envelope.
        op.responses = {
          ...op.responses,
          default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        }
      }
      const permission = op['x-permission']
      if (typeof permission === 'string' && permission !== 'authenticated') {
        op.description = `${op.description ? `${op.description}\n\n` : ''}Needs the \`${permission}\` permission.`
      }
      for (const tag of op.tags ?? []) {
        if (!declared.has(tag)) {
          declared.add(tag)
          doc.tags.push({ name: tag })
        }
      }
    }
  }

  const last = (tag: { name: string }) => Number(TRAILING_TAGS.includes(tag.name))
  doc.tags.sort((a, b) => last(a) - last(b))

  hoistRepeatedSchemas(doc)
  if (!isObj(doc.components.schemas.Error)) doc.components.schemas.Error = tidySchema(JSON.parse(JSON.stringify(ErrorEnvelope)))
  relativePaths(doc)
  return doc
}
