// Unique visitors measured on two threads (SQLite): top links by uniqueClicks over enough links to split
// them between the request thread and the uniques thread answers every link's exact count, the thread
// answers what the request thread would, and a thread that fails or is closed leaves the answers whole.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createLogger } from '../../src/platform/log'
import { ManualClock } from '../../src/platform/clock'
import { planRange } from '../../src/modules/analytics/plan'
import { measureUniques } from '../../src/modules/analytics/service'
import { linkUniques } from '../../src/modules/analytics/uniques'
import { uniquesThread } from '../../src/modules/analytics/uniques-helper'
import { body, ON_PG, setupSqlite, type TestEnv } from '../helpers'
import { account, UA, visit, type Api } from '../redirect/_redirect'

const MIN = 60_000
const DAY = 86_400_000
/** An hour's start: the range below ends 30 minutes into it, so its last part is read from raw clicks. */
const HOUR = Date.UTC(2026, 2, 10, 14)
const FROM = HOUR - 3 * DAY
const TO = HOUR + 30 * MIN
const LINKS = 48
const clock = new ManualClock(FROM)
const logLines: string[] = []
let env: TestEnv
let api: Api
const links: { id: string; slug: string; visitors: number }[] = []

const visitor = (n: number) => `203.0.113.${n}`

beforeAll(async () => {
  if (ON_PG) return
  env = setupSqlite({ clock, env: { LNK_TRUST_PROXY: '1' }, log: createLogger('info', (line) => logLines.push(line)) })
  api = await account(env)
  for (let i = 0; i < LINKS; i++) {
    const link = await api.make({ destinationUrl: `https://example.com/u/${i}` })
    // Two days back (a day row): 1-4 people, the first of them twice.
    const before = 1 + (i % 4)
    for (let v = 0; v < before; v++) {
      clock.set(HOUR - 2 * DAY + v * MIN)
      await visit(env, link.slug, { ip: visitor(v), ua: UA.chrome })
    }
    clock.set(HOUR - 2 * DAY + 30 * MIN)
    await visit(env, link.slug, { ip: visitor(0), ua: UA.chrome })
    // Inside the range's partial hour (raw clicks): 0-2 newcomers and one who came two days ago.
    const newcomers = i % 3
    for (let v = 0; v < newcomers; v++) {
      clock.set(HOUR + (5 + v) * MIN)
      await visit(env, link.slug, { ip: visitor(100 + v), ua: UA.chrome })
    }
    clock.set(HOUR + 10 * MIN)
    await visit(env, link.slug, { ip: visitor(0), ua: UA.chrome })
    // After the range's end, in the same hour: not counted.
    clock.set(HOUR + 40 * MIN)
    await visit(env, link.slug, { ip: visitor(200), ua: UA.chrome })
    links.push({ id: link.id, slug: link.slug, visitors: before + newcomers })
  }
  await env.rt.modules.clicks.buffer.flush()
})
afterAll(async () => {
  if (!ON_PG) await env.cleanup()
})

const segments = () => planRange(FROM, TO, clock.now())

describe.skipIf(ON_PG)('unique visitors on two threads', () => {
  test('top links by uniqueClicks over more links than a thread measures alone: every count exact, half measured by the thread', async () => {
    expect(segments().map((s) => s.source)).toContain('raw')
    const res = await env.request(`/v1/analytics/top-links?sort=uniqueClicks&limit=100&from=${new Date(FROM).toISOString()}&to=${new Date(TO).toISOString()}`, {
      key: api.key,
    })
    expect(res.status).toBe(200)
    const got = new Map(((await body(res)).data.links as { id: string; uniqueClicks: number }[]).map((l) => [l.id, l.uniqueClicks]))
    expect(got.size).toBe(LINKS)
    for (const l of links) expect(got.get(l.id)).toBe(l.visitors)
    expect(logLines.filter((l) => l.includes('uniques thread started'))).toHaveLength(1)
    expect(logLines.filter((l) => l.includes('uniques thread failed'))).toHaveLength(0)
  })

  test('the thread answers what the request thread measures, in the order asked', async () => {
    const helper = uniquesThread(env.rt.db.path, createLogger('silent'), 4)
    try {
      const ids = links.map((l) => l.id).reverse()
      const there = await helper.measure(ids, segments())
      expect(there).toEqual(await linkUniques(env.rt.modules.analytics.ctx.analytics, ids, segments()))
      expect(there).toEqual(ids.map((id) => links.find((l) => l.id === id)!.visitors))
    } finally {
      await helper.close()
    }
  })

  test('a thread that cannot open the database is logged once, and the request thread measures its half', async () => {
    const lines: string[] = []
    const broken = uniquesThread(
      `${env.dir}/missing/lnk.db`,
      createLogger('info', (line) => lines.push(line)),
      4,
    )
    try {
      const ctx = { ...env.rt.modules.analytics.ctx, uniques: broken }
      const ids = links.map((l) => l.id)
      expect(await measureUniques(ctx, ids, segments())).toEqual(links.map((l) => l.visitors))
      // Once failed, the thread is not started again: the second question is measured here at once.
      expect(await measureUniques(ctx, ids, segments())).toEqual(links.map((l) => l.visitors))
      expect(lines.filter((l) => l.includes('uniques thread failed'))).toHaveLength(1)
      expect(lines.filter((l) => l.includes('uniques thread started'))).toHaveLength(1)
      expect(lines.find((l) => l.includes('uniques thread failed'))).toContain('unable to open database file')
    } finally {
      await broken.close()
    }
  })

  test('closed: asked again it refuses (the caller measures on its own), and closing twice or unstarted is harmless', async () => {
    const helper = uniquesThread(env.rt.db.path, createLogger('silent'), 4)
    const ids = links.slice(0, 3).map((l) => l.id)
    expect(await helper.measure(ids, segments())).toEqual(links.slice(0, 3).map((l) => l.visitors))
    await helper.close()
    await helper.close()
    expect(helper.measure(ids, segments())).rejects.toThrow('the uniques thread is closed')
    const ctx = { ...env.rt.modules.analytics.ctx, uniques: helper }
    expect(
      await measureUniques(
        ctx,
        links.map((l) => l.id),
        segments(),
      ),
    ).toEqual(links.map((l) => l.visitors))
    await uniquesThread(env.rt.db.path, createLogger('silent'), 4).close()
  })
})
