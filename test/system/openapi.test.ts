// GET /v1/openapi.json: a valid OpenAPI 3.1 document that lists every route, with bearer security on the
// authenticated ones, tags everywhere, and schemas that are valid JSON Schema 2020-12.
import SwaggerParser from '@apidevtools/swagger-parser'
import Ajv2020 from 'ajv/dist/2020'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { CONSOLE_PATH } from '../../src/modules/console/page'
import { DOCS_PATH, openapiDocs, PUBLISHED_PARAMS, SPEC_PATH } from '../../src/modules/system/openapi'
import { conformance } from '../conformance'
import { setup, type TestEnv } from '../helpers'

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
// Public by the spec or the issues: the QR renderer answers image URLs that must work without a key; the
// conversion beacon is called from visitors' browsers (spec section 5 rule 4).
// As the document names them: paths under /v1 relative to its server, LNK_BASE_URL/v1.
const PUBLIC_V1 = ['/openapi.json', '/qr/render', '/conversions', '/templates', '/templates/{slug}']
const PUBLIC_PATHS = ['/healthz', '/readyz', '/metrics', ...PUBLIC_V1]

let env: TestEnv
let doc: any

beforeAll(async () => {
  env = await setup()
  const res = await env.request(SPEC_PATH)
  expect(res.status).toBe(200)
  doc = await res.json()
})
afterAll(() => env.cleanup())

/**
 * Elysia's `/v1/links/:id` as OpenAPI's `/v1/links/{id}` (an optional `:id?` documented with the parameter); a
 * trailing slash, which Elysia serves either way, is documented without.
 */
/** A route's path as the document names it (a few path parameters are published under another name). */
function toOpenApiPath(path: string) {
  const templated = path.replace(/:([^/?]+)\??/g, '{$1}').replace(/(.)\/+$/, '$1')
  const renames = PUBLISHED_PARAMS[templated] ?? {}
  return templated.replace(/\{(\w+)\}/g, (whole, name: string) => (renames[name] ? `{${renames[name]}}` : whole)).replace(/^\/v1(?=\/)/, '')
}

/** The routes a document must describe: all but the docs page and its script, HEAD and OPTIONS. */
/** Pages for people, not API operations: the docs page and the console (with their scripts). */
const isPageForPeople = (path: string) => [DOCS_PATH, CONSOLE_PATH].some((page) => path === page || path.startsWith(`${page}/`))

function documentedRoutes(app: { routes: { method: string; path: string }[] }) {
  return app.routes.filter((r) => !['HEAD', 'OPTIONS'].includes(r.method) && !isPageForPeople(r.path))
}

function operations(d: any): { path: string; method: string; op: any }[] {
  return Object.entries(d.paths as Record<string, any>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })),
  )
}

/** Every schema the document holds, with where it is, for JSON Schema checks. */
function schemas(d: any): { at: string; schema: unknown }[] {
  const found: { at: string; schema: unknown }[] = []
  for (const [name, schema] of Object.entries(d.components?.schemas ?? {})) found.push({ at: `components.schemas.${name}`, schema })
  for (const [name, p] of Object.entries<any>(d.components?.parameters ?? {})) found.push({ at: `components.parameters.${name}`, schema: p.schema })
  for (const { path, method, op } of operations(d)) {
    const at = `${method.toUpperCase()} ${path}`
    for (const p of op.parameters ?? []) if (!p.$ref) found.push({ at: `${at} parameter ${p.name}`, schema: p.schema })
    for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) found.push({ at: `${at} body ${type}`, schema: media.schema })
    for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
      for (const [type, media] of Object.entries<any>(response.content ?? {})) found.push({ at: `${at} ${status} ${type}`, schema: media.schema })
    }
  }
  return found
}

