// Key authentication (spec section 5): 401 cases, paused keys, workspace switching, permissions, /v1/me.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { ManualClock, startOfNextUtcMonth } from '../../src/platform/clock'
import { bearerCredential } from '../../src/http/auth'
import { startServer } from '../../src/server'
import { hashKey } from '../../src/modules/identity/keys'
import { revokeApiKey } from '../../src/modules/api-keys/service'
import { addMember, createWorkspace } from '../../src/modules/identity/service'
import { conformance } from '../conformance'
import { body, bootstrapAccount, makeKey, rawRows, setup, type TestEnv } from '../helpers'

const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0))
let env: TestEnv
let acct: Awaited<ReturnType<typeof bootstrapAccount>>

beforeAll(async () => {
  env = await setup({ clock })
  acct = await bootstrapAccount(env.rt, 'Acme')
})
afterAll(() => env.cleanup())

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status)
  const json = await body(res)
  expect(json).toMatchObject({ success: false, error: { code } })
  return json
}

describe('401 unauthorized', () => {
  test('missing credential', async () => {
    const res = await env.request('/v1/me')
    await expectError(res, 401, 'unauthorized')
    expect(res.headers.get('www-authenticate')).toContain('Bearer')
  })

  test('wrong scheme, malformed key, unknown key', async () => {
    await expectError(await env.request('/v1/me', { headers: { authorization: `Basic ${btoa('a:b')}` } }), 401, 'unauthorized')
    await expectError(await env.request('/v1/me', { headers: { authorization: 'Bearer lnk_live_short' } }), 401, 'unauthorized')
    await expectError(await env.request('/v1/me', { headers: { authorization: `Bearer lnk_prod_${'a'.repeat(32)}` } }), 401, 'unauthorized')
    await expectError(await env.request('/v1/me', { key: `lnk_live_${'A'.repeat(32)}` }), 401, 'unauthorized')
  })

  test('the credential must be exact: no Unicode or control whitespace beside it (U+00A0, VT, FF, NEL)', async () => {
    const key = acct.apiKey.key
    // Values a Request can carry (Latin-1): each was taken for the key by a \s-based parser, trimming the extra.
    for (const value of [
      `Bearer ${key}\u00a0`,
      `Bearer\u00a0${key}`,
      `Bearer \u00a0${key}`,
      `Bearer ${key}\u000b`,
      `Bearer\u000c${key}`,
      `Bearer ${key}\u0085`,
    ]) {
      const json = await expectError(await env.request('/v1/me', { headers: { authorization: value } }), 401, 'unauthorized')
      expect(json.error.message).toMatch(/Bearer|Invalid API key/)
    }
  })

  test('SP and HTAB are the only whitespace: around the value and between scheme and key', async () => {
    const key = acct.apiKey.key
    for (const value of [`Bearer  ${key} `, `Bearer\t${key}\t`, ` \tBearer \t ${key} \t `, `bearer ${key}`, `BEARER\t${key}`]) {
      const res = await env.request('/v1/me', { headers: { authorization: value } })
      expect({ value, status: res.status }).toEqual({ value, status: 200 })
    }
  })

  test('every Unicode space is refused as separator or padding (the parser, for values a proxy might decode)', () => {
    const key = acct.apiKey.key
    expect(bearerCredential(`Bearer ${key}`)).toBe(key)
    expect(bearerCredential(`Bearer \t ${key} \t`)).toBe(key)
    // Everything JavaScript's \s matches beyond SP and HTAB, and U+0085.
    const spaces = [
      '\n',
      '\r',
      '\v',
      '\f',
      '\u0085',
      '\u00a0',
      '\u1680',
      '\u2000',
      '\u2001',
      '\u2002',
      '\u2003',
      '\u2004',
      '\u2005',
      '\u2006',
      '\u2007',
      '\u2008',
      '\u2009',
      '\u200a',
      '\u2028',
      '\u2029',
      '\u202f',
      '\u205f',
      '\u3000',
      '\ufeff',
    ]
    for (const sp of spaces) {
      for (const value of [`Bearer${sp}${key}`, `Bearer ${key}${sp}`, `${sp}Bearer ${key}`, `Bearer ${sp}${key}`]) {
        const got = bearerCredential(value)
        // Either not a Bearer value at all, or a token that is not the key (and so fails the key format).
        expect({ sp: sp.codePointAt(0)!.toString(16), ok: got === key }).toEqual({ sp: sp.codePointAt(0)!.toString(16), ok: false })
      }
    }
  })

  test('on the wire: a Unicode space after the key is 401, SP and HTAB padding still works', async () => {
    const live = await setup({ env: { LNK_PORT: '0', LNK_HOST: '127.0.0.1' } })
    const server = startServer(live.rt)
    try {
      const owner = await bootstrapAccount(live.rt, 'Wire')
      const statusFor = (value: Buffer) =>
        new Promise<number>((resolve, reject) => {
          const socket = connect(server.port, '127.0.0.1', () => {
            socket.write(
              Buffer.concat([Buffer.from('GET /v1/me HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: '), value, Buffer.from('\r\n\r\n')]),
            )
          })
          let head = ''
          socket.on('data', (chunk) => (head += chunk.toString('latin1')))
          socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1])))
          socket.on('error', reject)
        })
      const key = owner.apiKey.key
      expect(await statusFor(Buffer.from(`Bearer ${key}`))).toBe(200)
      expect(await statusFor(Buffer.from(`Bearer \t ${key} \t`))).toBe(200)
      // U+00A0 as the one byte Latin-1 gives it, and as UTF-8; other spaces as UTF-8.
      expect(await statusFor(Buffer.concat([Buffer.from(`Bearer ${key}`), Buffer.from([0xa0])]))).toBe(401)
      expect(await statusFor(Buffer.concat([Buffer.from('Bearer'), Buffer.from([0xa0]), Buffer.from(key)]))).toBe(401)
      for (const sp of ['\u00a0', '\u2003', '\u3000', '\u202f', '\ufeff']) {
        expect(await statusFor(Buffer.from(`Bearer ${key}${sp}`, 'utf8'))).toBe(401)
        expect(await statusFor(Buffer.from(`Bearer${sp}${key}`, 'utf8'))).toBe(401)
      }
    } finally {
      await server.shutdown('test over')
      await live.cleanup()
    }
  })

  test('revoked key', async () => {
    const k = await makeKey(env.rt, acct.workspace.slug)
    expect((await env.request('/v1/me', { key: k.key })).status).toBe(200)
    await revokeApiKey(env.rt.modules.apiKeys.ctx, null, k.id, 'leaked')
    const json = await expectError(await env.request('/v1/me', { key: k.key }), 401, 'unauthorized')
    expect(json.error.message).toContain('revoked')
  })

  test('expired key stops at its expiry instant', async () => {
    const k = await makeKey(env.rt, acct.workspace.slug)
    await env.rt.modules.identity.repo.updateKey(k.id, { expiresAt: clock.now() + 60_000 })
    expect((await env.request('/v1/me', { key: k.key })).status).toBe(200)
    clock.advance(60_000)
    const json = await expectError(await env.request('/v1/me', { key: k.key }), 401, 'unauthorized')
    expect(json.error.message).toContain('expired')
  })

  test('only the SHA-256 of a key is stored', async () => {
    const k = await makeKey(env.rt, acct.workspace.slug)
    // Storage itself is what this checks: every stored column of every key.
    const dump = JSON.stringify(await rawRows(env, 'SELECT * FROM api_keys'))
    expect(dump).not.toContain(k.key)
    expect(dump).toContain(hashKey(k.key))
  })

  test('401 comes before body validation', async () => {
    await expectError(await env.request('/v1/api-keys', { method: 'POST', json: { name: 42 } }), 401, 'unauthorized')
  })
})

