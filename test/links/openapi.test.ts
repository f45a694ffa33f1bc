// GET /v1/openapi.json describes the links API: its paths and methods, the Link schema with every field of
// spec 2.2, the create body of spec 2.3 and the list parameters of spec 4.1.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { setup, type TestEnv } from '../helpers'
import { CREATE_FIELDS, SPEC_LINK_FIELDS } from './_links'

let env: TestEnv
let doc: any
beforeAll(async () => {
  env = setup()
  const res = await env.request('/v1/openapi.json')
  expect(res.status).toBe(200)
  doc = await res.json()
})
afterAll(() => env.cleanup())

const METHODS = ['get', 'put', 'post', 'patch', 'delete']

/** Follows $ref (and a single-schema allOf) to the schema it names. */
function resolve(schema: any, depth = 0): any {
  if (!schema || depth > 10) return schema
  if (typeof schema.$ref === 'string') {
    const target = schema.$ref.replace(/^#\//, '').split('/').reduce((node: any, part: string) => node?.[part], doc)
    return resolve(target, depth + 1)
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return resolve(schema.allOf[0], depth + 1)
  return schema
}

const jsonSchema = (content: any) => resolve(content?.['application/json']?.schema)

/** The `data` schema of an operation's success response. */
function dataSchema(path: string, method: string, status: string) {
  const envelope = jsonSchema(doc.paths[path]?.[method]?.responses?.[status]?.content)
  return resolve(envelope?.properties?.data)
}

const methodsOf = (path: string) => METHODS.filter((m) => doc.paths[path]?.[m])

test('lists /v1/links, /v1/links/bulk and /v1/links/{id} with their methods', () => {
  expect(methodsOf('/v1/links')).toEqual(['get', 'post'])
  expect(methodsOf('/v1/links/bulk')).toEqual(['post'])
  expect(methodsOf('/v1/links/{id}')).toEqual(['get', 'patch', 'delete'])
  expect(Object.keys(doc.paths).filter((p) => p.startsWith('/v1/links')).sort()).toEqual(['/v1/links', '/v1/links/bulk', '/v1/links/{id}'])
})

test('the Link schema has every field of spec 2.2, qr with svg and png, and never the password', () => {
  const link = dataSchema('/v1/links/{id}', 'get', '200')
  expect(link?.type).toBe('object')
  const props = Object.keys(link.properties)
  for (const field of [...SPEC_LINK_FIELDS, 'qr']) expect({ field, present: props.includes(field) }).toEqual({ field, present: true })
  expect(props).not.toContain('password')
  expect(props).not.toContain('passwordHash')
  expect(resolve(link.properties.id).format).toBe('uuid')
  expect(resolve(link.properties.tags).type).toBe('array')
  for (const field of ['totalClicks', 'uniqueClicks']) expect(resolve(link.properties[field]).type).toBe('integer')
  for (const field of ['isActive', 'isArchived', 'isTest']) expect(resolve(link.properties[field]).type).toBe('boolean')
  const qr = resolve(link.properties.qr)
  expect(Object.keys(qr.properties).sort()).toEqual(['png', 'svg'])
})

test('every links operation answers the same Link schema', () => {
  const link = dataSchema('/v1/links/{id}', 'get', '200')
  expect(dataSchema('/v1/links', 'post', '201')).toEqual(link)
  expect(dataSchema('/v1/links/{id}', 'patch', '200')).toEqual(link)
  const list = dataSchema('/v1/links', 'get', '200')
  expect(list.type).toBe('array')
  expect(resolve(list.items)).toEqual(link)
  const listEnvelope = jsonSchema(doc.paths['/v1/links'].get.responses['200'].content)
  const pagination = resolve(resolve(listEnvelope.properties.meta).properties.pagination)
  expect(Object.keys(pagination.properties).sort()).toEqual(['page', 'perPage', 'total', 'totalPages'])
})

test('the create body has every field of spec 2.3 plus conversionTracking; only destinationUrl is required', () => {
  const create = jsonSchema(doc.paths['/v1/links'].post.requestBody?.content)
  expect(create?.type).toBe('object')
  const props = Object.keys(create.properties)
  for (const field of [...CREATE_FIELDS, 'include']) expect({ field, present: props.includes(field) }).toEqual({ field, present: true })
  expect(create.required).toEqual(['destinationUrl'])
  expect(create.additionalProperties).toBe(false)
})

test('the PATCH body requires nothing and refuses include', () => {
  const update = jsonSchema(doc.paths['/v1/links/{id}'].patch.requestBody?.content)
  expect(update?.type).toBe('object')
  expect(update.required ?? []).toEqual([])
  expect(Object.keys(update.properties)).not.toContain('include')
  for (const field of ['destinationUrl', 'slug', 'title', 'isActive', 'isArchived']) expect(Object.keys(update.properties)).toContain(field)
})

test('the bulk body takes a links array of 1 to 1000', () => {
  const bulk = jsonSchema(doc.paths['/v1/links/bulk'].post.requestBody?.content)
  expect(bulk?.type).toBe('object')
  const links = resolve(bulk.properties.links)
  expect(links.type).toBe('array')
  expect(links.minItems).toBe(1)
  expect(links.maxItems).toBe(1000)
  expect(bulk.required).toContain('links')
})

test('the list documents include, page, perPage and search', () => {
  const names = (doc.paths['/v1/links'].get.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name)
  for (const name of ['include', 'page', 'perPage', 'search']) expect(names).toContain(name)
})

test('every links operation is bearer-secured', () => {
  for (const [path, methods] of [['/v1/links', ['get', 'post']], ['/v1/links/bulk', ['post']], ['/v1/links/{id}', ['get', 'patch', 'delete']]] as const) {
    for (const m of methods) {
      const security = doc.paths[path][m].security ?? doc.security
      expect({ path, m, security }).toEqual({ path, m, security: [{ bearer: [] }] })
    }
  }
})