describe('GET /v1/openapi.json', () => {
  test('answers JSON without a key', async () => {
    const res = await env.request(SPEC_PATH)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    expect(doc.info.title).toBe('lnk API')
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/)
  })

  test('is a valid OpenAPI 3.1 document', async () => {
    await SwaggerParser.validate(structuredClone(doc))
  })

  test('holds only valid JSON Schema 2020-12 schemas (no Elysia-only types or keywords)', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false })
    const problems: string[] = []
    for (const { at, schema } of schemas(doc)) {
      if (schema === undefined) problems.push(`${at}: no schema`)
      else if (!ajv.validateSchema(schema as object)) problems.push(`${at}: ${ajv.errorsText(ajv.errors)}`)
    }
    expect(problems).toEqual([])
    const text = JSON.stringify(doc)
    expect(text).not.toContain('"elysiaMeta"')
    expect(text).not.toContain('"nullable"')
  })

  // The success response is 200, or 201 for a route that creates something (POST /v1/api-keys).
  test('describes every route, each with a schema for its success response', () => {
    const missing: string[] = []
    for (const route of documentedRoutes(env.app)) {
      const path = toOpenApiPath(route.path)
      const method = route.method === 'ALL' ? 'get' : route.method.toLowerCase()
      const op = doc.paths[path]?.[method]
      if (!op) {
        missing.push(`${route.method} ${route.path}: not in paths`)
        continue
      }
      // A 204 has no body to describe.
      if (op.responses?.['204'] && !op.responses['200'] && !op.responses['201']) continue
      const status = ['200', '201'].find((s) => op.responses?.[s])
      const content = status && op.responses[status].content
      const schema = content && Object.values<any>(content)[0]?.schema
      if (!schema || typeof schema !== 'object') missing.push(`${route.method} ${route.path}: no schema for its 200 (or 201) response`)
    }
    expect(missing).toEqual([])
    expect(documentedRoutes(env.app).length).toBeGreaterThanOrEqual(PUBLIC_PATHS.length + 1)
  })

  test('leaves the docs page, the console and their scripts out', () => {
    expect(env.app.routes.some((r) => r.path === DOCS_PATH)).toBe(true)
    expect(env.app.routes.some((r) => r.path === CONSOLE_PATH)).toBe(true)
    expect(Object.keys(doc.paths).filter(isPageForPeople)).toEqual([])
  })

  test('declares bearer security on every /v1 operation but the public ones', () => {
    const unsecured = operations(doc)
      .filter(({ path }) => !doc.paths[path].servers && !PUBLIC_V1.includes(path))
      .filter(({ op }) => !Bun.deepEquals(op.security, [{ bearer: [] }]))
      .map(({ path, method }) => `${method.toUpperCase()} ${path}`)
    expect(unsecured).toEqual([])
  })

  test('marks the public routes as needing no credential', () => {
    for (const path of PUBLIC_PATHS) {
      const op = doc.paths[path]?.get ?? doc.paths[path]?.post
      expect({ path, security: op?.security }).toEqual({ path, security: [] })
    }
  })

  test("merges the permission macro with the route's own detail", () => {
    const me = doc.paths['/me'].get
    expect(me.summary).toBe('Who am I')
    expect(me.tags).toEqual(['Identity'])
    expect(me.security).toEqual([{ bearer: [] }])
    expect(me['x-permission']).toBe('authenticated')
    for (const { path, method, op } of operations(doc)) {
      if (op['x-permission'] !== undefined)
        expect({ at: `${method} ${path}`, security: op.security }).toEqual({ at: `${method} ${path}`, security: [{ bearer: [] }] })
    }
  })

  test('says in the description which permission an operation needs', () => {
    for (const { op } of operations(doc)) {
      const permission = op['x-permission']
      if (typeof permission === 'string' && permission !== 'authenticated') expect(op.description).toContain(`Needs the \`${permission}\` permission.`)
    }
    expect(doc.paths['/me'].get.description).not.toContain('permission.')
  })

  test('tags every operation, with every tag declared at the top', () => {
    const declared = new Set(doc.tags.map((tag: { name: string }) => tag.name))
    for (const { path, method, op } of operations(doc)) {
      expect({ at: `${method} ${path}`, tagged: Array.isArray(op.tags) && op.tags.length > 0 }).toEqual({ at: `${method} ${path}`, tagged: true })
      for (const tag of op.tags) expect(declared.has(tag)).toBe(true)
    }
  })

  test('gives every operation a unique, identifier-like operationId', () => {
    const ids = operations(doc).map(({ op }) => op.operationId)
    for (const id of ids) expect(id).toMatch(/^[A-Za-z][A-Za-z0-9_]*$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  test('defines the bearer scheme', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.security).toEqual([{ bearer: [] }])
  })

  test('states the error envelope once and refers to it', () => {
    expect(doc.components.schemas.Error).toMatchObject({ title: 'Error', type: 'object' })
    expect(doc.paths['/me'].get.responses['401'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' })
    expect(doc.paths['/me'].get.responses['401'].description).toBe('Unauthorized')
  })
})

describe('what generated clients and validators read', () => {
  const schemaOf = (ref: any) => (ref?.$ref ? doc.components.schemas[ref.$ref.split('/').pop()] : ref)
  const refNames = (op: any) => (op.parameters ?? []).filter((p: any) => p.$ref).map((p: any) => p.$ref.split('/').pop())

  test('is served exactly as the test suite validates against it', () => {
    expect(doc).toEqual(conformance().doc as any)
  })

  test('names LNK_BASE_URL/v1 as its server and states paths relative to it, as the spec says', async () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: 'http://localhost:8080/v1' })])
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      expect(path.startsWith('/v1/')).toBe(false)
      // The few paths outside /v1 name the origin as their own server.
      if (['/healthz', '/readyz', '/metrics', '/.well-known/lnk/{token}', '/internal/tls/ask'].includes(path))
        expect(item.servers).toEqual([{ url: 'http://localhost:8080' }])
      else expect(item.servers).toBeUndefined()
    }
    const other = await setup({ env: { LNK_BASE_URL: 'https://api.example.com' } })
    try {
      const served = (await (await other.request(SPEC_PATH)).json()) as any
      expect(served.servers[0].url).toBe('https://api.example.com/v1')
    } finally {
      await other.cleanup()
    }
  })

  test('gives enums the type of their values, with null among them where the type allows it', () => {
    const link = doc.components.schemas.Link
    expect(link.properties.redirectStatus).toMatchObject({ type: 'integer', enum: [301, 302, 307, 308] })
    expect(link.properties.twitterCard).toMatchObject({ type: ['string', 'null'], enum: ['summary', 'summary_large_image', 'player', null] })
    const problems: string[] = []
    const walk = (s: any, at: string) => {
      if (!s || typeof s !== 'object') return
      if (Array.isArray(s.enum)) {
        const types = Array.isArray(s.type) ? s.type : [s.type]
        for (const v of s.enum) {
          const t = v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v
          if (!types.includes(t) && !(t === 'integer' && types.includes('number')))
            problems.push(`${at}: ${JSON.stringify(v)} is not of type ${JSON.stringify(s.type)}`)
        }
        if (types.includes('null') && !s.enum.includes(null)) problems.push(`${at}: nullable enum without null`)
      }
      for (const [k, v] of Object.entries(s)) if (typeof v === 'object') walk(v, `${at}.${k}`)
    }
    walk(doc, '#')
    expect(problems).toEqual([])
  })

  test('marks no parameter with a default as required', () => {
    const required = operations(doc).flatMap(({ path, method, op }) =>
      (op.parameters ?? []).filter((p: any) => p.required && p.schema && 'default' in p.schema).map((p: any) => `${method} ${path} ${p.name}`),
    )
    expect(required).toEqual([])
    const perPage = doc.paths['/links'].get.parameters.find((p: any) => p.name === 'perPage')
    expect(perPage).toMatchObject({ required: false, schema: { default: 25, maximum: 100 } })
  })

  test('marks the bodies the server does without as optional', () => {
    expect(doc.paths['/links/{id}'].patch.requestBody.required).toBe(false)
    expect(doc.paths['/webhooks/{id}/rotate-secret'].post.requestBody.required).toBe(false)
    expect(doc.paths['/links'].post.requestBody.required).toBe(true)
  })

  test('lists text/plain beside JSON for the conversion beacon, and no form encodings anywhere', () => {
    expect(Object.keys(doc.paths['/conversions'].post.requestBody.content).sort()).toEqual(['application/json', 'text/plain'])
    for (const { op } of operations(doc)) {
      for (const type of Object.keys(op.requestBody?.content ?? {})) expect(['application/json', 'text/plain']).toContain(type)
    }
  })

  test('declares the headers it reads as parameters: Service-Version everywhere, X-Workspace-Id with a key, Idempotency-Key where honoured', () => {
    expect(doc.components.parameters.ServiceVersion).toMatchObject({ name: 'Service-Version', in: 'header', required: false })
    expect(doc.components.parameters.WorkspaceId).toMatchObject({ name: 'X-Workspace-Id', in: 'header', required: false })
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false })
    for (const { path, method, op } of operations(doc)) {
      if (doc.paths[path].servers) continue
      const refs = refNames(op)
      expect({ at: `${method} ${path}`, version: refs.includes('ServiceVersion') }).toEqual({ at: `${method} ${path}`, version: true })
      expect({ at: `${method} ${path}`, workspace: refs.includes('WorkspaceId') }).toEqual({
        at: `${method} ${path}`,
        workspace: op['x-permission'] !== undefined,
      })
    }
    for (const [path, method] of [
      ['/links', 'post'],
      ['/links/bulk', 'post'],
      ['/api-keys', 'post'],
      ['/webhooks', 'post'],
    ] as const) {
      expect({ at: `${method} ${path}`, refs: refNames(doc.paths[path][method]) }).toEqual({
        at: `${method} ${path}`,
        refs: expect.arrayContaining(['IdempotencyKey']),
      })
    }
    expect(refNames(doc.paths['/links'].get)).not.toContain('IdempotencyKey')
  })

  test('says every status a /v1 operation does not list answers the error envelope', () => {
    for (const { path, op } of operations(doc)) {
      if (doc.paths[path].servers) continue
      expect(schemaOf(op.responses.default?.content['application/json'].schema)?.title).toBe('Error')
    }
  })
})

