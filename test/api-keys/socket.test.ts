// allowedIps against a real listener (startServer, as `lnk serve` runs): the socket address is the client
// unless LNK_TRUST_PROXY says a proxy's X-Forwarded-For is to be believed. Loopback only.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type RunningServer } from '../../src/server'
import { body, bootstrapAccount, setup, type TestEnv } from '../helpers'

interface Live {
  env: TestEnv
  server: RunningServer
  admin: string
}

async function start(extra: Record<string, string> = {}): Promise<Live> {
  const env = await setup({ env: { LNK_PORT: '0', LNK_HOST: '127.0.0.1', ...extra } })
  const server = startServer(env.rt)
  const admin = (await bootstrapAccount(env.rt, `Socket ${extra.LNK_TRUST_PROXY ?? 'direct'}`)).apiKey.key
  return { env, server, admin }
}

async function stop(live: Live | undefined) {
  if (!live) return
  await live.server.shutdown('test over')
  await live.env.cleanup()
}

function send(live: Live, key: string, path: string, init: { json?: unknown; xff?: string } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` }
  if (init.xff) headers['x-forwarded-for'] = init.xff
  if (init.json !== undefined) headers['content-type'] = 'application/json'
  return fetch(`${live.server.url}${path}`, {
    method: init.json !== undefined ? 'POST' : 'GET',
    headers,
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  })
}

async function newKey(live: Live, allowedIps: string[]) {
  const res = await send(live, live.admin, '/v1/api-keys', { json: { name: 'socket', allowedIps } })
  expect(res.status).toBe(201)
  return (await body(res)).data as { id: string; key: string }
}

describe('without LNK_TRUST_PROXY', () => {
  let live: Live
  beforeAll(async () => {
    live = await start()
  })
  afterAll(() => stop(live))

  test('the socket address decides; a forged X-Forwarded-For neither admits nor refuses', async () => {
    const loopback = await newKey(live, ['127.0.0.1', '::1'])
    const res = await send(live, loopback.key, '/v1/me', { xff: '192.0.2.5' })
    expect(res.status).toBe(200)
    const view = await body(await send(live, live.admin, `/v1/api-keys/${loopback.id}`))
    expect(view.data.lastUsedIp).toBe('127.0.0.1')

    const documentation = await newKey(live, ['192.0.2.5'])
    const refused = await send(live, documentation.key, '/v1/me', { xff: '192.0.2.5' })
    expect(refused.status).toBe(403)
    const json = await body(refused)
    expect(json.error).toMatchObject({ code: 'ip_not_allowed', details: { ip: '127.0.0.1' } })
  })
})

describe('with LNK_TRUST_PROXY=1', () => {
  let live: Live
  beforeAll(async () => {
    live = await start({ LNK_TRUST_PROXY: '1' })
  })
  afterAll(() => stop(live))

  test("the proxy's entry decides; without the header the socket address does", async () => {
    const documentation = await newKey(live, ['192.0.2.5'])
    expect((await send(live, documentation.key, '/v1/me', { xff: '192.0.2.5' })).status).toBe(200)
    expect((await send(live, documentation.key, '/v1/me')).status).toBe(403)

    const loopback = await newKey(live, ['127.0.0.1'])
    const refused = await send(live, loopback.key, '/v1/me', { xff: '192.0.2.5' })
    expect(refused.status).toBe(403)
    expect((await body(refused)).error.code).toBe('ip_not_allowed')
    expect((await send(live, loopback.key, '/v1/me')).status).toBe(200)
  })
})