describe('key states and restrictions', () => {
  test('a paused key is 403 key_paused until resumed', async () => {
    const k = await makeKey(env.rt, acct.workspace.slug)
    await env.rt.modules.identity.repo.updateKey(k.id, { pausedAt: clock.now(), pausedReason: 'holiday' })
    const json = await expectError(await env.request('/v1/me', { key: k.key }), 403, 'key_paused')
    expect(json.error.message).toContain('holiday')
    await env.rt.modules.identity.repo.updateKey(k.id, { pausedAt: null, pausedReason: null })
    expect((await env.request('/v1/me', { key: k.key })).status).toBe(200)
  })

  test('monthlyCallCap: exactly the cap succeeds, then 429 with Retry-After until the month turns', async () => {
    const k = await makeKey(env.rt, acct.workspace.slug)
    await env.rt.modules.identity.repo.updateKey(k.id, { monthlyCallCap: 3 })
    for (let i = 1; i <= 3; i++) {
      const res = await env.request('/v1/me', { key: k.key })
      expect(res.status).toBe(200)
      expect((await body(res)).data.usage).toEqual({ month: '2026-11', apiCalls: i, monthlyCallCap: 3 })
    }
    const res = await env.request('/v1/me', { key: k.key })
    await expectError(res, 429, 'monthly_cap_exceeded')
    expect(Number(res.headers.get('retry-after'))).toBe(Math.ceil((startOfNextUtcMonth(clock.now()) - clock.now()) / 1000))
    // Refused calls are not counted.
    expect(await env.rt.modules.identity.repo.callsInMonth(k.id, '2026-11')).toBe(3)
    clock.set(Date.UTC(2026, 11, 1, 0, 0, 0))
    const next = await env.request('/v1/me', { key: k.key })
    expect(next.status).toBe(200)
    expect((await body(next)).data.usage.apiCalls).toBe(1)
    clock.set(Date.UTC(2026, 10, 22, 12, 0, 0))
  })

  test('a missing permission is 403 forbidden naming it', async () => {
    const k = await makeKey(env.rt, acct.workspace.slug, 'links:read')
    const json = await expectError(await env.request('/v1/api-keys', { key: k.key }), 403, 'forbidden')
    expect(json.error.details.required).toBe('api_keys:read')
    // Any valid key may call /me.
    expect((await env.request('/v1/me', { key: k.key })).status).toBe(200)
    const reader = await makeKey(env.rt, acct.workspace.slug, 'api_keys:read')
    expect((await env.request('/v1/api-keys', { key: reader.key })).status).toBe(200)
  })
})

