// POST /domains and PATCH /domains/{id} as the OpenAPI document states them: each value below gets the same
// verdict from the document's request schema and from the server (what the schema refuses the server refuses,
// naming the field; what it allows the server takes). Apart, the values the server takes beyond the document,
// as the field's description says: internationalised names, and a fallback URL's {DOMAIN} placeholder.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { conformance } from '../conformance'
import { body } from '../helpers'
import { domainsEnv, type DomainsEnv } from './_domains'

let env: DomainsEnv

beforeAll(async () => {
  env = await domainsEnv()
})
afterAll(() => env.close())

let added = 0

/** The document's verdict on a create body next to the server's, with the fields the server named. */
async function verdicts(json: Record<string, unknown>) {
  const document = conformance().requestValidator('POST', '/domains', { body: true })(json) ? 'ok' : 'refused'
  const res = await env.api('/domains', { method: 'POST', json })
  const answer = await body(res)
  if (res.status === 201) added++
  const server = res.status === 201 ? 'ok' : res.status === 400 && answer.error.code === 'validation_failed' ? 'refused' : `${res.status} ${answer.error?.code}`
  const paths = res.status === 400 ? [...new Set((answer.error.details?.issues ?? []).map((i: { path: string }) => i.path))] : []
  return { document, server, paths }
}

test('domain: a hostname of two labels or more whose last is no number, as the service checks it; no IP address', async () => {
  const schema = conformance().doc.paths['/domains']!.post!.requestBody.content['application/json'].schema.properties.domain
  expect(schema).toMatchObject({ type: 'string', format: 'hostname', minLength: 1, maxLength: 253 })
  // What Schemathesis sent ("0"), IP addresses and what a URL parser reads as one, one label, bad labels,
  // an ACE label that is no punycode, a port, a scheme, too long.
  const refused = [
    '0',
    '',
    '192.0.2.1',
    '192.0.2.1.',
    '[::1]',
    '::1',
    'go.123',
    'go.0x1f',
    'go.0X',
    'localhost',
    'under_score.example',
    '-lead.example',
    'trail-.example',
    'xn--a.example',
    'go.example.com:8443',
    'https://go.example.com',
    `${'a'.repeat(64)}.example`,
    `${'a.'.repeat(127)}example`,
  ]
  for (const domain of refused)
    expect({ domain, ...(await verdicts({ domain })) }).toEqual({ domain, document: 'refused', server: 'refused', paths: ['domain'] })
  for (const domain of ['go.stated.example', 'Upper.Stated.EXAMPLE.', 'a.b', '1.2.3.a', 'x.0xg', 'ab--cd.stated.example', `${'b'.repeat(63)}.stated.example`]) {
    expect({ domain, ...(await verdicts({ domain })) }).toEqual({ domain, document: 'ok', server: 'ok', paths: [] })
  }
  // Beyond the pattern, as the description says: a Unicode name and its valid ASCII form.
  for (const domain of ['bücher-stated.example', 'xn--bcher-stated-klb.example']) {
    expect({ domain, ...(await verdicts({ domain })) }).toEqual({ domain, document: 'refused', server: 'ok', paths: [] })
  }
})

test('the three fallback URLs: an absolute http(s) URL of 1-2048 characters, on create and on change', async () => {
  const properties = conformance().doc.paths['/domains']!.post!.requestBody.content['application/json'].schema.properties
  const fields = ['rootRedirectUrl', 'notFoundUrl', 'expiredUrl'] as const
  for (const field of fields) expect(properties[field]).toMatchObject({ type: ['string', 'null'], format: 'uri', minLength: 1, maxLength: 2048 })
  let n = 0
  const domain = () => `fallback-${++n}.stated.example`
  // What Schemathesis sent (empty, then "HTTP:", a URI but no URL), no host, no scheme, another scheme, no URL
  // at all, one character too long.
  const long = `https://stated.example/${'a'.repeat(2048 - 'https://stated.example/'.length + 1)}`
  for (const field of fields) {
    for (const bad of ['', 'HTTP:', 'https://:443/x', 'stated.example/page', 'ftp://stated.example/file', 'mailto:someone@stated.example', 'not a url', long]) {
      expect({ field, bad, ...(await verdicts({ domain: domain(), [field]: bad })) }).toEqual({
        field,
        bad,
        document: 'refused',
        server: 'refused',
        paths: [field],
      })
    }
    for (const ok of ['https://stated.example/page', 'HTTP://stated.example', 'https://stated.example/a?b=c#d', long.slice(0, -1), null]) {
      expect({ field, ok, ...(await verdicts({ domain: domain(), [field]: ok })) }).toEqual({ field, ok, document: 'ok', server: 'ok', paths: [] })
    }
    // The placeholders, filled in when used, are taken, as the description says. Braces are no URI characters
    // in RFC 3986, but format checkers differ on them (Ajv's lets them through), so only the server's verdict
    // is held here.
    for (const template of ['https://{DOMAIN}/moved', 'https://stated.example/{ORIGINAL_PATH}']) {
      expect({ field, template, server: (await verdicts({ domain: domain(), [field]: template })).server }).toEqual({ field, template, server: 'ok' })
    }
  }
  // PATCH states the same fields, with the same verdicts.
  const target = await env.add(domain())
  const validate = conformance().requestValidator('PATCH', '/domains/{id}', { body: true })
  for (const [value, expected] of [
    ['', 'refused'],
    ['ftp://stated.example/file', 'refused'],
    ['https://stated.example/ok', 'ok'],
  ] as const) {
    const res = await env.api(`/domains/${target.id}`, { method: 'PATCH', json: { notFoundUrl: value } })
    expect({ value, document: validate({ notFoundUrl: value }) ? 'ok' : 'refused', status: res.status }).toEqual({
      value,
      document: expected,
      status: expected === 'ok' ? 200 : 400,
    })
  }
  expect(added).toBeGreaterThan(0)
})
