// A key's settings as the OpenAPI document states them are what POST /v1/api-keys enforces: each value
// below gets the same verdict from the document's request schema and from the server. Apart: the zone aliases
// the server takes beyond the document's list (its description says so), and the rules no schema can state
// (start equal to end, an expiry in the past), which are the service's, said in the descriptions.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { conformance } from '../conformance'
import { bootstrapAccount, setup, type TestEnv } from '../helpers'
import { call, expectError } from './_keys'

let env: TestEnv
let admin: string

beforeAll(async () => {
  env = await setup()
  admin = (await bootstrapAccount(env.rt, 'Stated rules')).apiKey.key
})
afterAll(() => env.cleanup())

const schema = () => conformance().doc.paths['/api-keys']!.post!.requestBody.content['application/json'].schema
const base = { timezone: 'Europe/Berlin', days: [1, 2], startMinute: 540, endMinute: 1020 }

/** The document's verdict and the server's on one body: 'ok' or the paths of the issues. */
async function verdicts(json: Record<string, unknown>) {
  const validate = conformance().requestValidator('POST', '/api-keys', { body: true })
  const document = validate(json) ? 'ok' : 'refused'
  const res = await call(env, admin, '/v1/api-keys', { json })
  const answer: any = await res.json()
  const server = res.status === 201 ? 'ok' : res.status === 400 && answer.error.code === 'validation_failed' ? 'refused' : `${res.status} ${answer.error?.code}`
  return { document, server, issues: res.status === 400 ? (answer.error.details.issues as { path: string; message: string }[]) : [] }
}

describe('schedule', () => {
  test('days: the document lists 0-6, and a day outside them is refused with those same values', async () => {
    const days = schema().properties.schedule.properties.days
    expect(days).toMatchObject({ type: 'array', minItems: 1, items: { type: 'integer', enum: [0, 1, 2, 3, 4, 5, 6] } })
    for (const bad of [7, -1, 1.5]) {
      const got = await verdicts({ name: 'd', schedule: { ...base, days: [1, bad] } })
      expect({ bad, document: got.document, server: got.server }).toEqual({ bad, document: 'refused', server: 'refused' })
      const issue = got.issues.find((i) => i.path === 'schedule.days.1')!
      expect({ bad, issues: got.issues }).toEqual({ bad, issues: [issue] })
      // "must be one of: 0, 1, …": the values the message lists are the document's enum.
      const listed = JSON.parse(`[${issue.message.replace(/^must be one of: /, '')}]`)
      expect(listed).toEqual(days.items.enum)
    }
    const none = await verdicts({ name: 'd', schedule: { ...base, days: [] } })
    expect([none.document, none.server, none.issues.map((i) => i.path)]).toEqual(['refused', 'refused', ['schedule.days']])
    for (const ok of [[0], [6, 0], [1, 1]])
      expect(await verdicts({ name: 'd', schedule: { ...base, days: ok } })).toMatchObject({ document: 'ok', server: 'ok' })
  })

  test('timezone: the document lists the zone names, and the server refuses any other name or an offset', async () => {
    expect(schema().properties.schedule.properties.timezone).toEqual({ $ref: '#/components/schemas/TimeZone' })
    const zone = conformance().doc.components.schemas.TimeZone as { type: string; enum: string[]; description: string }
    expect(zone.type).toBe('string')
    expect(zone.enum).toEqual(Intl.supportedValuesOf('timeZone'))
    expect(zone.enum).toEqual(expect.arrayContaining(['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT-14']))
    // Not zone names: offsets (Intl would read them), digits, empty, no such zone, too deep, spaces.
    for (const bad of ['+01:00', '-05:30', '0000000000', '', 'Mars/Olympus_Mons', 'Europe/Berlin/Mitte', 'Europe / Berlin', 'x'.repeat(65)]) {
      const got = await verdicts({ name: 'z', schedule: { ...base, timezone: bad } })
      expect({ bad, document: got.document, server: got.server, paths: got.issues.map((i) => i.path) }).toEqual({
        bad,
        document: 'refused',
        server: 'refused',
        paths: ['schedule.timezone'],
      })
    }
    for (const ok of ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT-14']) {
      expect({ ok, ...(await verdicts({ name: 'z', schedule: { ...base, timezone: ok } })) }).toEqual({ ok, document: 'ok', server: 'ok', issues: [] })
    }
    // Aliases the time zone data reads (browsers report some as the user's zone) and other capitalisations:
    // not in the list, taken all the same, as the description says.
    expect(zone.description).toContain('Aliases that data also knows (Asia/Calcutta, US/Eastern, Etc/UTC) and other capitalisations are accepted too')
    for (const alias of ['Asia/Calcutta', 'US/Eastern', 'Etc/UTC', 'europe/berlin']) {
      expect({ alias, ...(await verdicts({ name: 'z', schedule: { ...base, timezone: alias } })) }).toEqual({
        alias,
        document: 'refused',
        server: 'ok',
        issues: [],
      })
    }
  })
})

