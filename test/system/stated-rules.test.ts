// Query parameters as the OpenAPI document states them are what the analytics routes enforce: each tz
// below gets the same verdict from the document's parameter schema and from the server, on every route that
// reads it; apart, the aliases the server takes beyond the document's list, as the description says.
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

test('tz: the document lists the zone names on every analytics route, and the server refuses any other name or an offset', async () => {
  const zone = conformance().doc.components.schemas.TimeZone as { enum: string[]; description: string }
  expect(zone.enum).toEqual(Intl.supportedValuesOf('timeZone'))
  for (const route of ROUTES) {
    const param = conformance().doc.paths[route]!.get!.parameters.find((p: { name?: string }) => p.name === 'tz')
    expect({ route, param }).toEqual({ route, param: { name: 'tz', in: 'query', required: false, schema: { $ref: '#/components/schemas/TimeZone' } } })
    // What Schemathesis sent (64 zeros, "A"), offsets Intl would read, empty, no such zone, too deep.
    for (const bad of ['0'.repeat(64), 'A', '+01:00', '-0530', '', 'Mars/Olympus', 'Europe/Berlin/Mitte']) {
      expect({ route, bad, ...(await verdicts(route, bad)) }).toEqual({ route, bad, document: 'refused', server: 'refused', paths: ['tz'] })
    }
    for (const ok of ['UTC', 'Europe/Berlin', 'Etc/GMT+5', 'America/Argentina/Buenos_Aires']) {
      expect({ route, ok, ...(await verdicts(route, ok)) }).toEqual({ route, ok, document: 'ok', server: 'ok', paths: [] })
    }
    // Beyond the list, as its description says: aliases and other capitalisations.
    for (const alias of ['Asia/Calcutta', 'america/new_york']) {
      expect({ route, alias, ...(await verdicts(route, alias)) }).toEqual({ route, alias, document: 'refused', server: 'ok', paths: [] })
    }
  }
})

test('from and to: the local date-time form the document states keeps each field in range, as the server does', async () => {
  for (const route of ROUTES) {
    const validate = conformance().requestValidator('GET', route, { query: 'from' })
    const verdict = async (from: string) => {
      const res = await env.request(`/v1${route}?${new URLSearchParams({ from, to: '2026-02-01', tz: 'UTC' })}`, { key })
      const answer: any = await res.json()
      const paths = res.status === 400 ? [...new Set((answer.error.details?.issues ?? []).map((i: { path: string }) => i.path))] : []
      return { document: validate(from) ? 'ok' : 'refused', status: res.status, paths }
    }
    // What Schemathesis sent: month 92, day 42, hour 27; and each field one past its range.
    for (const bad of ['6332-92-42T27:63', '2026-13-01T00:00', '2026-01-32T00:00', '2026-01-05T24:00', '2026-01-05T12:60', '2026-01-05T12:00:60']) {
      expect({ route, bad, ...(await verdict(bad)) }).toEqual({ route, bad, document: 'refused', status: 400, paths: ['from'] })
    }
    for (const ok of ['2026-01-05T12:00', '2026-01-05T23:59:59.999', '2026-01-05', '2026-01-05T12:00:00+01:00']) {
      expect({ route, ok, ...(await verdict(ok)) }).toEqual({ route, ok, document: 'ok', status: 200, paths: [] })
    }
  }
})
