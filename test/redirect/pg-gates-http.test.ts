// The password throttle through the short-link path on two PostgreSQL nodes (issue 18): failures counted on
// either node block the address on both, as one node blocks it (gates.test.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { setupPg, type PgTestEnv, type TestEnv } from '../helpers'
import { account, visit, type Api } from './_redirect'

let a: PgTestEnv
let b: PgTestEnv
let api: Api
beforeAll(async () => {
  a = await setupPg({ env: { LNK_TRUST_PROXY: '1' } })
  b = await setupPg({ env: { LNK_TRUST_PROXY: '1' }, database: a.database })
  api = await account(a as unknown as TestEnv)
}, 30_000)
afterAll(async () => {
  await b?.cleanup()
  await a?.cleanup()
})

describe('the password gate on two nodes', () => {
  test('5 wrong attempts alternated over both nodes block the address on both', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/throttle', password: 'the-right-one' })
    const ip = '203.0.113.50'
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await visit(i % 2 ? a : b, link.slug, { ip, form: { gate: 'password', password: `wrong-${i}` } })).status)
    expect(statuses).toEqual([401, 401, 401, 401, 429])
    for (const node of [a, b]) {
      const blocked = await visit(node, link.slug, { ip, form: { gate: 'password', password: 'the-right-one' } })
      expect(blocked.status).toBe(429)
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
    }
    // Another address may still try, on either node.
    expect((await visit(a, link.slug, { ip: '203.0.113.51', form: { gate: 'password', password: 'the-right-one' } })).status).toBe(303)
  })
})