describe('workspaces', () => {
  test('X-Workspace-Id selects another workspace of the user, by id or slug', async () => {
    const other = await createWorkspace(env.rt.modules.identity.ctx, { name: 'Side Project', ownerEmail: acct.user.email })
    const me = await body(await env.request('/v1/me', { key: acct.apiKey.key }))
    expect(me.data.workspace.id).toBe(acct.workspace.id)
    expect(me.data.workspaces.map((w: any) => w.slug).sort()).toEqual(['acme', 'side-project'])

    for (const ref of [other.id, other.slug]) {
      const res = await env.request('/v1/me', { key: acct.apiKey.key, headers: { 'x-workspace-id': ref } })
      expect(res.status).toBe(200)
      expect((await body(res)).data.workspace).toMatchObject({ id: other.id, slug: 'side-project', role: 'owner' })
    }
    // Listing keys follows the selected workspace.
    const keys = await body(await env.request('/v1/api-keys', { key: acct.apiKey.key, headers: { 'x-workspace-id': other.id } }))
    expect(keys.data).toEqual([])
  })

  test('a workspace the user is not a member of is 403', async () => {
    const stranger = await bootstrapAccount(env.rt, 'Stranger Co')
    await expectError(await env.request('/v1/me', { key: acct.apiKey.key, headers: { 'x-workspace-id': stranger.workspace.id } }), 403, 'forbidden')
    await expectError(await env.request('/v1/me', { key: acct.apiKey.key, headers: { 'x-workspace-id': 'ws_doesnotexist' } }), 403, 'forbidden')
  })

  test('an empty or overlong X-Workspace-Id is 400 naming the header, within the bounds the document states', async () => {
    const param = conformance().doc.components.parameters.WorkspaceId!
    expect(param).toMatchObject({ name: 'X-Workspace-Id', in: 'header', schema: { type: 'string', minLength: 1, maxLength: 128 } })
    const refused = async (value: string) => {
      const json = await expectError(await env.request('/v1/me', { key: acct.apiKey.key, headers: { 'x-workspace-id': value } }), 400, 'validation_failed')
      expect(json.error.details).toMatchObject({ location: 'headers', issues: [{ path: 'X-Workspace-Id' }] })
      expect(json.error.message).toContain('X-Workspace-Id')
      return json.error.message as string
    }
    expect(await refused('')).toContain('must not be empty')
    // Fetch's Headers strip surrounding whitespace: a blank value is an empty one.
    expect(await refused(' \t ')).toContain('must not be empty')
    expect(await refused('w'.repeat(param.schema.maxLength + 1))).toContain(`at most ${param.schema.maxLength}`)
    // At the bound the header is read as a workspace reference: no such workspace, so 403, not 400.
    await expectError(
      await env.request('/v1/me', { key: acct.apiKey.key, headers: { 'x-workspace-id': 'w'.repeat(param.schema.maxLength) } }),
      403,
      'forbidden',
    )
    // Still no answer but 401 without a valid key: the header is read only once the key is known.
    await expectError(await env.request('/v1/me', { headers: { 'x-workspace-id': '' } }), 401, 'unauthorized')
  })

  test("on the wire: an empty X-Workspace-Id line is 400, not the key's own workspace", async () => {
    const live = await setup({ env: { LNK_PORT: '0', LNK_HOST: '127.0.0.1' } })
    const server = startServer(live.rt)
    try {
      const owner = await bootstrapAccount(live.rt, 'Wire workspace')
      const answer = (workspaceLine: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect(server.port, '127.0.0.1', () => {
            socket.write(`GET /v1/me HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer ${owner.apiKey.key}\r\n${workspaceLine}\r\n`)
          })
          let text = ''
          socket.on('data', (chunk) => (text += chunk.toString('latin1')))
          socket.on('end', () => resolve(text))
          socket.on('error', reject)
        })
      const empty = await answer('X-Workspace-Id:\r\n')
      expect(empty).toMatch(/^HTTP\/1\.1 400 /)
      expect(empty).toContain('"code":"validation_failed"')
      expect(empty).toContain('"path":"X-Workspace-Id"')
      expect(await answer(`X-Workspace-Id: ${owner.workspace.slug}\r\n`)).toMatch(/^HTTP\/1\.1 200 /)
      expect(await answer('')).toMatch(/^HTTP\/1\.1 200 /)
    } finally {
      await server.shutdown('test over')
      await live.cleanup()
    }
  })

  test('a member acts in a workspace they were added to', async () => {
    const team = await bootstrapAccount(env.rt, 'Team')
    const outsider = await bootstrapAccount(env.rt, 'Outsider')
    await expectError(await env.request('/v1/me', { key: outsider.apiKey.key, headers: { 'x-workspace-id': team.workspace.id } }), 403, 'forbidden')
    await addMember(env.rt.modules.identity.ctx, { workspace: team.workspace.slug, email: outsider.user.email })
    const res = await env.request('/v1/me', { key: outsider.apiKey.key, headers: { 'x-workspace-id': team.workspace.id } })
    expect(res.status).toBe(200)
    expect((await body(res)).data.workspace).toMatchObject({ id: team.workspace.id, role: 'member' })
  })
})

