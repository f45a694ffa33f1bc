// Analytics on PostgreSQL against SQLite: one script of links, clicks through real redirects, conversions and
// the maintenance jobs (prune and roll-months, run by the worker) on both engines on the same fixed clock;
// overview, timeline and top links answer the same before and after, and the jobs leave the same rows. Also
// the start-up steps PostgreSQL runs in init(): the minute marks, set once, and the backfill of clicks stored
// before rollups existed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PRUNE_CLICKS, ROLL_MONTHS } from '../../src/modules/analytics'
import { MINUTES_FROM, SECONDS_FROM } from '../../src/modules/analytics/port'
import { ManualClock } from '../../src/platform/clock'
import { body, enqueueJob, setupPg, setupSqlite, type PgTestEnv, type TestEnv } from '../helpers'
import { beacon } from '../conversions/_conversions'
import { account, UA, visit, type Api } from '../redirect/_redirect'

const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
const T0 = Date.UTC(2026, 0, 14, 9)
const ENV = { LNK_TRUST_PROXY: '1', LNK_CLICK_RETENTION_DAYS: '30' }

type AnyEnv = TestEnv | PgTestEnv

/** Rows of a statement on either engine (storage itself, for what the jobs leave behind). */
async function rows(env: AnyEnv, text: string): Promise<Record<string, unknown>[]> {
  const store = env.rt.store
  if (store.engine === 'sqlite') return store.db.sqlite.query(text).all() as Record<string, unknown>[]
  return (await store.sql.unsafe(text)) as Record<string, unknown>[]
}

const count = async (env: AnyEnv, text: string) => Number(Object.values((await rows(env, text))[0]!)[0])

async function runJob(env: AnyEnv, clock: ManualClock, type: string) {
  await enqueueJob(env.rt, { type })
  expect(await env.rt.worker.runDue()).toBeGreaterThanOrEqual(1)
}

/** The answers of one engine: the analytics API after the clicks, then after the maintenance jobs. */
async function script(env: AnyEnv, clock: ManualClock) {
  const api: Api = await account(env as TestEnv)
  const links = {
    alpha: await api.make({ destinationUrl: 'https://example.com/alpha', slug: 'alpha', tags: ['spring'], conversionTracking: true, title: 'Alpha' }),
    beta: await api.make({ destinationUrl: 'https://example.com/beta', slug: 'beta' }),
    gamma: await api.make({ destinationUrl: 'https://example.com/gamma', slug: 'gamma' }),
  }
  const slugOf = new Map(Object.entries(links).map(([slug, l]) => [l.id as string, slug]))
  const click = async (slug: string, at: number, ip: string, ua: string = UA.chrome, referer?: string) => {
    clock.set(at)
    const res = await visit(env as TestEnv, slug, { ip, ua, referer })
    expect(res.status).toBe(302)
    return res
  }
  // January (past retention at the end), February and early April: several days, hours and visitors.
  const day = 86_400_000
  const plan: [string, number, string, string?, string?][] = [
    ['alpha', T0, '8.8.8.8', UA.chrome, 'https://news.example.org/a'],
    ['alpha', T0 + 60_000, '8.8.8.8'],
    ['alpha', T0 + 2 * day, '81.2.69.142', UA.iphone],
    ['beta', T0 + 2 * day + 5_000, '9.9.9.9', UA.firefox, 'https://t.co/x'],
    ['gamma', T0 + 20 * day, '1.1.1.1', UA.android],
    ['alpha', T0 + 20 * day + 3_600_000, '66.249.66.1', GOOGLEBOT],
    ['beta', T0 + 35 * day, '8.8.8.8'],
    ['alpha', T0 + 80 * day, '10.0.0.7'],
    ['alpha', T0 + 80 * day + 1_000, '10.0.0.8', UA.chromeMac],
  ]
  for (const [slug, at, ip, ua, referer] of plan) await click(slug, at, ip, ua, referer)
  await env.rt.modules.clicks.buffer.flush()
  // Conversions on two of alpha's clicks (their lnk_cid), one beacon resent.
  const cids: string[] = []
  for (const ip of ['203.0.113.10', '203.0.113.11']) {
    const res = await click('alpha', T0 + 81 * day, ip)
    cids.push(new URL(res.headers.get('location')!).searchParams.get('lnk_cid')!)
  }
  await env.rt.modules.clicks.buffer.flush()
  clock.set(T0 + 81 * day + 60_000)
  for (const b of [
    { clickId: cids[0], eventName: 'purchase', value: 19.99, currency: 'EUR' },
    { clickId: cids[0], eventName: 'purchase', value: 19.99, currency: 'EUR' },
    { clickId: cids[1], eventName: 'signup' },
  ]) {
    expect((await beacon(env as TestEnv, b)).status).toBeLessThan(300)
  }
  clock.set(T0 + 82 * day)

  const ask = async (path: string) => {
    const res = await env.request(`/v1/analytics/${path}`, { key: api.key })
    expect(res.status).toBe(200)
    return (await body(res)).data
  }
  const answers = async () => {
    const ranges = ['from=2026-01-01&to=2026-04-05', 'from=2026-01-14&to=2026-01-16', 'from=2026-04-04&to=2026-04-05']
    const out: Record<string, unknown> = {}
    for (const r of ranges) {
      out[`overview ${r}`] = await ask(`overview?${r}`)
      out[`alpha ${r}`] = { ...(await ask(`overview?${r}&linkId=${links.alpha.id}`)), linkId: 'alpha' }
      out[`day ${r}`] = await ask(`timeline?${r}&interval=day`)
      out[`week ${r}`] = await ask(`timeline?${r}&interval=week&tz=America/New_York`)
      for (const sort of ['clicks', 'uniqueClicks']) {
        const top = await ask(`top-links?${r}&sort=${sort}`)
        out[`top ${sort} ${r}`] = { ...top, links: top.links.map((l: any) => ({ ...l, id: slugOf.get(l.id), domain: null, shortUrl: null })) }
      }
    }
    out.hour = await ask('timeline?from=2026-04-04T00:00:00Z&to=2026-04-05T00:00:00Z&interval=hour')
    return out
  }
  const before = await answers()
  await runJob(env, clock, ROLL_MONTHS)
  await runJob(env, clock, PRUNE_CLICKS)
  const after = await answers()
  const stored = {
    rawClicks: await count(env, 'SELECT COUNT(*) FROM clicks'),
    monthRows: await count(env, "SELECT COUNT(*) FROM link_rollups WHERE grain = 'month'"),
    quarterRows: await count(env, "SELECT COUNT(*) FROM link_rollups WHERE grain = 'quarter'"),
    weekRows: await count(env, "SELECT COUNT(*) FROM link_rollups WHERE grain = 'week'"),
    conversions: await count(env, 'SELECT COUNT(*) FROM conversions'),
  }
  return { before, after, stored }
}

