// /v1/webhooks endpoints: every field of spec 2.5, create/read/update/delete, validation with issue paths,
// secrets shown once, write-only custom headers, key modes, SSRF refusal at save, info and types.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Ajv2020 from 'ajv/dist/2020'
import { body, makeKey, ROOT } from '../helpers'
import { makeTestKey, state, webhooksEnv, type Env } from './_webhooks'

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const SPEC_FIELDS = [
  'id',
  'name',
  'url',
  'events',
  'format',
  'mode',
  'isActive',
  'failureCount',
  'disabledReason',
  'customHeaderNames',
  'filters',
  'transform',
  'batchEnabled',
  'batchWindowSeconds',
  'maxConcurrent',
  'mtlsEnabled',
  'previousSecretExpiresAt',
  'createdAt',
  'updatedAt',
]

let env: Env
beforeAll(async () => {
  env = await webhooksEnv()
})
afterAll(() => env.cleanup())

async function expectIssues(res: Response, paths: string[]) {
  expect(res.status).toBe(400)
  const payload = await body(res)
  expect(payload.success).toBe(false)
  expect(payload.error.code).toBe('validation_failed')
  const got = payload.error.details.issues.map((i: { path: string }) => i.path)
  for (const p of paths) expect(got).toContain(p)
  return payload.error
}

describe('create and read', () => {
  test('a minimal endpoint: 201, every spec field with its default, the secret once', async () => {
    const res = await env.api('/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/hook', events: ['link.created'] } })
    expect(res.status).toBe(201)
    const ep = (await body(res)).data
    expect(Object.keys(ep).sort()).toEqual([...SPEC_FIELDS, 'secret'].sort())
    expect(ep).toMatchObject({
      name: null,
      url: 'http://127.0.0.1:9/hook',
      events: ['link.created'],
      format: 'standard',
      mode: 'live',
      isActive: true,
      failureCount: 0,
      disabledReason: null,
      customHeaderNames: [],
      filters: null,
      transform: null,
      batchEnabled: false,
      batchWindowSeconds: 10,
      maxConcurrent: 5,
      mtlsEnabled: false,
      previousSecretExpiresAt: null,
    })
    expect(ep.id).toMatch(/^whe_[0-9A-Za-z]{20}$/)
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(ep.secret.slice(6), 'base64')).toHaveLength(32)
    expect(ep.createdAt).toMatch(ISO)

    const read = (await body(await env.api(`/webhooks/${ep.id}`))).data
    expect(read).not.toHaveProperty('secret')
    const { secret: _secret, ...rest } = ep
    expect(read).toEqual(rest)
    const list = (await body(await env.api('/webhooks'))).data
    expect(list.map((e: any) => e.id)).toContain(ep.id)
    for (const e of list) expect(e).not.toHaveProperty('secret')
    // The secret is nowhere in what reads answer.
    expect(JSON.stringify(list)).not.toContain(ep.secret.slice(6, 20))
  })

  test('every setting is stored and answered; custom header values are write-only', async () => {
    const input = {
      name: 'Orders',
      url: 'http://127.0.0.1:9/all',
      events: ['link.*', 'conversion.created'],
      format: 'standard',
      isActive: false,
      customHeaders: [
        { name: 'Authorization', value: 'Bearer super-secret-token-1234' },
        { name: 'X-Tenant', value: 'acme' },
      ],
      filters: { match: 'any', events: ['link.created'], rules: [{ field: 'data.domain', op: 'eq', value: 'lnk.example' }] },
      transform: { kind: 'template', template: { text: 'New link {{data.shortUrl}}' } },
      batchEnabled: true,
      batchWindowSeconds: 30,
      maxConcurrent: 2,
    }
    const ep = await env.createEndpoint(input)
    const { customHeaders: _headers, ...visible } = input
    expect(ep).toMatchObject(visible)
    expect(ep).not.toHaveProperty('customHeaders')
    expect(ep.customHeaderNames).toEqual([
      { name: 'Authorization', hint: '…1234' },
      { name: 'X-Tenant', hint: '…' },
    ])
    const read = await (await env.api(`/webhooks/${ep.id}`)).text()
    expect(read).not.toContain('super-secret-token')
    expect(read).not.toContain('acme')
  })

  test('unknown ids are 404 not_found for every route', async () => {
    for (const [method, path] of [
      ['GET', '/webhooks/whe_missing'],
      ['PATCH', '/webhooks/whe_missing'],
      ['DELETE', '/webhooks/whe_missing'],
      ['GET', '/webhooks/whe_missing/deliveries'],
      ['GET', '/webhooks/whe_missing/deliveries/dlv_x'],
      ['POST', '/webhooks/whe_missing/deliveries/dlv_x/replay'],
      ['POST', '/webhooks/whe_missing/replay-all'],
      ['POST', '/webhooks/whe_missing/rotate-secret'],
      ['POST', '/webhooks/whe_missing/test'],
    ] as const) {
      const res = await env.api(path, { method, ...(method === 'PATCH' ? { json: { name: 'x' } } : {}) })
      expect(res.status).toBe(404)
      expect((await body(res)).error.code).toBe('not_found')
    }
    const ep = await env.createEndpoint({ url: 'http://127.0.0.1:9/x', events: ['*'] })
    const res = await env.api(`/webhooks/${ep.id}/deliveries/dlv_nope`)
    expect(res.status).toBe(404)
  })

  test('an endpoint of another workspace does not exist for this one', async () => {
    const other = await webhooksEnv()
    try {
      const ep = await other.createEndpoint({ url: 'http://127.0.0.1:9/x', events: ['*'] })
      const res = await env.api(`/webhooks/${ep.id}`)
      expect(res.status).toBe(404)
    } finally {
      await other.cleanup()
    }
  })
})

