// Raw clicks pruned after LNK_CLICK_RETENTION_DAYS by the periodic job while rollups keep the figures,
// and clicks stored before rollups existed rolled up once when the runtime starts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { ANALYTICS_PERIODIC as PERIODIC_TASKS, PRUNE_CLICKS } from '../../src/modules/analytics'
import { silentLogger } from '../../src/platform/log'
import { openRuntime, type Runtime } from '../../src/runtime'
import { body, enqueueJob, ON_PG, setup, type TestEnv } from '../helpers'
import { account, sql, UA, visit, type Api } from '../redirect/_redirect'

const DAY = 86_400_000
const T0 = Date.UTC(2026, 0, 10, 10)
const clock = new ManualClock(T0)
let env: TestEnv
let api: Api
let link: any

async function clickAt(at: number, ip: string) {
  clock.set(at)
  expect((await visit(env, link.slug, { ip, ua: UA.chrome })).status).toBe(302)
  await env.rt.modules.clicks.buffer.flush()
}

const overview = async (query: string) => (await body(await env.request(`/v1/analytics/overview?${query}`, { key: api.key }))).data.totals

beforeAll(async () => {
  env = await setup({ clock, env: { LNK_TRUST_PROXY: '1', LNK_CLICK_RETENTION_DAYS: '30' } })
  api = await account(env)
  link = await api.make({ destinationUrl: 'https://example.com/kept' })
  // Three clicks (two visitors) on 10 January, two on 20 February.
  await clickAt(T0, '8.8.8.8')
  await clickAt(T0 + 60_000, '8.8.8.8')
  await clickAt(T0 + 120_000, '1.1.1.1')
  await clickAt(T0 + 41 * DAY, '9.9.9.9')
  await clickAt(T0 + 41 * DAY + 1_000, '9.9.9.9')
})
afterAll(() => env.cleanup())

describe('retention', () => {
  test('the prune job is scheduled hourly and removes only clicks past the retention', async () => {
    expect(PERIODIC_TASKS.find((t) => t.jobType === PRUNE_CLICKS)?.pattern).toBe('29 * * * *')
    clock.set(T0 + 45 * DAY)
    await enqueueJob(env.rt, { type: PRUNE_CLICKS })
    expect(await env.rt.worker.runDue()).toBe(1)
    // Storage itself: retention is about rows leaving the clicks table.
    const left = await sql<{ clicked_at: number }>(env, 'SELECT clicked_at FROM clicks WHERE link_id = ? ORDER BY clicked_at', link.id)
    expect(left.map((r) => r.clicked_at)).toEqual([T0 + 41 * DAY, T0 + 41 * DAY + 1_000])
  })

  test('rollups keep the pruned clicks: whole hours and days still count, with their visitors', async () => {
    expect(await overview('from=2026-01-10&to=2026-01-10')).toMatchObject({ clicks: 3, uniqueVisitors: 2 })
    expect(await overview('from=2026-01-01&to=2026-02-28')).toMatchObject({ clicks: 5, uniqueVisitors: 3 })
    const timeline = (await body(await env.request(`/v1/analytics/timeline?linkId=${link.id}&from=2026-01-10&to=2026-01-10&interval=hour`, { key: api.key })))
      .data
    expect(timeline.buckets[10].clicks).toBe(3)
    // A partial hour needs raw clicks: past retention it reads as empty (docs/analytics.md says so).
    expect(await overview('from=2026-01-10T10:00:30Z&to=2026-01-10T10:30:00Z')).toMatchObject({ clicks: 0 })
    // The link's own counters are not touched by pruning.
    expect((await api.get(link.id)).totalClicks).toBe(5)
  })
})

describe('backfill of clicks stored before rollups existed', () => {
  test('a restart rolls them up once, the same as the flush would have', async () => {
    // The raw clicks still here (February's) as an older version would have left them: no rollups, no mark.
    // Storage itself, in this whole test: the tables are set and read as an upgrade finds and leaves them.
    const expected = (await sql(env, 'SELECT COUNT(*) AS n FROM clicks'))[0].n
    expect(expected).toBe(2)
    await sql(env, 'DELETE FROM link_rollups')
    await sql(env, 'DELETE FROM workspace_rollups')
    await sql(env, "DELETE FROM settings WHERE key = 'rollups_backfilled'")
    await env.rt.close()
    // Reads go through a connection of the restarted runtime's own on SQLite; on PostgreSQL env's raw
    // reader is a connection apart from the closed runtime's and reads the same database.
    const reader = (rt: Runtime) => (ON_PG ? env : { rt })

    const rt = await openRuntime(env.config, { clock, log: silentLogger })
    const after = {
      links: await sql(reader(rt), 'SELECT link_id, grain, bucket, clicks, bots FROM link_rollups ORDER BY 1, 2, 3'),
      workspaces: await sql(reader(rt), 'SELECT workspace_id, grain, bucket, clicks, bots FROM workspace_rollups ORDER BY 1, 2, 3'),
    }
    expect(after.links.map((r: any) => [r.grain, r.clicks])).toEqual([
      ['day', 2],
      ['hour', 2],
    ])
    expect(after.workspaces).toHaveLength(2)
    expect((await sql(reader(rt), "SELECT value FROM settings WHERE key = 'rollups_backfilled'"))[0].value).toBe('2')
    await rt.close()

    // A second start adds nothing.
    const again = await openRuntime(env.config, { clock, log: silentLogger })
    expect((await sql(reader(again), 'SELECT clicks FROM link_rollups ORDER BY grain')).map((r: any) => r.clicks)).toEqual([2, 2])
    await again.close()
  })
})
