// Click capture through the buffer (rows, counters, link.clicked events, no raw address stored anywhere)
// and the limits holding exactly under concurrency: across flushes, cache invalidation by PATCH and a
// restart of the runtime on the same data directory.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { ManualClock } from '../../src/platform/clock'
import { silentLogger } from '../../src/platform/log'
import { openRuntime, type Runtime } from '../../src/runtime'
import { ON_PG, type TestEnv } from '../helpers'
import { account, clickedEvents, clicksOf, counters, keyed, nextIp, pool, redirectEnv, sql, storedTables, UA, visit, type Api } from './_redirect'

const NOW = Date.UTC(2026, 4, 10, 12, 0, 0)
const clock = new ManualClock(NOW)
let env: TestEnv
let api: Api
const extraRuntimes: Runtime[] = []
beforeAll(async () => {
  env = await redirectEnv({ clock })
  api = await account(env)
})
afterAll(async () => {
  for (const rt of extraRuntimes) await rt.close()
  await env.cleanup()
})

const DEST = 'https://example.com/limited'
const FALLBACK = 'https://example.org/fallback'

/** Where each visit went: the destination, the fallback, a 410 page or something else. */
function outcome(res: Response): 'dest' | 'fallback' | 'gone' | string {
  const location = res.headers.get('location')
  if (res.status === 302 && location === DEST) return 'dest'
  if (res.status === 302 && location === FALLBACK) return 'fallback'
  if (res.status === 410) return 'gone'
  return `${res.status} ${location}`
}

function tally(outcomes: string[]) {
  const t: Record<string, number> = {}
  for (const o of outcomes) t[o] = (t[o] ?? 0) + 1
  return t
}