describe('validation', () => {
  test('event names come from the catalogue; * and area.* patterns are allowed', async () => {
    const err = await expectIssues(
      await env.api('/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: ['link.created', 'link.exploded', 'nothing.*'] } }),
      ['events.1', 'events.2'],
    )
    expect(err.details.issues.some((i: any) => i.path === 'events.0')).toBe(false)
    const ok = await env.createEndpoint({ url: 'http://127.0.0.1:9/x', events: ['*', 'link.*', 'webhook.test'] })
    expect(ok.events).toEqual(['*', 'link.*', 'webhook.test'])
  })

  test('filter rules are checked: unknown op, value type that does not fit the op, the rule index named', async () => {
    await expectIssues(
      await env.api('/webhooks', {
        method: 'POST',
        json: {
          url: 'http://127.0.0.1:9/x',
          events: ['*'],
          filters: {
            match: 'all',
            events: null,
            rules: [
              { field: 'type', op: 'eq', value: 'x' },
              { field: 'data.tags', op: 'in', value: 'not-a-list' },
              { field: 'x', op: 'regex', value: '.*' },
            ],
          },
        },
      }),
      ['filters.rules.1.value', 'filters.rules.2.op'],
    )
    await expectIssues(
      await env.api('/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: ['*'], filters: { match: 'some', events: null, rules: [] } } }),
      ['filters.match'],
    )
    await expectIssues(
      await env.api('/webhooks', {
        method: 'POST',
        json: { url: 'http://127.0.0.1:9/x', events: ['*'], filters: { match: 'all', events: ['nope.nope'], rules: [] } },
      }),
      ['filters.events.0'],
    )
  })

  test('templates must be objects with well-formed placeholders, and only for the standard format', async () => {
    await expectIssues(
      await env.api('/webhooks', {
        method: 'POST',
        json: { url: 'http://127.0.0.1:9/x', events: ['*'], transform: { kind: 'template', template: { a: 'broken {{ data.' } } },
      }),
      ['transform.template.a'],
    )
    await expectIssues(
      await env.api('/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: ['*'], transform: { kind: 'template', template: 'text' } } }),
      ['transform'],
    )
    await expectIssues(
      await env.api('/webhooks', {
        method: 'POST',
        json: { url: 'http://127.0.0.1:9/x', events: ['*'], format: 'slack', transform: { kind: 'template', template: { a: 1 } } },
      }),
      ['transform'],
    )
  })

  test('ranges: batchWindowSeconds 1-300, maxConcurrent 1-10; unknown fields refused', async () => {
    await expectIssues(await env.api('/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: ['*'], batchWindowSeconds: 0 } }), [
      'batchWindowSeconds',
    ])
    await expectIssues(await env.api('/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: ['*'], batchWindowSeconds: 301 } }), [
      'batchWindowSeconds',
    ])
    await expectIssues(await env.api('/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: ['*'], maxConcurrent: 11 } }), [
      'maxConcurrent',
    ])
    await expectIssues(await env.api('/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: ['*'], secret: 'mine' } }), [])
    await expectIssues(await env.api('/webhooks', { method: 'POST', json: { events: ['*'] } }), [])
  })

  test('custom headers: hop-by-hop, signature and malformed names are refused', async () => {
    const err = await expectIssues(
      await env.api('/webhooks', {
        method: 'POST',
        json: {
          url: 'http://127.0.0.1:9/x',
          events: ['*'],
          customHeaders: [
            { name: 'Connection', value: 'close' },
            { name: 'webhook-signature', value: 'v1,forged' },
            { name: 'X-Service-Signature', value: 'forged' },
            { name: 'bad name', value: 'x' },
            { name: 'X-Ok', value: 'line\r\nbreak' },
            { name: 'Transfer-Encoding', value: 'chunked' },
          ],
        },
      }),
      ['customHeaders.0.name', 'customHeaders.1.name', 'customHeaders.2.name', 'customHeaders.3.name', 'customHeaders.4.value', 'customHeaders.5.name'],
    )
    expect(err.details.issues).toHaveLength(6)
  })

  test('mtlsEnabled is refused when the operator configured no client certificate', async () => {
    await expectIssues(await env.api('/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: ['*'], mtlsEnabled: true } }), ['mtlsEnabled'])
  })

  test('URLs: plain http, private targets and credentials are refused without the opt-ins; the reason is named', async () => {
    const strict = await webhooksEnv({ env: { LNK_WEBHOOK_ALLOW_HTTP: 'false', LNK_WEBHOOK_ALLOWED_CIDRS: '' } })
    try {
      const post = (url: string) => strict.api('/webhooks', { method: 'POST', json: { url, events: ['*'] } })
      let err = await expectIssues(await post('http://example.com/hook'), ['url'])
      expect(err.message).toContain('LNK_WEBHOOK_ALLOW_HTTP')
      // A host name that resolves to 127.0.0.1 (localhost) is judged by its address.
      err = await expectIssues(await post('https://localhost/hook'), ['url'])
      expect(err.details.issues[0].message).toMatch(/127\.0\.0\.1|loopback/)
      await expectIssues(await post('https://10.1.2.3/hook'), ['url'])
      await expectIssues(await post('https://169.254.169.254/latest/meta-data'), ['url'])
      await expectIssues(await post('https://[::ffff:127.0.0.1]/hook'), ['url'])
      await expectIssues(await post('ftp://example.com/x'), ['url'])
      await expectIssues(await post('https://user:pw@example.com/x'), ['url'])
      // A public address literal is fine (no DNS needed).
      const ok = await strict.createEndpoint({ url: 'https://93.184.215.14/hook', events: ['*'] })
      expect(ok.url).toBe('https://93.184.215.14/hook')
      // PATCH checks the URL the same way.
      await expectIssues(await strict.api(`/webhooks/${ok.id}`, { method: 'PATCH', json: { url: 'https://127.0.0.1/x' } }), ['url'])
    } finally {
      await strict.cleanup()
    }
  })

  test('with the opt-in, metadata addresses stay refused', async () => {
    const lan = await webhooksEnv({ env: { LNK_WEBHOOK_ALLOWED_CIDRS: '169.254.0.0/16' } })
    try {
      await expectIssues(await lan.api('/webhooks', { method: 'POST', json: { url: 'http://169.254.169.254/x', events: ['*'] } }), ['url'])
      expect((await lan.createEndpoint({ url: 'http://169.254.10.10/x', events: ['*'] })).url).toBe('http://169.254.10.10/x')
    } finally {
      await lan.cleanup()
    }
  })
})

describe('what the document says of the bodies', () => {
  // The catalogue's types, and the area patterns the service accepts besides * (every dot prefix of a type).
  const TYPES = [
    'link.created',
    'link.updated',
    'link.deleted',
    'link.clicked',
    'tag.created',
    'tag.updated',
    'tag.deleted',
    'folder.created',
    'folder.updated',
    'folder.deleted',
    'conversion.created',
    'domain.created',
    'domain.verified',
    'domain.misconfigured',
    'domain.deleted',
    'bridge_page.created',
    'bridge_page.updated',
    'bridge_page.deleted',
    'webhook.test',
  ]
  const PATTERNS = ['*', 'link.*', 'tag.*', 'folder.*', 'conversion.*', 'domain.*', 'bridge_page.*', 'webhook.*']
  const schemaOf = async (path: string, method: string) => {
    const doc = await body(await env.request('/v1/openapi.json'))
    return { doc, schema: doc.paths[path][method].requestBody.content['application/json'].schema }
  }
  const validator = (schema: object) => {
    const ajv = new Ajv2020({ strict: false, validateFormats: true })
    ajv.addFormat('uri', (v: string) => /^[a-z][a-z0-9+.-]*:[^\s]*$/i.test(v))
    return ajv.compile(schema)
  }

  test('url is published as format uri; events items as the catalogue and its patterns, exactly what is accepted', async () => {
    for (const [path, method] of [
      ['/webhooks', 'post'],
      ['/webhooks/{id}', 'patch'],
    ] as const) {
      const { schema } = await schemaOf(path, method)
      expect(schema.properties.url).toMatchObject({ type: 'string', format: 'uri', minLength: 1, maxLength: 2048 })
      const items = schema.properties.events.items
      expect(items.anyOf.map((a: { enum: string[] }) => a.enum)).toEqual([TYPES, PATTERNS])
    }
    expect((await body(await env.api('/webhooks/info'))).data.events).toEqual(TYPES)
    // Every published value is accepted, in events and in filters.events ...
    const all = [...TYPES, ...PATTERNS]
    expect((await env.createEndpoint({ url: 'http://127.0.0.1:9/all', events: all, filters: { events: all } })).events).toEqual(all)
    // ... and values outside it are not.
    const outside = ['link.exploded', 'nothing.*', 'link', '.*', 'link.created.*', 'LINK.CREATED', '**', '']
    const err = await expectIssues(
      await env.api('/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: outside } }),
      outside.map((_, i) => `events.${i}`),
    )
    expect(err.details.issues).toHaveLength(outside.length)
    const { schema } = await schemaOf('/webhooks', 'post')
    const check = validator(schema.properties.events.items)
    for (const v of all) expect({ v, ok: check(v) }).toEqual({ v, ok: true })
    for (const v of outside) expect({ v, ok: check(v) }).toEqual({ v, ok: false })
  })

  test('the service still decides on url, naming every problem of the body at once', async () => {
    // An IDN host, a space and a | in the query: RFC 3986 (format: uri, as a validator checks it) refuses
    // these, and the service has always taken them (the sender escapes them): the format stays documentary.
    const pinned = await webhooksEnv()
    try {
      state(pinned).resolver = async () => ['127.0.0.1']
      const odd = 'http://bücher.example:9/hook path?q=a|b'
      expect((await pinned.createEndpoint({ url: odd, events: ['*'] })).url).toBe(odd)
    } finally {
      await pinned.cleanup()
    }
    const post = (json: Record<string, unknown>) => env.api('/webhooks', { method: 'POST', json: { events: ['*'], ...json } })
    for (const url of [5, null, '', 'x'.repeat(2049), { href: 'http://127.0.0.1:9/x' }]) await expectIssues(await post({ url }), ['url'])
    const err = await expectIssues(await post({ url: 'not a url', events: ['link.exploded'], filters: { match: 'some' } }), [
      'url',
      'events.0',
      'filters.match',
    ])
    expect(err.details.issues.find((i: { path: string }) => i.path === 'url').message).toBe('is not an absolute URL')
  })

  test('filters: one shape for the body and the answer; in a body match, events and rules may be left out', async () => {
    const { doc, schema } = await schemaOf('/webhooks', 'post')
    const sent = schema.properties.filters
    const answered = doc.components.schemas.WebhookEndpoint.properties.filters
    expect(sent.additionalProperties).toBe(false)
    expect(sent.type).toEqual(['object', 'null'])
    expect(sent.required).toBeUndefined()
    expect(answered.required).toEqual(['match', 'events', 'rules'])
    expect(sent.properties).toEqual(answered.properties)
    expect(Object.keys(sent.properties)).toEqual(['match', 'events', 'rules'])
    expect(sent.properties.rules.items.properties.op.enum).toEqual([
      'eq',
      'neq',
      'in',
      'nin',
      'contains',
      'not_contains',
      'starts_with',
      'gt',
      'gte',
      'lt',
      'lte',
      'exists',
      'not_exists',
    ])
    // What the schema accepts, the service accepts (defaults filled in), and the reverse for the shape.
    const check = validator(sent)
    const accepted = [
      null,
      {},
      { rules: [{ field: 'data.link.domain', op: 'eq', value: 'go.example' }] },
      { match: 'any', events: ['link.*'], rules: [{ field: 'type', op: 'exists' }] },
    ]
    for (const filters of accepted) {
      expect(check(filters)).toBe(true)
      const ep = await env.createEndpoint({ url: 'http://127.0.0.1:9/f', events: ['*'], filters })
      expect(ep.filters).toEqual(filters === null ? null : { match: 'all', events: null, rules: [], ...filters })
    }
    const refused: Array<[unknown, string]> = [
      [{ match: 'some' }, 'filters.match'],
      [{ events: [] }, 'filters.events'],
      [{ events: ['nope.nope'] }, 'filters.events.0'],
      [{ rules: [{ field: 'x', op: 'regex' }] }, 'filters.rules.0.op'],
      [{ rules: [{ field: '', op: 'exists' }] }, 'filters.rules.0.field'],
      [{ rules: [{ field: 'x', op: 'exists', extra: 1 }] }, 'filters.rules.0.extra'],
      [{ rules: 'none' }, 'filters.rules'],
      [{ match: 'all', other: true }, 'filters.other'],
      ['all', 'filters'],
    ]
    for (const [filters, path] of refused) {
      expect({ filters, valid: check(filters) }).toEqual({ filters, valid: false })
      await expectIssues(await env.api('/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: ['*'], filters } }), [path])
    }
  })
})

describe('update and delete', () => {
  test('PATCH is partial; pausing and re-enabling; disabledReason and failureCount cleared on re-enable', async () => {
    const ep = await env.createEndpoint({ url: 'http://127.0.0.1:9/p', events: ['link.created'], name: 'first' })
    let res = await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { name: 'second', events: ['link.deleted'] } })
    expect(res.status).toBe(200)
    let got = (await body(res)).data
    expect(got).toMatchObject({ name: 'second', events: ['link.deleted'], url: ep.url, isActive: true })
    expect(got).not.toHaveProperty('secret')

    res = await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { isActive: false } })
    expect((await body(res)).data.isActive).toBe(false)
    // A disabled endpoint (as the sender leaves it) comes back clean.
    await env.rt.modules.webhooks.ctx.webhooks.updateEndpoint(ep.id, { failureCount: 7, disabledReason: 'The endpoint answered 410 Gone' })
    got = (await body(await env.api(`/webhooks/${ep.id}`))).data
    expect(got).toMatchObject({ isActive: false, failureCount: 7, disabledReason: 'The endpoint answered 410 Gone' })
    got = (await body(await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { isActive: true } }))).data
    expect(got).toMatchObject({ isActive: true, failureCount: 0, disabledReason: null })

    res = await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: {} })
    expect(res.status).toBe(400)
    res = await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { mode: 'test' } })
    expect(res.status).toBe(400)
  })

  test('customHeaders in PATCH replace the whole list', async () => {
    const ep = await env.createEndpoint({ url: 'http://127.0.0.1:9/h', events: ['*'], customHeaders: [{ name: 'X-A', value: 'a' }] })
    const got = (await body(await env.api(`/webhooks/${ep.id}`, { method: 'PATCH', json: { customHeaders: [{ name: 'X-B', value: 'bbbbbbbbbbbbbbbb' }] } })))
      .data
    expect(got.customHeaderNames).toEqual([{ name: 'X-B', hint: '…bbbb' }])
  })

  test('DELETE removes it (and answers 404 afterwards)', async () => {
    const ep = await env.createEndpoint({ url: 'http://127.0.0.1:9/d', events: ['*'] })
    const res = await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })
    expect(res.status).toBe(200)
    expect((await body(res)).data).toEqual({ id: ep.id, deleted: true })
    expect((await env.api(`/webhooks/${ep.id}`)).status).toBe(404)
  })
})

