// Bridge pages' request rules as the OpenAPI document states them. POST /bridge-pages/{pageId}/blocks: `type` is
// an enum made from the block catalogue, the same names GET /bridge-pages/block-types lists and the server's 400
// unknown_block_type names. POST /bridge-pages: templateSlug an enum of the built-in templates, not together
// with savedTemplateId, and ogImageUrl an http(s) URL. Each value gets the same verdict from the document and
// from the server.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { BLOCK_TYPES } from '../../src/modules/pages/blocks'
import { BUILTIN_TEMPLATES } from '../../src/modules/pages/templates'
import { conformance } from '../conformance'
import { body, bootstrapAccount, setup, type TestEnv } from '../helpers'

let env: TestEnv
let key: string

beforeAll(async () => {
  env = await setup()
  key = (await bootstrapAccount(env.rt, 'Stated block rules')).apiKey.key
})
afterAll(() => env.cleanup())

const NAMES = BLOCK_TYPES.map((b) => b.type)

test('type: the block types of the catalogue, in the document, the block-types list and the server alike', async () => {
  const doc = conformance().doc
  expect(doc.components.schemas.BlockTypeName).toMatchObject({ type: 'string', enum: NAMES })
  expect(doc.paths['/bridge-pages/{pageId}/blocks']!.post!.requestBody.content['application/json'].schema.properties.type).toEqual({
    $ref: '#/components/schemas/BlockTypeName',
  })
  const listed = await body(await env.request('/v1/bridge-pages/block-types', { key }))
  expect(listed.data.map((b: { type: string }) => b.type)).toEqual(NAMES)

  const page = (await body(await env.request('/v1/bridge-pages', { method: 'POST', key, json: { title: 'Stated rules' } }))).data
  const validate = conformance().requestValidator('POST', '/bridge-pages/{pageId}/blocks', { body: true })
  const verdict = async (type: string) => {
    const res = await env.request(`/v1/bridge-pages/${page.id}/blocks`, { method: 'POST', key, json: { type } })
    const answer = await body(res)
    return { document: validate({ type }) ? 'ok' : 'refused', status: res.status, code: answer.error?.code, known: answer.error?.details?.known }
  }
  for (const type of NAMES) expect({ type, ...(await verdict(type)) }).toEqual({ type, document: 'ok', status: 201, code: undefined, known: undefined })
  // What Schemathesis sent ("0"), another case, empty, a near miss.
  for (const type of ['0', 'Profile', '', 'social-links', 'x'.repeat(65)]) {
    expect({ type, ...(await verdict(type)) }).toEqual({ type, document: 'refused', status: 400, code: 'unknown_block_type', known: NAMES })
  }
  // A type the document allows on a page that does not exist is 404, not a refusal of the type.
  const missing = await env.request('/v1/bridge-pages/bp_missing/blocks', { method: 'POST', key, json: { type: NAMES[0] } })
  expect(missing.status).toBe(404)
})

test('a new page: templateSlug one of the built-in templates, not with savedTemplateId; ogImageUrl an http(s) URL', async () => {
  const doc = conformance().doc
  const slugs = BUILTIN_TEMPLATES.map((t) => t.slug)
  expect(doc.components.schemas.TemplateSlug).toMatchObject({ type: 'string', enum: slugs })
  const listed = await body(await env.request('/v1/templates?limit=100'))
  expect(listed.data.map((t: { slug: string }) => t.slug).sort()).toEqual([...slugs].sort())
  const validate = conformance().requestValidator('POST', '/bridge-pages', { body: true })
  const saved = (
    await body(
      await env.request('/v1/saved-templates', {
        method: 'POST',
        key,
        json: { name: 'Stated', pageId: (await body(await env.request('/v1/bridge-pages', { method: 'POST', key, json: {} }))).data.id },
      }),
    )
  ).data
  const verdict = async (json: Record<string, unknown>) => {
    const res = await env.request('/v1/bridge-pages', { method: 'POST', key, json })
    const answer = await body(res)
    const server =
      res.status === 201 ? 'ok' : res.status === 400 && answer.error.code === 'validation_failed' ? 'refused' : `${res.status} ${answer.error?.code}`
    return {
      document: validate(json) ? 'ok' : 'refused',
      server,
      paths: [...new Set((answer.error?.details?.issues ?? []).map((i: { path: string }) => i.path))],
    }
  }
  for (const templateSlug of slugs)
    expect({ templateSlug, ...(await verdict({ templateSlug })) }).toEqual({ templateSlug, document: 'ok', server: 'ok', paths: [] })
  // What Schemathesis sent (empty), another case, no such template.
  for (const templateSlug of ['', 'Link-In-Bio', 'no-such-template']) {
    expect({ templateSlug, ...(await verdict({ templateSlug })) }).toEqual({ templateSlug, document: 'refused', server: 'refused', paths: ['templateSlug'] })
  }
  expect(await verdict({ savedTemplateId: saved.id })).toEqual({ document: 'ok', server: 'ok', paths: [] })
  expect(await verdict({ templateSlug: slugs[0], savedTemplateId: saved.id })).toEqual({ document: 'refused', server: 'refused', paths: ['savedTemplateId'] })
  for (const ogImageUrl of ['', 'HTTP:', 'ftp://img.example/a.png', 'img.example/a.png', `https://img.example/${'a'.repeat(2030)}`]) {
    expect({ ogImageUrl: ogImageUrl.slice(0, 30), ...(await verdict({ ogImageUrl })) }).toEqual({
      ogImageUrl: ogImageUrl.slice(0, 30),
      document: 'refused',
      server: 'refused',
      paths: ['ogImageUrl'],
    })
  }
  for (const ogImageUrl of ['https://img.example/a.png', 'HTTP://img.example/a.png', null]) {
    expect({ ogImageUrl, ...(await verdict({ ogImageUrl })) }).toEqual({ ogImageUrl, document: 'ok', server: 'ok', paths: [] })
  }
})
