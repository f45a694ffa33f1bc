// Finished deliveries (success, dead) and their attempts are pruned after LNK_WEBHOOK_RETENTION_DAYS by the
// periodic job; a delivery still retrying stays whatever its age.
import { afterAll, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { enqueueJob, rawRows } from '../helpers'
import { PRUNE_DELIVERIES, WEBHOOKS_PERIODIC as PERIODIC_TASKS } from '../../src/modules/webhooks'
import { deliveries, receiver, webhooksEnv } from './_webhooks'

const DAY = 86_400_000
const rx = receiver((req) => ({ status: req.body.includes('"retry-me"') ? 500 : 200 }))
afterAll(() => rx.stop())

test('finished deliveries go after the retention with their attempts; retrying ones stay', async () => {
  expect(PERIODIC_TASKS.find((t) => t.jobType === PRUNE_DELIVERIES)?.pattern).toBe('41 * * * *')
  const env = await webhooksEnv({ clock: new ManualClock(Date.UTC(2026, 2, 1, 12)), env: { LNK_WEBHOOK_RETENTION_DAYS: '7' } })
  try {
    const ep = await env.createEndpoint({ url: rx.url(), events: ['link.created'] })
    await env.emit('link.created')
    await env.emit('link.created', { slug: 'retry-me' })
    await env.run()
    const before = await deliveries(env, ep.id)
    expect(before.map((d: any) => d.status).sort()).toEqual(['failed', 'success'])
    // Storage itself, here and below: retention is about rows leaving the tables.
    const count = async (table: string) => (await rawRows<{ n: number }>(env, `SELECT COUNT(*) AS n FROM ${table}`))[0]!.n
    expect(await count('webhook_attempts')).toBe(2)

    // Six days on nothing goes; eight days on the success (and its attempt) does, the retrying one stays.
    for (const [days, left] of [
      [6, 2],
      [8, 1],
    ] as const) {
      env.clock.set(Date.UTC(2026, 2, 1, 12) + days * DAY)
      await enqueueJob(env.rt, { type: PRUNE_DELIVERIES })
      await env.rt.worker.runDue()
      expect((await deliveries(env, ep.id)).length).toBe(left)
    }
    const [kept] = await deliveries(env, ep.id)
    expect(kept.status).toBe('failed')
    expect(await count('webhook_attempts')).toBeGreaterThanOrEqual(1)
    expect(await rawRows(env, 'SELECT COUNT(*) AS n FROM webhook_attempts WHERE delivery_id = ?', before.find((d: any) => d.status === 'success').id)).toEqual([
      { n: 0 },
    ])
  } finally {
    await env.cleanup()
  }
})