let sqlite: TestEnv
let pg: PgTestEnv
let onSqlite: Awaited<ReturnType<typeof script>>
let onPg: Awaited<ReturnType<typeof script>>
beforeAll(async () => {
  const sqliteClock = new ManualClock(T0)
  sqlite = setupSqlite({ clock: sqliteClock, env: ENV })
  onSqlite = await script(sqlite, sqliteClock)
  const pgClock = new ManualClock(T0)
  pg = await setupPg({ clock: pgClock, env: ENV })
  onPg = await script(pg, pgClock)
}, 60_000)
afterAll(async () => {
  sqlite?.cleanup()
  await pg?.cleanup()
})

describe('analytics on PostgreSQL answer as on SQLite', () => {
  test('the script counted something (so equal answers mean something)', () => {
    const overview = onPg.before['overview from=2026-01-01&to=2026-04-05'] as any
    expect(overview.totals).toEqual({ clicks: 10, uniqueVisitors: 8, botHits: 1, links: 3, conversions: 2, revenue: { EUR: 19.99 } })
  })

  test('overview, timeline and top links after the clicks', () => {
    expect(onPg.before).toEqual(onSqlite.before)
  })

  test('the maintenance jobs: the same answers after them, and the same rows left', () => {
    expect(onPg.after).toEqual(onSqlite.after)
    expect(onPg.stored).toEqual(onSqlite.stored)
    // Retention (30 days before 6 April) pruned January's and February's raw clicks; months and quarters were summed.
    expect(onPg.stored.rawClicks).toBe(4)
    expect(onPg.stored.monthRows).toBeGreaterThan(0)
    expect(onPg.stored.quarterRows).toBeGreaterThan(0)
  })
})

describe('start-up on PostgreSQL (init)', () => {
  test("the minute marks are set once: a second node keeps the first node's", async () => {
    const marks = async () => rows(pg, `SELECT key, value FROM settings WHERE key IN ('${MINUTES_FROM}', '${SECONDS_FROM}') ORDER BY key`)
    const first = await marks()
    expect(first.length).toBe(2)
    const second = await setupPg({ clock: new ManualClock(T0 + 200 * 86_400_000), env: ENV, database: pg.database })
    try {
      expect(await marks()).toEqual(first)
    } finally {
      await second.cleanup()
    }
  })

  test('clicks stored before rollups existed are rolled up by the first node that starts', async () => {
    const clock = new ManualClock(T0)
    const env = await setupPg({ clock, env: ENV })
    try {
      const api = await account(env as unknown as TestEnv)
      await api.make({ destinationUrl: 'https://example.com/old', slug: 'old' })
      for (const ip of ['8.8.8.8', '9.9.9.9']) expect((await visit(env as unknown as TestEnv, 'old', { ip })).status).toBe(302)
      await env.rt.modules.clicks.buffer.flush()
      clock.advance(60_000)
      // As an install upgraded from before rollups: clicks, no rollups, no mark.
      for (const text of ['DELETE FROM link_rollups', 'DELETE FROM workspace_rollups', "DELETE FROM settings WHERE key = 'rollups_backfilled'"])
        await rows(env, text)
      const later = await setupPg({ clock, env: ENV, database: env.database })
      try {
        expect(await count(env, "SELECT COUNT(*) FROM settings WHERE key = 'rollups_backfilled' AND value = '2'")).toBe(1)
        const res = await later.request('/v1/analytics/overview?from=2026-01-14&to=2026-01-14', { key: api.key })
        expect((await body(res)).data.totals).toMatchObject({ clicks: 2, uniqueVisitors: 2 })
      } finally {
        await later.cleanup()
      }
    } finally {
      await env.cleanup()
    }
  })
})
