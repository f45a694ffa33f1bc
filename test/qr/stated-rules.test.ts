// GET /qr/render's data as the OpenAPI document states it: an http(s) URI of 1-2048 characters. Each value below
// gets the same verdict from the document's parameter schema and from the server; apart, the rule no schema
// can state (the host must be a short domain this instance serves now), which the description says and the
// server applies to URLs the document allows.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { conformance } from '../conformance'
import { body, setup, type TestEnv } from '../helpers'

let env: TestEnv

beforeAll(async () => {
  env = await setup({ env: { LNK_SHORT_DOMAINS: 'localhost:8080,go.example' } })
})
afterAll(() => env.cleanup())

async function verdicts(data: string) {
  const document = conformance().requestValidator('GET', '/qr/render', { query: 'data' })(data) ? 'ok' : 'refused'
  const res = await env.request(`/v1/qr/render?data=${encodeURIComponent(data)}`)
  const answer = res.headers.get('content-type')?.startsWith('application/json') ? await body(res) : undefined
  const server =
    res.status === 200 ? 'ok' : res.status === 400 && answer?.error.code === 'validation_failed' ? 'refused' : `${res.status} ${answer?.error?.code}`
  const paths = res.status === 400 ? [...new Set((answer?.error.details?.issues ?? []).map((i: { path: string }) => i.path))] : []
  return { document, server, paths }
}

test('data: an http(s) URI of 1-2048 characters, as the server checks it', async () => {
  const parameter = conformance().doc.paths['/qr/render']!.get!.parameters.find((p: { name?: string }) => p.name === 'data')
  expect(parameter).toMatchObject({ in: 'query', required: true, schema: { type: 'string', format: 'uri', minLength: 1, maxLength: 2048 } })
  const long = `http://localhost:8080/${'a'.repeat(2048 - 'http://localhost:8080/'.length + 1)}`
  // What Schemathesis sent ("0", then "HTTP:", a URI but no URL), no host, no scheme, another scheme, a relative reference, empty, too long.
  for (const bad of ['0', 'HTTP:', 'http://:8080/qr-demo', 'localhost:8080/qr-demo', 'ftp://localhost:8080/qr-demo', '/qr-demo', '', long]) {
    expect({ bad: bad.slice(0, 40), ...(await verdicts(bad)) }).toEqual({ bad: bad.slice(0, 40), document: 'refused', server: 'refused', paths: ['data'] })
  }
  for (const ok of ['http://localhost:8080/qr-demo', 'HTTPS://go.example/abc1234', 'http://go.example/abc?x=1']) {
    expect({ ok, ...(await verdicts(ok)) }).toEqual({ ok, document: 'ok', server: 'ok', paths: [] })
  }
  // The rule no schema can state: a URL the document allows, on a host that is not one of this instance's short
  // domains, is refused, as the description says.
  const description = parameter.schema.description as string
  expect(description).toContain("an http(s) URL on one of this service's short domains or a verified custom domain it serves")
  for (const elsewhere of ['https://example.com/abc1234', 'http://localhost:8081/abc1234']) {
    expect({ elsewhere, ...(await verdicts(elsewhere)) }).toEqual({ elsewhere, document: 'ok', server: 'refused', paths: ['data'] })
  }
})
