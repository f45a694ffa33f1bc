// The long poll through a real listener: Bun.serve closes a connection silent for 10 s by default, so a poll
// held longer lifts that limit for its own request and still answers (an empty list after its wait), and a
// server stopping answers a held poll at once rather than waiting it out.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { bootstrapAccount } from '../helpers'
import { startLnk, type Lnk } from '../redirect/_server'

let lnk: Lnk
let key: string

beforeAll(async () => {
  lnk = await startLnk()
  key = (await bootstrapAccount(lnk.env.rt)).apiKey.key
})
afterAll(() => lnk?.stop())

const call = (path: string, init: RequestInit = {}) =>
  fetch(`${lnk.origin}/v1${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } })

test("a poll held 12 s (past Bun's 10 s idle timeout) answers 200 with an empty list", async () => {
  const session = ((await (await call('/webhooks/cli/sessions', { method: 'POST', body: '{}' })).json()) as { data: { id: string } }).data
  const res = await call(`/webhooks/cli/events?session=${session.id}&wait=12`)
  expect(res.status).toBe(200)
  expect(await res.json()).toEqual({ success: true, data: [] })
}, 20_000)
