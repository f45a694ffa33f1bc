// The optional rollup grains give the same answers as the rows they stand for: a workspace's minutes for the
// partial hours at the ends of a range (against the same question read from raw clicks through a scoped
// key), and links' month sums written by the hourly job (against the answers before it ran).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/platform/clock'
import { ANALYTICS_PERIODIC, PRUNE_CLICKS, ROLL_MONTHS } from '../../src/modules/analytics'
import { body, enqueueJob, setup, type TestEnv } from '../helpers'
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
  env = await setup({ clock, env: { LNK_TRUST_PROXY: '1' } })
  api = await account(env)
  alpha = await api.make({ destinationUrl: 'https://example.com/a', slug: 'alpha', tags: ['all'] })
  beta = await api.make({ destinationUrl: 'https://example.com/b', slug: 'beta', tags: ['all'] })
  // A key whose scope filter covers every link: it reads link rollups and raw clicks, never the
  // workspace's minutes, so it answers the same questions the slower way.
  const res = await env.request('/v1/api-keys', {
    method: 'POST',
    key: api.key,
    json: { name: 'all links', permissions: ['analytics:read'], scopeFilters: { tags: ['all'] } },
  })
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
    expect((await sql(env, "SELECT COUNT(*) AS n FROM workspace_rollups WHERE grain = 'minute'"))[0].n).toBe(42)
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
    await enqueueJob(env.rt, { type: ROLL_MONTHS })
    expect(await env.rt.worker.runDue()).toBe(1)
    // January and February are over (and have been for a day); March is not. (The cast: PostgreSQL's SUM of
    // a bigint column is numeric, which arrives as a string.)
    const months = await sql<{ bucket: number; clicks: number }>(
      env,
      "SELECT bucket, CAST(SUM(clicks) AS BIGINT) AS clicks FROM link_rollups WHERE grain = 'month' GROUP BY bucket ORDER BY bucket",
    )
    expect(months).toEqual([
      { bucket: Date.UTC(2026, 0, 1), clicks: 120 },
      { bucket: Date.UTC(2026, 1, 1), clicks: 2 },
    ])
    const after = await Promise.all(questions.map(async (q) => [await get(q), await get(q, scoped)]))
    expect(after).toEqual(before)
    expect(before[0]![0].links.map((l: any) => [l.slug, l.clicks])).toEqual(
      [
        ['alpha', 41],
        ['beta', 81],
      ].sort((a, b) => (b[1] as number) - (a[1] as number)),
    )
  })
})

describe("links' quarter rollups", () => {
  test('the hourly job sums a quarter once its months are, and every answer stays the same', async () => {
    const questions = [
      '/v1/analytics/top-links?from=2025-12-20&to=2026-04-03',
      '/v1/analytics/top-links?from=2025-12-20&to=2026-04-03&sort=uniqueClicks',
      '/v1/analytics/top-links?from=2026-01-01T00:00:00Z&to=2026-04-01T00:00:00Z',
      `/v1/analytics/overview?from=2026-01-01&to=2026-04-03&linkId=${alpha.id}`,
      `/v1/analytics/timeline?from=2025-12-01&to=2026-04-03&interval=month&tz=America/New_York&linkId=${beta.id}`,
    ]
    // A click in March, the quarter's last month, after the last job run (20 March: clicks are never late).
    await click('alpha', Date.UTC(2026, 2, 25, 8), '9.9.9.10')
    await env.rt.modules.clicks.buffer.flush()
    clock.set(Date.UTC(2026, 3, 5))
    const before = await Promise.all(questions.map(async (q) => [await get(q), await get(q, scoped)]))
    await enqueueJob(env.rt, { type: ROLL_MONTHS })
    expect(await env.rt.worker.runDue()).toBe(1)
    // The first quarter (January to March) is over; the second is not.
    const quarters = await sql<{ bucket: number; clicks: number }>(
      env,
      "SELECT bucket, CAST(SUM(clicks) AS BIGINT) AS clicks FROM link_rollups WHERE grain = 'quarter' GROUP BY bucket",
    )
    expect(quarters).toEqual([{ bucket: Date.UTC(2026, 0, 1), clicks: 123 }])
    const after = await Promise.all(questions.map(async (q) => [await get(q), await get(q, scoped)]))
    expect(after).toEqual(before)
    expect(before[0]![0].links.map((l: any) => l.clicks)).toEqual([81, 42])
  })
})

