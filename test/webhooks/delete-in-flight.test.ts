// Deleting an endpoint while one of its requests is out: the endpoint's deliveries go with it, so the attempt
// that comes back has nothing to be recorded against. It must end quietly: no foreign-key failure, no job
// failure or retry, no error in the log, and nothing left behind. A real receiver on 127.0.0.1 holds the
// request open until the endpoint is gone.
import { afterEach, describe, expect, test } from 'bun:test'
import { createLogger } from '../../src/platform/log'
import { body, rawRows } from '../helpers'
import { holdingReceiver, webhooksEnv, type Env } from './_webhooks'

const cleanups: (() => void | Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c()
})

async function world(status: number) {
  const lines: string[] = []
  const env = await webhooksEnv({ log: createLogger('debug', (line) => lines.push(line)) })
  const rx = holdingReceiver(status)
  cleanups.push(
    () => rx.release(),
    () => rx.stop(),
    () => env.cleanup(),
  )
  const ep = await env.createEndpoint({ url: rx.url, events: ['link.created'] })
  return { env, rx, ep, lines }
}

/** Warnings and errors logged (a failed job logs "job failed …" as a warning; a 500 logs an error). */
const trouble = (lines: string[]) => lines.filter((l) => /^\S+ (warn|error) /.test(l))

async function leftovers(env: Env, endpointId: string) {
  // Storage itself: whatever a deleted endpoint's delivery may have left in any table, seen by no API.
  const [deliveries] = await rawRows<{ n: number }>(env, 'SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ?', endpointId)
  const [attempts] = await rawRows<{ n: number }>(env, 'SELECT count(*) AS n FROM webhook_attempts')
  return {
    jobs: await rawRows(env, 'SELECT type, status, attempts, last_error AS "lastError" FROM jobs WHERE type = \'webhook.deliver\' OR last_error IS NOT NULL'),
    deliveries: deliveries!.n,
    attempts: attempts!.n,
  }
}

describe('deleting an endpoint while a request to it is in flight', () => {
  for (const status of [200, 503]) {
    test(`a delivery answered ${status} after the delete ends cleanly: nothing recorded, no job failure, no retry`, async () => {
      const { env, rx, ep, lines } = await world(status)
      await env.emit('link.created')
      const running = env.run()
      await rx.arrived
      const res = await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })
      expect(res.status).toBe(200)
      rx.release()
      await running
      expect(trouble(lines)).toEqual([])
      expect(await leftovers(env, ep.id)).toEqual({ jobs: [], deliveries: 0, attempts: 0 })
      // Nothing comes due later either (a failed job would be retried after its backoff).
      env.clock.advance(3_600_000)
      expect(await env.run()).toBe(0)
      expect(trouble(lines)).toEqual([])
    })
  }

  test('a test ping whose endpoint is deleted meanwhile answers 404, not a 500', async () => {
    const { env, rx, ep, lines } = await world(200)
    const ping = env.api(`/webhooks/${ep.id}/test`, { method: 'POST' })
    await rx.arrived
    expect((await env.api(`/webhooks/${ep.id}`, { method: 'DELETE' })).status).toBe(200)
    rx.release()
    const res = await ping
    expect(res.status).toBe(404)
    const json = await body(res)
    expect(json.error.code).toBe('not_found')
    expect(json.error.message).toContain('deleted while the ping was being sent')
    expect(trouble(lines)).toEqual([])
    expect(await leftovers(env, ep.id)).toEqual({ jobs: [], deliveries: 0, attempts: 0 })
  })
})