describe('click capture', () => {
  test('after a flush: clk_ rows with link, workspace, time, visitor hash, agent and referrer; exact counters; one link.clicked each', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/captured' })
    const a = nextIp()
    const b = '2001:db8::c1'
    const visits = [
      { ip: a, ua: UA.chrome, referer: 'https://News.Example.org/story?id=1' },
      { ip: a, ua: UA.chrome, referer: 'https://news.example.org/other' },
      { ip: a, ua: UA.firefox },
      { ip: b, ua: UA.chrome, referer: 'not a url' },
    ]
    const times: number[] = []
    for (const v of visits) {
      clock.advance(1_000)
      times.push(clock.now())
      expect((await visit(env, link.slug, v)).headers.get('location')).toBe('https://example.com/captured')
    }
    // Nothing is written before the flush: the redirect never waits on the database.
    expect(await clicksOf(env, link.id)).toEqual([])
    expect(env.rt.modules.clicks.buffer.size).toBeGreaterThanOrEqual(4)
    await env.rt.modules.clicks.buffer.flush()

    const rows = await clicksOf(env, link.id)
    expect(rows).toHaveLength(4)
    for (const [i, row] of rows.entries()) {
      expect(row.id).toMatch(/^clk_[0-9A-Za-z]{20}$/)
      expect(row.link_id).toBe(link.id)
      expect(row.workspace_id).toBe(api.workspaceId)
      expect(row.clicked_at).toBe(times[i]!)
      expect(row.visitor_hash).toMatch(/^[A-Za-z0-9_-]{32}$/)
      expect(row.visitor_hash).toBe(keyed(env.rt, `v|${visits[i]!.ip}|${visits[i]!.ua}`))
      expect(row.user_agent).toBe(visits[i]!.ua)
      expect(row.is_bot).toBe(0)
    }
    expect(rows.map((r) => [r.referrer, r.referrer_host])).toEqual([
      ['https://News.Example.org/story?id=1', 'news.example.org'],
      ['https://news.example.org/other', 'news.example.org'],
      [null, null],
      ['not a url', null],
    ])
    // Same address and agent twice: one visitor. Another agent or another address: another visitor.
    expect(rows[0]!.visitor_hash).toBe(rows[1]!.visitor_hash)
    expect(new Set(rows.map((r) => r.visitor_hash)).size).toBe(3)
    expect(await counters(env, link.id)).toEqual({ total_clicks: 4, unique_clicks: 3 })
    expect((await sql(env, 'SELECT count(*) AS n FROM link_visitors WHERE link_id = ?', link.id))[0].n).toBe(3)

    const events = await clickedEvents(env, link.id)
    expect(events.map((e) => e.data.click.id)).toEqual(rows.map((r) => r.id))
    expect(events.map((e) => e.data.click.unique)).toEqual([true, false, true, true])
    for (const [i, e] of events.entries()) {
      expect(e.workspace_id).toBe(api.workspaceId)
      expect(e.mode).toBe('live')
      expect(e.data.click.timestamp).toBe(new Date(times[i]!).toISOString())
      expect(e.data.click.userAgent).toBe(visits[i]!.ua)
      expect(e.data.link).toMatchObject({ id: link.id, slug: link.slug, shortUrl: link.shortUrl, destinationUrl: 'https://example.com/captured' })
    }
    // The Link answers the same counters.
    expect(await api.get(link.id)).toMatchObject({ totalClicks: 4, uniqueClicks: 3 })

    // Visiting again after the flush keeps counting exactly.
    await visit(env, link.slug, visits[0]!)
    await visit(env, link.slug, { ip: nextIp(), ua: UA.chromeMac })
    await env.rt.modules.clicks.buffer.flush()
    expect(await counters(env, link.id)).toEqual({ total_clicks: 6, unique_clicks: 4 })
    expect(await clickedEvents(env, link.id)).toHaveLength(6)
  })

  test('no raw client address is stored anywhere: no table, no database or WAL file holds it', async () => {
    const ips = ['203.0.113.77', '198.51.100.203', '2001:db8::beef']
    const link = await api.make({ destinationUrl: 'https://example.com/private', uniqueIpLimit: 10, conversionTracking: true, password: 'pw-private' })
    for (const ip of ips) {
      const passed = await visit(env, link.slug, { ip, form: { gate: 'password', password: 'pw-private' } })
      expect(passed.status).toBe(303)
      await visit(env, link.slug, { ip, form: { gate: 'password', password: 'wrong' } })
      const res = await visit(env, link.slug, { ip, cookie: passed.headers.get('set-cookie')!.split(';')[0], referer: 'https://example.net/' })
      expect(res.status).toBe(302)
    }
    await env.rt.modules.clicks.buffer.flush()
    expect(await clicksOf(env, link.id)).toHaveLength(3)
    expect((await sql(env, 'SELECT count(*) AS n FROM link_addresses WHERE link_id = ?', link.id))[0].n).toBe(3)

    const tables = await storedTables(env)
    expect(tables).toEqual(expect.arrayContaining(['clicks', 'links', 'link_visitors', 'link_addresses', 'outbox']))
    for (const table of tables) {
      const dump = JSON.stringify(await sql(env, `SELECT * FROM "${table}"`))
      for (const ip of ips) expect({ table, ip, found: dump.includes(ip) }).toEqual({ table, ip, found: false })
    }
    // On PostgreSQL the data directory holds no database: the table scan above is the whole check there.
    for (const file of readdirSync(env.dir)) {
      const bytes = readFileSync(join(env.dir, file)).toString('latin1')
      for (const ip of ips) expect({ file, ip, found: bytes.includes(ip) }).toEqual({ file, ip, found: false })
    }
  })

  test('bots, HEAD, crawlers and gate pages are not clicks; every real visit is', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/mixed', ogTitle: 'Mixed' })
    const ip = nextIp()
    await visit(env, link.slug, { ip, ua: 'curl/8.5.0' })
    await visit(env, link.slug, { ip, method: 'HEAD' })
    await visit(env, link.slug, { ip, ua: 'Twitterbot/1.0' })
    await visit(env, link.slug, { ip })
    await visit(env, link.slug, { ip })
    await env.rt.modules.clicks.buffer.flush()
    expect(await counters(env, link.id)).toEqual({ total_clicks: 2, unique_clicks: 1 })
    expect(await clickedEvents(env, link.id)).toHaveLength(2)
  })
})

