// POST /bridge-pages/{pageId}/blocks as the OpenAPI document states it: `type` is an enum made from the block
// catalogue, the same names GET /bridge-pages/block-types lists and the server's 400 unknown_block_type names.
// Each value gets the same verdict from the document and from the server.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { BLOCK_TYPES } from '../../src/modules/pages/blocks'
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
  expect(doc.paths['/bridge-pages/{pageId}/blocks']!.post!.requestBody.content['application/json'].schema.properties.type).toEqual({ $ref: '#/components/schemas/BlockTypeName' })
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
