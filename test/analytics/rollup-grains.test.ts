// The optional rollup grains give the same answers as the rows they stand for: a workspace's minutes for the
// partial hours at the ends of a range (against the same question read from raw clicks through a scoped
// key), and links' month sums written by the hourly job (against the answers before it ran).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { enqueue } from '../../src/jobs/queue'
import { ANALYTICS_PERIODIC, ROLL_MONTHS } from '../../src/modules/analytics'
import { body, type TestEnv, setup } from '../helpers'
import { account, sql, UA, visit, type Api } from '../redirect/_redirect'

const MIN = 60_000
const DAY = 86_400_000
const T0 = Date.UTC(2026, 0, 20, 10)
const clock = new ManualClock(T0 - DAY)
let env: TestEnv
let api: Api
let scoped: string
let alpha: any
let beta: any

async function click(slug: string, at: number, ip: string, ua: string = UA.chrome) {
  clock.set(at)
  expect((await visit(env, slug, { ip, ua })).status).toBe(302)
}

const get = async (path: string, key = api.key) => (await body(await env.request(path, { key }))).data

beforeAll(async () => {
  env = setup({ clock, env: { LNK_TRUST_PROXY: '1' } })
  api = await account(env)
  alpha = await api.make({ destinationUrl: 'https://example.com/a', slug: 'alpha', tags: ['all'] })
  beta = await api.make({ destinationUrl: 'https://example.com/b', slug: 'beta', tags: ['all'] })
  // A key whose scope filter covers every link: it reads link rollups and raw clicks, never the
  // workspace's minutes, so it answers the same questions the slower way.
  const res = await env.request('/v1/api-keys', { method: 'POST', key: api.key, json: { name: 'all links', permissions: ['analytics:read'], scopeFilters: { tags: ['all'] } } })
  scoped = (await body(res)).data.key
  // 20 January 10:00-10:40: 40 minutes of clicks, some visitors coming back, a bot now and then.
  for (let m = 0; m < 40; m++) {
    for (let k = 0; k < 3; k++) {
      await click(k % 2 ? 'alpha' : 'beta', T0 + m * MIN + k * 7_000 + 500, `8.8.${m % 7}.${k}`, k === 2 && m % 5 === 0 ? UA.iphone : UA.chrome)
    }
    if (m % 9 === 0) await click('alpha', T0 + m * MIN + 30_000, '66.249.66.1', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)')
  }
  // 2 and 14 February.
  await click('alpha', Date.UTC(2026, 1, 2, 8), '9.9.9.9')
  await click('beta', Date.UTC(2026, 1, 14, 8), '9.9.9.9')
  await env.rt.modules.clicks.buffer.flush()
})
afterAll(() => env.cleanup())

describe("a workspace's minute rollups", () => {
  test('are written by the flush, and answer partial hours exactly as raw clicks do', async () => {
    // One per minute with clicks: the 40 of 20 January and the two in February.
    expect(sql(env, "SELECT COUNT(*) AS n FROM workspace_rollups WHERE grain = 'minute'")[0].n).toBe(42)
    const ranges = [
      [T0 + 5 * MIN + 3_000, T0 + 31 * MIN + 8_000],
      [T0 - 2 * DAY, T0 + 17 * MIN + 7_600],
      [T0 + 90_000, T0 + 2 * DAY],
      [T0 + 10 * MIN, T0 + 20 * MIN],
    ]
    for (const [from, to] of ranges) {
      const q = `from=${new Date(from!).toISOString()}&to=${new Date(to!).toISOString()}`
      const whole = await get(`/v1/analytics/overview?${q}`)
      const viaLinks = await get(`/v1/analytics/overview?${q}`, scoped)
      expect(whole.totals.clicks).toBeGreaterThan(0)
      expect(whole.totals).toEqual(viaLinks.totals)
      expect(whole.top).toEqual(viaLinks.top)
      expect((await get(`/v1/analytics/timeline?${q}&interval=hour`)).buckets).toEqual((await get(`/v1/analytics/timeline?${q}&interval=hour`, scoped)).buckets)
    }
    // 10:05:03-10:31:08 holds minutes 6-30 whole (75 clicks) and the clicks at 10:05:07.5, 10:05:14.5,
    // 10:31:00.5 and 10:31:07.5.
    const d = await get(`/v1/analytics/overview?from=${new Date(T0 + 5 * MIN + 3_000).toISOString()}&to=${new Date(T0 + 31 * MIN + 8_000).toISOString()}`)
    expect(d.totals.clicks).toBe(79)
  })
})

describe("links' month rollups", () => {
  test('the hourly job sums past months, and every answer stays the same', async () => {
    expect(ANALYTICS_PERIODIC.find((t) => t.jobType === ROLL_MONTHS)?.pattern).toBe('41 * * * *')
    const questions = [
      '/v1/analytics/top-links?from=2026-01-01&to=2026-03-31',
      '/v1/analytics/top-links?from=2026-01-01&to=2026-03-31&sort=uniqueClicks',
      '/v1/analytics/top-links?from=2026-01-15T00:00:00Z&to=2026-02-28T09:00:00Z',
      `/v1/analytics/overview?from=2026-01-01&to=2026-03-31&linkId=${alpha.id}`,
      `/v1/analytics/timeline?from=2026-01-01&to=2026-03-31&interval=week&linkId=${beta.id}`,
      `/v1/analytics/timeline?from=2025-12-20&to=2026-03-31&interval=month&tz=America/New_York&linkId=${alpha.id}`,
    ]
    clock.set(Date.UTC(2026, 2, 20))
    const before = await Promise.all(questions.map(async (q) => [await get(q), await get(q, scoped)]))
    enqueue(env.rt.db.db, { type: ROLL_MONTHS }, clock.now())
    expect(await env.rt.worker.runDue()).toBe(1)
    // January and February are over (and have been for a day); March is not.
    const months = sql<{ bucket: number; clicks: number }>(env, "SELECT bucket, SUM(clicks) AS clicks FROM link_rollups WHERE grain = 'month' GROUP BY bucket ORDER BY bucket")
    expect(months).toEqual([
      { bucket: Date.UTC(2026, 0, 1), clicks: 120 },
      { bucket: Date.UTC(2026, 1, 1), clicks: 2 },
    ])
    const after = await Promise.all(questions.map(async (q) => [await get(q), await get(q, scoped)]))
    expect(after).toEqual(before)
    expect(before[0]![0].links.map((l: any) => [l.slug, l.clicks])).toEqual([
      ['alpha', 41],
      ['beta', 81],
    ].sort((a, b) => (b[1] as number) - (a[1] as number)))
  })
})