describe('GET /v1/me', () => {
  test('returns user, workspace, key facts and usage, never the secret', async () => {
    const k = await makeKey(env.rt, acct.workspace.slug, 'links:read,links:write', 'test')
    const res = await env.request('/v1/me', { key: k.key })
    const text = await res.text()
    expect(text).not.toContain(k.key)
    expect(text).not.toContain(hashKey(k.key))
    const json = JSON.parse(text)
    expect(json.success).toBe(true)
    expect(json.data.user).toMatchObject({ id: acct.user.id, email: acct.user.email })
    expect(json.data.workspace).toMatchObject({ id: acct.workspace.id, slug: 'acme', role: 'owner' })
    expect(json.data.apiKey).toEqual({
      id: k.id,
      name: expect.any(String),
      mode: 'test',
      permissions: ['links:read', 'links:write'],
      keyPrefix: k.key.slice(0, 12),
    })
    expect(json.data.usage).toEqual({ month: '2026-11', apiCalls: 1, monthlyCallCap: null })
  })

  test('lastUsedAt/lastUsedIp: written on first use, then at most once a minute', async () => {
    const k = await makeKey(env.rt, acct.workspace.slug)
    const start = clock.now()
    await env.request('/v1/me', { key: k.key })
    expect((await env.rt.modules.identity.repo.findKey(k.id))!.lastUsedAt).toBe(start)
    clock.advance(10_000)
    await env.request('/v1/me', { key: k.key })
    expect((await env.rt.modules.identity.repo.findKey(k.id))!.lastUsedAt).toBe(start)
    expect(env.rt.modules.identity.lastUsed.peek(k.id)?.at).toBe(start + 10_000)
    await env.rt.modules.identity.lastUsed.flush()
    expect((await env.rt.modules.identity.repo.findKey(k.id))!.lastUsedAt).toBe(start + 10_000)
    clock.advance(60_000)
    await env.request('/v1/me', { key: k.key })
    expect((await env.rt.modules.identity.repo.findKey(k.id))!.lastUsedAt).toBe(start + 70_000)
  })
})