describe('clickLimit under concurrency', () => {
  const visitors = (n: number) => Array.from({ length: n }, () => nextIp())

  test('clickLimit 10 with 50 concurrent visits: exactly 10 reach the destination, 40 the fallback', async () => {
    const link = await api.make({ destinationUrl: DEST, clickLimit: 10, fallbackUrl: FALLBACK })
    const ips = visitors(50)
    const results = await pool(
      25,
      ips.map((ip) => () => visit(env, link.slug, { ip }).then(outcome)),
    )
    expect(tally(results)).toEqual({ dest: 10, fallback: 40 })
    await env.rt.modules.clicks.buffer.flush()
    expect(await counters(env, link.id)).toEqual({ total_clicks: 10, unique_clicks: 10 })
    expect(await clicksOf(env, link.id)).toHaveLength(10)
    expect(await clickedEvents(env, link.id)).toHaveLength(10)
    expect(outcome(await visit(env, link.slug, { ip: nextIp() }))).toBe('fallback')
  })

  test('without a fallback the other 40 get the 410 page', async () => {
    const link = await api.make({ destinationUrl: DEST, clickLimit: 10 })
    const results = await pool(
      25,
      visitors(50).map((ip) => () => visit(env, link.slug, { ip }).then(outcome)),
    )
    expect(tally(results)).toEqual({ dest: 10, gone: 40 })
  })

  test('flushes in the middle change nothing', async () => {
    const link = await api.make({ destinationUrl: DEST, clickLimit: 10, fallbackUrl: FALLBACK })
    const tasks = visitors(50).map((ip, i) => async () => {
      if (i === 4 || i === 12 || i === 30) await env.rt.modules.clicks.buffer.flush()
      return outcome(await visit(env, link.slug, { ip }))
    })
    expect(tally(await pool(16, tasks))).toEqual({ dest: 10, fallback: 40 })
    await env.rt.modules.clicks.buffer.flush()
    expect(await counters(env, link.id)).toEqual({ total_clicks: 10, unique_clicks: 10 })
  })

  test('PATCHes in the middle (cache dropped and reloaded) change nothing, with or without a flush before them', async () => {
    const link = await api.make({ destinationUrl: DEST, clickLimit: 10, fallbackUrl: FALLBACK })
    const tasks = visitors(50).map((ip, i) => async () => {
      if (i === 3) expect((await api.patch(link.id, { title: 'patched once' })).status).toBe(200)
      if (i === 6) await env.rt.modules.clicks.buffer.flush()
      if (i === 7 || i === 25) expect((await api.patch(link.id, { title: `patched at ${i}` })).status).toBe(200)
      return outcome(await visit(env, link.slug, { ip }))
    })
    expect(tally(await pool(16, tasks))).toEqual({ dest: 10, fallback: 40 })
    await env.rt.modules.clicks.buffer.flush()
    expect(await counters(env, link.id)).toEqual({ total_clicks: 10, unique_clicks: 10 })
  })

  test('raising the limit by PATCH admits exactly the difference', async () => {
    const link = await api.make({ destinationUrl: DEST, clickLimit: 3, fallbackUrl: FALLBACK })
    expect(
      tally(
        await pool(
          10,
          visitors(10).map((ip) => () => visit(env, link.slug, { ip }).then(outcome)),
        ),
      ),
    ).toEqual({ dest: 3, fallback: 7 })
    expect((await api.patch(link.id, { clickLimit: 8 })).status).toBe(200)
    expect(
      tally(
        await pool(
          10,
          visitors(10).map((ip) => () => visit(env, link.slug, { ip }).then(outcome)),
        ),
      ),
    ).toEqual({ dest: 5, fallback: 5 })
    await env.rt.modules.clicks.buffer.flush()
    expect(await counters(env, link.id)).toEqual({ total_clicks: 8, unique_clicks: 8 })
  })
})