describe('permissions, modes and idempotency', () => {
  test('webhooks:read may read but not write; no key is 401', async () => {
    const reader = (await makeKey(env.rt, env.workspaceId, 'webhooks:read')).key
    expect((await env.api('/webhooks', { key: reader })).status).toBe(200)
    const res = await env.api('/webhooks', { key: reader, method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: ['*'] } })
    expect(res.status).toBe(403)
    expect((await body(res)).error.code).toBe('forbidden')
    expect((await env.request('/v1/webhooks')).status).toBe(401)
    const linksOnly = (await makeKey(env.rt, env.workspaceId, 'links:read')).key
    expect((await env.api('/webhooks/info', { key: linksOnly })).status).toBe(403)
  })

  test('a test key creates and sees only test endpoints; a live key lists live ones unless mode asks for more', async () => {
    const testKey = await makeTestKey(env)
    const live = await env.createEndpoint({ url: 'http://127.0.0.1:9/live', events: ['*'] })
    const sandbox = await env.createEndpoint({ url: 'http://127.0.0.1:9/test', events: ['*'] }, testKey)
    expect(sandbox.mode).toBe('test')
    const res = await env.api('/webhooks', { key: testKey, method: 'POST', json: { url: 'http://127.0.0.1:9/x', events: ['*'], mode: 'live' } })
    expect(res.status).toBe(403)
    const list = async (query = '', key = env.key) => {
      const r = await env.api(`/webhooks${query}`, { key })
      expect(r.status).toBe(200)
      return (await body(r)).data as { id: string; mode: string }[]
    }
    const seen = (await list('', testKey)).map((e) => e.id)
    expect(seen).toContain(sandbox.id)
    expect(seen).not.toContain(live.id)
    expect((await list('?mode=test', testKey)).map((e) => e.id)).toEqual(seen)
    expect((await env.api(`/webhooks/${live.id}`, { key: testKey })).status).toBe(404)

    // A live key: live endpoints by default (and with mode=live), test ones with mode=test, both with all.
    const byDefault = await list()
    expect(byDefault.map((e) => e.id)).toContain(live.id)
    expect(byDefault.every((e) => e.mode === 'live')).toBe(true)
    expect(await list('?mode=live')).toEqual(byDefault)
    const tests = await list('?mode=test')
    expect(tests.map((e) => e.id)).toContain(sandbox.id)
    expect(tests.every((e) => e.mode === 'test')).toBe(true)
    expect((await list('?mode=all')).map((e) => e.id).sort()).toEqual([...byDefault, ...tests].map((e) => e.id).sort())
    // It may still read and change a test endpoint by id.
    expect((await env.api(`/webhooks/${sandbox.id}`)).status).toBe(200)
    expect((await body(await env.api(`/webhooks/${sandbox.id}`, { method: 'PATCH', json: { name: 'sandbox' } }))).data).toMatchObject({
      name: 'sandbox',
      mode: 'test',
    })

    // A test key asking for more than its sandbox is told how to ask instead of getting a partial list.
    for (const mode of ['live', 'all']) {
      const refused = await env.api(`/webhooks?mode=${mode}`, { key: testKey })
      expect(refused.status).toBe(403)
      const json = await body(refused)
      expect(json.error).toMatchObject({ code: 'forbidden', details: { mode, keyMode: 'test' } })
      expect(json.error.message).toContain('mode=test')
    }
    expect((await env.api('/webhooks?mode=both')).status).toBe(400)
    // A live key may create a test endpoint explicitly.
    expect((await env.createEndpoint({ url: 'http://127.0.0.1:9/t2', events: ['*'], mode: 'test' })).mode).toBe('test')
  })

  test('POST honours Idempotency-Key: the same answer (and secret), one endpoint', async () => {
    const headers = { 'idempotency-key': `create-${Math.random()}` }
    const json = { url: 'http://127.0.0.1:9/idem', events: ['*'], name: 'idem' }
    const a = await env.api('/webhooks', { method: 'POST', json, headers })
    const b = await env.api('/webhooks', { method: 'POST', json, headers })
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    const [x, y] = [(await body(a)).data, (await body(b)).data]
    expect(y.id).toBe(x.id)
    expect(y.secret).toBe(x.secret)
    const named = (await body(await env.api('/webhooks'))).data.filter((e: any) => e.name === 'idem')
    expect(named).toHaveLength(1)
  })
})