test('scopeFilters: the document requires a domain, a tag or a folder, as the server does; null is no scope', async () => {
  expect(schema().properties.scopeFilters.anyOf).toHaveLength(3)
  for (const bad of [{}, { domains: [] }, { tags: [] }, { folders: [] }, { domains: [], tags: [], folders: [] }]) {
    const got = await verdicts({ name: 's', scopeFilters: bad })
    expect({ bad, document: got.document, server: got.server, paths: got.issues.map((i) => i.path) }).toEqual({
      bad,
      document: 'refused',
      server: 'refused',
      paths: ['scopeFilters'],
    })
  }
  for (const ok of [null, { domains: ['go.example.com'] }, { tags: ['a'] }, { domains: [], tags: ['a'] }, { folders: ['fld_a1'] }]) {
    expect({ ok, ...(await verdicts({ name: 's', scopeFilters: ok })) }).toEqual({ ok, document: 'ok', server: 'ok', issues: [] })
  }
  // A folder id has the form of one, in the document as in the server (which names the entry).
  const got = await verdicts({ name: 's', scopeFilters: { folders: ['fld_a1', 'marketing'] } })
  expect({ document: got.document, server: got.server, paths: got.issues.map((i) => i.path) }).toEqual({
    document: 'refused',
    server: 'refused',
    paths: ['scopeFilters.folders.1'],
  })
})

test('name: at least one character that is not a space, in the document as in the server', async () => {
  expect(schema().properties.name).toMatchObject({ minLength: 1, maxLength: 100, pattern: '\\S' })
  for (const bad of ['', ' ', ' \t ']) {
    const got = await verdicts({ name: bad })
    // '' breaks both minLength and the pattern: two issues, both at name.
    expect({ bad, document: got.document, server: got.server, paths: [...new Set(got.issues.map((i) => i.path))] }).toEqual({
      bad,
      document: 'refused',
      server: 'refused',
      paths: ['name'],
    })
  }
  expect(await verdicts({ name: ' x ' })).toMatchObject({ document: 'ok', server: 'ok' })
})

test('PATCH states the same rules', async () => {
  const created: any = await (await call(env, admin, '/v1/api-keys', { json: { name: 'patched' } })).json()
  const patch = (json: unknown) => call(env, admin, `/v1/api-keys/${created.data.id}`, { method: 'PATCH', json })
  const patchSchema = conformance().doc.paths['/api-keys/{id}']!.patch!.requestBody.content['application/json'].schema
  expect(patchSchema.properties.schedule).toEqual(schema().properties.schedule)
  expect(patchSchema.properties.scopeFilters).toEqual(schema().properties.scopeFilters)
  await expectError(await patch({ schedule: { ...base, days: [9] } }), 400, 'validation_failed')
  await expectError(await patch({ schedule: { ...base, timezone: '+02:00' } }), 400, 'validation_failed')
  await expectError(await patch({ name: '  ' }), 400, 'validation_failed')
})