describe('uniqueIpLimit under concurrency', () => {
  async function restart(): Promise<{ rt: Runtime; app: ReturnType<typeof createApp> }> {
    const rt = await openRuntime(env.config, { clock, log: silentLogger })
    extraRuntimes.push(rt)
    return { rt, app: createApp(rt) }
  }

  test('uniqueIpLimit 3 with 20 addresses: the first 3 keep working on repeat visits, the others get the fallback; also after a flush and a restart', async () => {
    const link = await api.make({ destinationUrl: DEST, uniqueIpLimit: 3, fallbackUrl: FALLBACK })
    const ips = Array.from({ length: 20 }, () => nextIp())
    for (const ip of ips.slice(0, 3)) expect(outcome(await visit(env, link.slug, { ip }))).toBe('dest')

    const round = async (target: TestEnv | { app: ReturnType<typeof createApp> }) => {
      const tasks = [...ips, ...ips.slice(0, 3)].map((ip) => () => visit(target, link.slug, { ip, ua: UA.firefox }).then(outcome))
      const results = await pool(12, tasks)
      expect(results.slice(0, 3)).toEqual(['dest', 'dest', 'dest'])
      expect(results.slice(3, 20)).toEqual(Array(17).fill('fallback'))
      expect(results.slice(20)).toEqual(['dest', 'dest', 'dest'])
    }
    await round(env)
    await env.rt.modules.clicks.buffer.flush()
    await round(env)
    await env.rt.modules.clicks.buffer.flush()
    expect((await sql(env, 'SELECT count(*) AS n FROM link_addresses WHERE link_id = ?', link.id))[0].n).toBe(3)
    // 3 first visits + 2 rounds of 6 admitted visits.
    expect(await counters(env, link.id)).toEqual({ total_clicks: 15, unique_clicks: 6 })

    const second = await restart()
    await round(second)
    expect(outcome(await visit(second, link.slug, { ip: nextIp() }))).toBe('fallback')
    await second.rt.modules.clicks.buffer.flush()
    expect(await counters(env, link.id)).toEqual({ total_clicks: 21, unique_clicks: 6 })
  })

  test('20 distinct addresses all at once: exactly 3 are admitted, and only they, also after a restart', async () => {
    const link = await api.make({ destinationUrl: DEST, uniqueIpLimit: 3, fallbackUrl: FALLBACK })
    const ips = Array.from({ length: 20 }, () => nextIp())
    const first = await Promise.all(ips.map((ip) => visit(env, link.slug, { ip }).then(outcome)))
    expect(tally(first)).toEqual({ dest: 3, fallback: 17 })
    const admitted = ips.filter((_, i) => first[i] === 'dest')
    const refused = ips.filter((_, i) => first[i] !== 'dest')
    // Mid-way flush while the repeat visits run.
    const repeat = await pool(
      8,
      [...admitted, ...refused].map((ip, i) => async () => {
        if (i === 5) await env.rt.modules.clicks.buffer.flush()
        return outcome(await visit(env, link.slug, { ip }))
      }),
    )
    expect(repeat).toEqual([...Array(3).fill('dest'), ...Array(17).fill('fallback')])
    await env.rt.modules.clicks.buffer.flush()
    const second = await restart()
    const after = await pool(
      8,
      [...admitted, ...refused].map((ip) => () => visit(second, link.slug, { ip }).then(outcome)),
    )
    expect(after).toEqual([...Array(3).fill('dest'), ...Array(17).fill('fallback')])
    await second.rt.modules.clicks.buffer.flush()
  })

  test('a PATCH while admitted addresses still sit in the buffer does not admit more than the limit', async () => {
    const link = await api.make({ destinationUrl: DEST, uniqueIpLimit: 3, fallbackUrl: FALLBACK })
    const ips = Array.from({ length: 20 }, () => nextIp())
    for (const ip of ips.slice(0, 2)) expect(outcome(await visit(env, link.slug, { ip }))).toBe('dest')
    // SQLite keeps them in the buffer to the flush; PostgreSQL admits an address in the database at once.
    if (ON_PG) expect((await sql(env, 'SELECT count(*) AS n FROM link_addresses WHERE link_id = ?', link.id))[0].n).toBe(2)
    else expect(env.rt.modules.clicks.buffer.pendingAddresses(link.id)).toHaveLength(2)
    expect((await api.patch(link.id, { title: 'reload me' })).status).toBe(200)
    const results = await pool(
      8,
      ips.slice(2).map((ip, i) => async () => {
        if (i === 6) expect((await api.patch(link.id, { title: 'again' })).status).toBe(200)
        return outcome(await visit(env, link.slug, { ip }))
      }),
    )
    expect(tally(results)).toEqual({ dest: 1, fallback: 17 })
    for (const ip of ips.slice(0, 2)) expect(outcome(await visit(env, link.slug, { ip }))).toBe('dest')
    await env.rt.modules.clicks.buffer.flush()
    expect((await sql(env, 'SELECT count(*) AS n FROM link_addresses WHERE link_id = ?', link.id))[0].n).toBe(3)
  })

  test('clickLimit holds across a restart too', async () => {
    const link = await api.make({ destinationUrl: DEST, clickLimit: 5, fallbackUrl: FALLBACK })
    expect(
      tally(
        await pool(
          5,
          Array.from({ length: 7 }, () => () => visit(env, link.slug, { ip: nextIp() }).then(outcome)),
        ),
      ),
    ).toEqual({ dest: 5, fallback: 2 })
    await env.rt.modules.clicks.buffer.flush()
    const second = await restart()
    expect(outcome(await visit(second, link.slug, { ip: nextIp() }))).toBe('fallback')
  })

  test('a uniqueIpLimit link counts addresses, not agents: one address with many browsers is one', async () => {
    const link = await api.make({ destinationUrl: DEST, uniqueIpLimit: 1, fallbackUrl: FALLBACK })
    const ip = nextIp()
    for (const ua of [UA.chrome, UA.firefox, UA.iphone, UA.android]) expect(outcome(await visit(env, link.slug, { ip, ua }))).toBe('dest')
    expect(outcome(await visit(env, link.slug, { ip: nextIp() }))).toBe('fallback')
  })
})