describe("a workspace's second rollups", () => {
  // 4 May 12:30:12-12:30:15: a burst of 90 clicks, 37 ms apart, in one minute.
  const T1 = Date.UTC(2026, 4, 4, 12, 30)
  const at = (i: number) => T1 + 12_000 + i * 37

  test('answer the partial minute at the edge of a range exactly as raw clicks do', async () => {
    for (let i = 0; i < 90; i++) await click(i % 3 ? 'alpha' : 'beta', at(i), `7.7.${i % 11}.${i % 4}`, i % 13 === 0 ? UA.iphone : UA.chrome)
    await env.rt.modules.clicks.buffer.flush()
    // 12:30:12, 13, 14 and 15.
    expect((await sql(env, "SELECT COUNT(*) AS n FROM workspace_rollups WHERE grain = 'second' AND bucket >= ?", T1))[0].n).toBe(4)
    clock.set(T1 + 20 * MIN)
    // From 12:30:12.500 to 12:30:14.100: clicks 14 to 56, the whole second 13 from its rollup.
    const d = await get(`/v1/analytics/overview?from=${new Date(T1 + 12_500).toISOString()}&to=${new Date(T1 + 14_100).toISOString()}`)
    expect(d.totals.clicks).toBe(43)
    await expectSameAsRaw(T1)
  })

  test("top links count a partial hour's clicks from the other side of the hour when it holds fewer", async () => {
    const counts = async (from: number, to: number) => {
      const q = `from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`
      const top = await get(`/v1/analytics/top-links?${q}`)
      expect((await get(`/v1/analytics/top-links?${q}`, scoped)).links).toEqual(top.links)
      return Object.fromEntries(top.links.map((l: any) => [l.slug, l.clicks]))
    }
    // Clicks 0-80 of 90 (alpha: i % 3 != 0); the hour's rollups less clicks 81-89.
    expect(await counts(T1 - 2 * DAY, at(80) + 1)).toEqual({ alpha: 54, beta: 27 })
    expect(await counts(at(3), at(80) + 1)).toEqual({ alpha: 52, beta: 26 })
    expect(await counts(T1 - 2 * DAY, at(5) + 1)).toEqual({ alpha: 4, beta: 2 })
    // Less than an hour across two (11:50 to 12:30:13.1): raw clicks, the rollup of neither hour fits.
    expect(await counts(T1 - 40 * MIN, at(30) + 1)).toEqual({ alpha: 20, beta: 11 })
  })

  test('are kept a day: older ones are pruned, and their partial minutes read raw clicks again', async () => {
    clock.set(T1 + 2 * DAY)
    await enqueueJob(env.rt, { type: PRUNE_CLICKS })
    expect(await env.rt.worker.runDue()).toBe(1)
    expect((await sql(env, "SELECT COUNT(*) AS n FROM workspace_rollups WHERE grain = 'second'"))[0].n).toBe(0)
    expect((await sql(env, "SELECT COUNT(*) AS n FROM workspace_rollups WHERE grain = 'minute' AND bucket >= ?", T1))[0].n).toBe(1)
    await expectSameAsRaw(T1)
  })

  /** Ranges with an edge inside the busy minute, inside one of its seconds or between its clicks. */
  async function expectSameAsRaw(t: number) {
    const ranges = [
      [t + 12_500, t + 14_100],
      [t - 2 * DAY, at(40)],
      [t - 2 * DAY, at(40) + 1],
      [at(7) - 3, t + 3 * DAY],
      [t + 12_000, t + 13_000],
      [t + 13_999, t + 15_001],
      [t + 11_000, t + 40_000],
    ]
    for (const [from, to] of ranges) {
      const q = `from=${new Date(from!).toISOString()}&to=${new Date(to!).toISOString()}`
      const whole = await get(`/v1/analytics/overview?${q}`)
      expect(whole.totals.clicks).toBeGreaterThan(0)
      const viaLinks = await get(`/v1/analytics/overview?${q}`, scoped)
      expect(whole.totals).toEqual(viaLinks.totals)
      expect(whole.top).toEqual(viaLinks.top)
      expect((await get(`/v1/analytics/timeline?${q}&interval=hour`)).buckets).toEqual((await get(`/v1/analytics/timeline?${q}&interval=hour`, scoped)).buckets)
    }
  }
})
