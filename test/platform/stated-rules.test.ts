// Query parameters as the OpenAPI document states them are what the analytics routes enforce: each tz
// below gets the same verdict from the document's parameter schema and from the server, on every route that
// reads it. A name of the right form that no zone has is the service's refusal, which the description states.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { conformance } from '../conformance'
import { bootstrapAccount, setup, type TestEnv } from '../helpers'

let env: TestEnv
let key: string

beforeAll(async () => {
  env = await setup()
  key = (await bootstrapAccount(env.rt, 'Stated query rules')).apiKey.key
})
afterAll(() => env.cleanup())

const ROUTES = ['/analytics/overview', '/analytics/timeline', '/analytics/top-links']

async function verdicts(route: string, tz: string) {
  const document = conformance().requestValidator('GET', route, { query: 'tz' })(tz) ? 'ok' : 'refused'
  const res = await env.request(`/v1${route}?${new URLSearchParams({ from: '2026-01-01', to: '2026-01-31', tz })}`, { key })
  const answer: any = await res.json()
  const server = res.status === 200 ? 'ok' : res.status === 400 && answer.error.code === 'validation_failed' ? 'refused' : `${res.status} ${answer.error?.code}`
  const paths = res.status === 400 ? [...new Set((answer.error.details?.issues ?? []).map((i: { path: string }) => i.path))] : []
  return { document, server, paths }
}

test('tz: the document states the form of a zone name on every analytics route, and the server refuses what lacks it', async () => {
  for (const route of ROUTES) {
    const schema = conformance().doc.paths[route]!.get!.parameters.find((p: { name?: string }) => p.name === 'tz').schema
    expect({ route, type: schema.type, maxLength: schema.maxLength, pattern: typeof schema.pattern }).toEqual({ route, type: 'string', maxLength: 64, pattern: 'string' })
    // What Schemathesis sent (64 zeros), offsets Intl would read, empty, too deep.
    for (const bad of ['0'.repeat(64), '+01:00', '-0530', '', 'Europe/Berlin/Mitte/Nord']) {
      expect({ route, bad, ...(await verdicts(route, bad)) }).toEqual({ route, bad, document: 'refused', server: 'refused', paths: ['tz'] })
    }
    for (const ok of ['UTC', 'Europe/Berlin', 'Asia/Calcutta', 'Etc/GMT+5', 'america/new_york']) {
      expect({ route, ok, ...(await verdicts(route, ok)) }).toEqual({ route, ok, document: 'ok', server: 'ok', paths: [] })
    }
    expect(schema.description).toContain('names no zone is 400')
    expect({ route, ...(await verdicts(route, 'Mars/Olympus')) }).toEqual({ route, document: 'ok', server: 'refused', paths: ['tz'] })
  }
})
