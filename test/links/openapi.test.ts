// GET /v1/openapi.json describes the links API: its paths and methods, the Link schema with every field of
// spec 2.2, the create body of spec 2.3 and the list parameters of spec 4.1.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { setup, type TestEnv } from '../helpers'
import { CREATE_FIELDS, SPEC_LINK_FIELDS } from './_links'

let env: TestEnv
let doc: any
beforeAll(async () => {
  env = await setup()
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
    const target = schema.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: any, part: string) => node?.[part], doc)
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

test('lists /v1/links, /v1/links/bulk, /v1/links/bulk/delete, /v1/links/upsert, /v1/links/{id} and /v1/links/{id}/resolve with their methods', () => {
  expect(methodsOf('/links')).toEqual(['get', 'post'])
  expect(methodsOf('/links/bulk')).toEqual(['post', 'patch'])
  expect(methodsOf('/links/bulk/delete')).toEqual(['post'])
  expect(methodsOf('/links/upsert')).toEqual(['put'])
  expect(methodsOf('/links/{id}')).toEqual(['get', 'patch', 'delete'])
  expect(
    Object.keys(doc.paths)
      .filter((p) => p.startsWith('/links'))
      .sort(),
  ).toEqual(['/links', '/links/bulk', '/links/bulk/delete', '/links/upsert', '/links/{id}', '/links/{id}/resolve'])
  expect(methodsOf('/links/{id}/resolve')).toEqual(['post'])
})

test('the Link schema has every field of spec 2.2, qr with svg and png, and never the password', () => {
  const link = dataSchema('/links/{id}', 'get', '200')
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
  const link = dataSchema('/links/{id}', 'get', '200')
  expect(dataSchema('/links', 'post', '201')).toEqual(link)
  expect(dataSchema('/links/{id}', 'patch', '200')).toEqual(link)
  const list = dataSchema('/links', 'get', '200')
  expect(list.type).toBe('array')
  expect(resolve(list.items)).toEqual(link)
  const listEnvelope = jsonSchema(doc.paths['/links'].get.responses['200'].content)
  const pagination = resolve(resolve(listEnvelope.properties.meta).properties.pagination)
  expect(Object.keys(pagination.properties).sort()).toEqual(['page', 'perPage', 'total', 'totalPages'])
})

test('the create body has every field of spec 2.3 plus conversionTracking; only destinationUrl is required', () => {
  const create = jsonSchema(doc.paths['/links'].post.requestBody?.content)
  expect(create?.type).toBe('object')
  const props = Object.keys(create.properties)
  for (const field of [...CREATE_FIELDS, 'include']) expect({ field, present: props.includes(field) }).toEqual({ field, present: true })
  expect(create.required).toEqual(['destinationUrl'])
  expect(create.additionalProperties).toBe(false)
})

test('the PATCH body requires nothing, takes include, and states the read-only fields as readOnly', () => {
  const update = jsonSchema(doc.paths['/links/{id}'].patch.requestBody?.content)
  expect(update?.type).toBe('object')
  expect(update.required ?? []).toEqual([])
  expect(update.additionalProperties).toBe(false)
  for (const field of ['include', 'destinationUrl', 'slug', 'title', 'isActive', 'isArchived']) expect(Object.keys(update.properties)).toContain(field)
  const readOnly = Object.keys(update.properties).filter((f) => resolve(update.properties[f]).readOnly === true)
  expect(readOnly.sort()).toEqual(['createdAt', 'hasPassword', 'id', 'isTest', 'lastClickedAt', 'qr', 'shortUrl', 'totalClicks', 'uniqueClicks', 'updatedAt'])
  // Every field of the Link is accepted, so a fetched Link validates as a PATCH body.
  const link = dataSchema('/links/{id}', 'get', '200')
  expect(Object.keys(link.properties).filter((f) => !(f in update.properties))).toEqual([])
  // The writable ones are not marked.
  for (const field of ['destinationUrl', 'slug', 'tags', 'isActive', 'isArchived']) expect(resolve(update.properties[field]).readOnly).toBeUndefined()
})

test('URL fields of the create, bulk and PATCH bodies are published as format uri, with their length limits', () => {
  const create = jsonSchema(doc.paths['/links'].post.requestBody?.content)
  const update = jsonSchema(doc.paths['/links/{id}'].patch.requestBody?.content)
  const bulkItems = resolve(resolve(jsonSchema(doc.paths['/links/bulk'].post.requestBody?.content).properties.links).items)
  // The bulk items are a LinkCreate, or anything else (refused item by item); find the LinkCreate.
  const bulkItem = [bulkItems, ...(bulkItems.anyOf ?? []).map(resolve)].find((s: any) => s?.properties?.destinationUrl)
  for (const [name, body] of [
    ['create', create],
    ['bulk', bulkItem],
    ['update', update],
  ] as const) {
    for (const field of ['destinationUrl', 'fallbackUrl', 'ogImageUrl']) {
      const s = resolve(body.properties[field])
      expect({ name, field, format: s.format, maxLength: s.maxLength }).toEqual({ name, field, format: 'uri', maxLength: 2048 })
    }
    expect(resolve(body.properties.fallbackUrl).type).toEqual(['string', 'null'])
  }
})

test('the bulk body takes a links array of 1 to 1000', () => {
  const bulk = jsonSchema(doc.paths['/links/bulk'].post.requestBody?.content)
  expect(bulk?.type).toBe('object')
  const links = resolve(bulk.properties.links)
  expect(links.type).toBe('array')
  expect(links.minItems).toBe(1)
  expect(links.maxItems).toBe(1000)
  expect(bulk.required).toContain('links')
})

test('the list documents include, page, perPage and search', () => {
  const names = (doc.paths['/links'].get.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name)
  for (const name of ['include', 'page', 'perPage', 'search']) expect(names).toContain(name)
})

test('every links operation is bearer-secured', () => {
  for (const [path, methods] of [
    ['/links', ['get', 'post']],
    ['/links/bulk', ['post']],
    ['/links/{id}', ['get', 'patch', 'delete']],
  ] as const) {
    for (const m of methods) {
      const security = doc.paths[path][m].security ?? doc.security
      expect({ path, m, security }).toEqual({ path, m, security: [{ bearer: [] }] })
    }
  }
})