describe('rotate-secret', () => {
  test('a new secret once; the old keeps a 24 h grace; grace false stops it at once', async () => {
    const ep = await env.createEndpoint({ url: 'http://127.0.0.1:9/r', events: ['*'] })
    let res = await env.api(`/webhooks/${ep.id}/rotate-secret`, { method: 'POST' })
    expect(res.status).toBe(200)
    const rotated = (await body(res)).data
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(ep.secret)
    expect(rotated.previousSecretExpiresAt).toBe(new Date(env.clock.now() + 24 * 3_600_000).toISOString())
    expect((await body(await env.api(`/webhooks/${ep.id}`))).data).not.toHaveProperty('secret')
    env.clock.advance(24 * 3_600_000)
    expect((await body(await env.api(`/webhooks/${ep.id}`))).data.previousSecretExpiresAt).toBeNull()

    res = await env.api(`/webhooks/${ep.id}/rotate-secret`, { method: 'POST', json: { grace: false } })
    expect((await body(res)).data.previousSecretExpiresAt).toBeNull()
    res = await env.api(`/webhooks/${ep.id}/rotate-secret`, { method: 'POST', json: { grace: 'no' } })
    expect(res.status).toBe(400)
  })
})

describe('info and types', () => {
  test('GET /webhooks/info: egress, schedule, attempts, time-out, signature headers, mTLS', async () => {
    const res = await env.api('/webhooks/info')
    expect(res.status).toBe(200)
    const info = (await body(res)).data
    expect(info).toMatchObject({
      egressIps: [],
      egressIpsConfigured: false,
      retrySchedule: { live: [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400], test: [5, 300, 1800] },
      maxAttempts: { live: 10, test: 4 },
      jitter: 0.2,
      timeoutSeconds: 15,
      signatureHeaders: ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-service-signature'],
      mtlsConfigured: false,
      maxBatchSize: 100,
      autoDisable: { consecutiveFailures: 20, withoutSuccessSeconds: 432000 },
    })
    const pinned = await webhooksEnv({ env: { LNK_WEBHOOK_EGRESS_IPS: '203.0.113.7, 2001:db8::7' } })
    try {
      const data = (await body(await pinned.api('/webhooks/info'))).data
      expect(data.egressIps).toEqual(['203.0.113.7', '2001:db8::7'])
      expect(data.egressIpsConfigured).toBe(true)
    } finally {
      await pinned.cleanup()
    }
  })

  test('GET /webhooks/types?lang=ts compiles; lang=go holds structs with json tags; other langs are 400', async () => {
    const ts = (await body(await env.api('/webhooks/types?lang=ts'))).data
    expect(ts.lang).toBe('ts')
    for (const type of ['link.created', 'link.clicked', 'conversion.created', 'webhook.test']) expect(ts.source).toContain(type)
    const dir = mkdtempSync(join(tmpdir(), 'lnk-types-'))
    const file = join(dir, 'events.ts')
    writeFileSync(file, ts.source)
    const tsc = Bun.spawnSync([join(ROOT, 'node_modules/.bin/tsc'), '--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', file], {
      cwd: dir,
      stderr: 'pipe',
      stdout: 'pipe',
    })
    expect(tsc.stdout.toString() + tsc.stderr.toString()).not.toContain('error')
    expect(tsc.exitCode).toBe(0)

    const go = (await body(await env.api('/webhooks/types?lang=go'))).data
    expect(go.lang).toBe('go')
    expect(go.source).toContain('json:"')
    expect(go.source).toMatch(/type \w+ struct/)
    expect((await env.api('/webhooks/types?lang=rust')).status).toBe(400)
  })
})