describe('the document polish, on what Elysia emits for its coercing types', () => {
  const Thing = t.Object({ id: t.String(), count: t.Integer() }, { title: 'Thing' })
  const app = new Elysia().use(openapiDocs()).group('/v1', (v1) =>
    v1.use(
      new Elysia({ tags: ['Things'] })
        .get('/things', () => ({}) as any, {
          query: t.Object({
            page: t.Optional(t.Numeric({ minimum: 1 })),
            perPage: t.Optional(t.Integer({ maximum: 100 })),
            archived: t.Optional(t.BooleanString()),
            ids: t.Optional(t.ArrayString(t.String())),
            filter: t.Optional(t.ObjectString({ tag: t.String() })),
          }),
          response: { 200: t.Object({ items: t.Array(Thing), asOf: t.Date(), cap: t.Nullable(t.Integer()) }) },
          detail: { summary: 'List things', security: [{ bearer: [] }] },
        })
        .post('/things/:id', () => ({}) as any, {
          params: t.Object({ id: t.String() }),
          body: t.Object({ count: t.Integer(), gone: t.Optional(t.Undefined()) }),
          response: { 200: Thing, 204: t.Void() },
          detail: { summary: 'Change a thing', security: [{ bearer: [] }] },
        }),
    ),
  )
  let polished: any

  beforeAll(async () => {
    polished = await (await app.handle(new Request(`http://localhost${SPEC_PATH}`))).json()
  })

  test('is still valid OpenAPI 3.1', async () => {
    await SwaggerParser.validate(structuredClone(polished))
  })

  test('states the real type of coercing query parameters', () => {
    const params = Object.fromEntries(polished.paths['/things'].get.parameters.map((p: any) => [p.name, p.schema]))
    expect(params.page).toEqual({ type: 'number', minimum: 1 })
    expect(params.perPage).toEqual({ type: 'integer', maximum: 100 })
    expect(params.archived).toEqual({ type: 'boolean' })
    expect(params.ids).toEqual({ type: 'array', items: { type: 'string' } })
    expect(params.filter).toMatchObject({ type: 'object', properties: { tag: { type: 'string' } } })
  })

  test('documents dates as date-time strings and drops non-JSON properties', () => {
    const ok = polished.paths['/things'].get.responses['200'].content['application/json'].schema
    expect(ok.properties.asOf).toEqual({ type: 'string', format: 'date-time' })
    expect(ok.properties.cap).toEqual({ anyOf: [{ type: 'integer' }, { type: 'null' }] })
    const post = polished.paths['/things/{id}'].post
    expect(Object.keys(post.requestBody.content)).toEqual(['application/json'])
    expect(post.requestBody.content['application/json'].schema.properties).toEqual({ count: { type: 'integer' } })
  })

  test('gives a body-less response no content', () => {
    expect(polished.paths['/things/{id}'].post.responses['204']).toEqual({ description: 'No Content' })
  })

  test('moves a schema used twice into components and declares an undeclared tag', () => {
    expect(polished.components.schemas.Thing).toMatchObject({ title: 'Thing', properties: { count: { type: 'integer' } } })
    expect(polished.paths['/things/{id}'].post.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Thing' })
    expect(polished.tags.map((tag: any) => tag.name)).toContain('Things')
  })
})
