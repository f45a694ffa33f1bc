// Clicks enriched at flush time, through real redirects: client addresses come from X-Forwarded-For (one
// trusted proxy; the public addresses below are header values and lookups in a local file, nothing is
// contacted), user agents are real ones. Bot hits are stored apart (is_bot = 1) and counted nowhere.
// LNK_GEOIP_DB: refused at start when wrong, used by the inline writer and the writer thread when right.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { ManualClock } from '../../src/platform/clock'
import { ConfigError, loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { createRuntime, type Runtime } from '../../src/runtime'
import { INSERTION_ORDER, ON_PG, setup, tempDir, type TestEnv } from '../helpers'
import { account, clickedEvents, counters, CRAWLERS, listenEverywhere, sql, storedTables, UA, visit, type Api } from '../redirect/_redirect'
import { buildMmdb } from './_mmdb'

const IPAD = 'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'

interface ClickRow {
  id: string
  clicked_at: number
  user_agent: string | null
  referrer_host: string | null
  country: string | null
  city: string | null
  device: string | null
  browser: string | null
  os: string | null
  is_bot: number
}

const rowsOf = (env: { rt: TestEnv['rt'] }, linkId: string) =>
  sql<ClickRow>(
    env,
    `SELECT id, clicked_at, user_agent, referrer_host, country, city, device, browser, os, is_bot FROM clicks WHERE link_id = ? ORDER BY ${INSERTION_ORDER}`,
    linkId,
  )
const enrichment = (r: ClickRow) => ({ country: r.country, city: r.city, device: r.device, browser: r.browser, os: r.os, bot: r.is_bot })

const clock = new ManualClock(Date.UTC(2026, 4, 12, 9, 0, 0))
let env: TestEnv
let api: Api
beforeAll(async () => {
  env = await setup({ clock, env: { LNK_TRUST_PROXY: '1' } })
  listenEverywhere(env.rt)
  api = await account(env)
})
afterAll(() => env.cleanup())

describe('each click is enriched when the buffer is flushed', () => {
  test('country from the embedded IP database; device, browser and OS from the user agent; referrer host', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/enriched' })
    const visits = [
      { ip: '8.8.8.8', ua: UA.chrome, referer: 'https://News.Example.org/a' },
      { ip: '2001:4860:4860::8888', ua: UA.iphone },
      { ip: '8.8.4.4', ua: UA.android, referer: 'https://t.co/xyz' },
      { ip: '8.8.8.8', ua: IPAD },
      { ip: '1.1.1.1', ua: UA.firefox },
      // Documentation and private addresses: no country, the rest as usual.
      { ip: '203.0.113.5', ua: UA.chromeMac },
      { ip: '10.0.0.7', ua: UA.chrome },
    ]
    for (const v of visits) {
      clock.advance(1_000)
      expect((await visit(env, link.slug, v)).status).toBe(302)
    }
    // Nothing is looked up or written on the redirect path.
    expect(await rowsOf(env, link.id)).toEqual([])
    await env.rt.modules.clicks.buffer.flush()

    const rows = await rowsOf(env, link.id)
    expect(rows).toHaveLength(visits.length)
    expect(rows.map(enrichment)).toEqual([
      { country: 'US', city: null, device: 'desktop', browser: 'Chrome', os: 'Linux', bot: 0 },
      { country: 'US', city: null, device: 'mobile', browser: 'Safari', os: 'iOS', bot: 0 },
      { country: 'US', city: null, device: 'mobile', browser: 'Chrome', os: 'Android', bot: 0 },
      { country: 'US', city: null, device: 'tablet', browser: 'Safari', os: 'iOS', bot: 0 },
      { country: expect.stringMatching(/^[A-Z]{2}$/), city: null, device: 'desktop', browser: 'Firefox', os: 'Windows', bot: 0 },
      { country: null, city: null, device: 'desktop', browser: 'Chrome', os: 'macOS', bot: 0 },
      { country: null, city: null, device: 'desktop', browser: 'Chrome', os: 'Linux', bot: 0 },
    ] as never)
    expect(rows.map((r) => r.referrer_host)).toEqual(['news.example.org', null, 't.co', null, null, null, null])
    expect(await counters(env, link.id)).toEqual({ total_clicks: 7, unique_clicks: 7 })
    expect(await clickedEvents(env, link.id)).toHaveLength(7)
  })

  test('raw addresses are still never stored: only the country they map to', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/no-raw', uniqueIpLimit: 100 })
    const ips = ['8.8.8.8', '9.9.9.9', '2001:4860:4860::8844', '81.2.69.142']
    for (const ip of ips) expect((await visit(env, link.slug, { ip, ua: UA.firefox })).status).toBe(302)
    await visit(env, link.slug, { ip: '208.67.222.222', ua: GOOGLEBOT })
    await env.rt.modules.clicks.buffer.flush()
    expect((await rowsOf(env, link.id)).filter((r) => r.country)).toHaveLength(5)
    const tables = await storedTables(env)
    expect(tables).toContain('clicks')
    for (const table of tables) {
      const dump = JSON.stringify(await sql(env, `SELECT * FROM "${table}"`))
      for (const ip of [...ips, '208.67.222.222']) expect({ table, ip, found: dump.includes(ip) }).toEqual({ table, ip, found: false })
    }
    for (const file of readdirSync(env.dir)) {
      const bytes = readFileSync(join(env.dir, file)).toString('latin1')
      for (const ip of [...ips, '208.67.222.222']) expect({ file, ip, found: bytes.includes(ip) }).toEqual({ file, ip, found: false })
    }
  })
})

describe('bot hits: stored apart, counted nowhere', () => {
  test('a bot GET and a crawler preview are rows with is_bot = 1 and device bot, enriched too; no counter, visitor or event', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/bots', ogTitle: 'Bots' })
    await visit(env, link.slug, { ip: '8.8.8.8', ua: GOOGLEBOT })
    await visit(env, link.slug, { ip: '8.8.4.4', ua: 'curl/8.5.0' })
    const preview = await visit(env, link.slug, { ip: '2001:4860:4860::8888', ua: CRAWLERS.facebook! })
    expect(preview.status).toBe(200)
    expect(await preview.text()).toContain('Bots')
    // HEAD is neither a click nor a bot hit.
    await visit(env, link.slug, { ip: '8.8.8.8', ua: GOOGLEBOT, method: 'HEAD' })
    await visit(env, link.slug, { ip: '8.8.8.8', ua: CRAWLERS.twitter!, method: 'HEAD' })
    await env.rt.modules.clicks.buffer.flush()

    const rows = await rowsOf(env, link.id)
    expect(rows.map(enrichment)).toEqual([
      { country: 'US', city: null, device: 'bot', browser: 'Googlebot', os: null, bot: 1 },
      { country: 'US', city: null, device: 'bot', browser: null, os: null, bot: 1 },
      { country: 'US', city: null, device: 'bot', browser: 'FacebookExternalHit', os: null, bot: 1 },
    ])
    for (const r of rows) expect(r.id).toMatch(/^clk_[0-9A-Za-z]{20}$/)
    expect(rows.map((r) => r.user_agent)).toEqual([GOOGLEBOT, 'curl/8.5.0', CRAWLERS.facebook!])
    expect(await counters(env, link.id)).toEqual({ total_clicks: 0, unique_clicks: 0 })
    expect((await sql(env, 'SELECT count(*) AS n FROM link_visitors WHERE link_id = ?', link.id))[0].n).toBe(0)
    expect(await clickedEvents(env, link.id)).toEqual([])

    // A person afterwards is the first click and the first unique visitor.
    await visit(env, link.slug, { ip: '8.8.8.8', ua: UA.chrome })
    await env.rt.modules.clicks.buffer.flush()
    expect(await counters(env, link.id)).toEqual({ total_clicks: 1, unique_clicks: 1 })
    expect(await clickedEvents(env, link.id)).toHaveLength(1)
    expect(await api.get(link.id)).toMatchObject({ totalClicks: 1, uniqueClicks: 1 })
    expect((await sql(env, 'SELECT count(*) AS n FROM clicks WHERE link_id = ? AND NOT is_bot', link.id))[0].n).toBe(1)
  })

  test('bot hits use up no clickLimit or uniqueIpLimit, buffered or written, also when the link is reloaded into the cache', async () => {
    const limited = await api.make({ destinationUrl: 'https://example.com/limited', clickLimit: 2 })
    expect((await visit(env, limited.slug, { ip: '8.8.8.8' })).status).toBe(302)
    for (let i = 0; i < 5; i++) expect((await visit(env, limited.slug, { ip: `9.9.9.${i + 1}`, ua: GOOGLEBOT })).status).toBe(302)
    expect((await visit(env, limited.slug, { ua: CRAWLERS.slack! })).status).toBe(200)
    // SQLite counts a limited link's clicks in the buffer to the flush; PostgreSQL in the link's row at once.
    if (ON_PG) expect((await counters(env, limited.id))!.total_clicks).toBe(1)
    else expect(env.rt.modules.clicks.buffer.pendingClicks(limited.id)).toBe(1)
    // A reload from the database adds what the buffer holds: the bots' hits must not be part of it.
    env.rt.modules.redirect.cache.clear()
    expect((await visit(env, limited.slug, { ip: '8.8.4.4' })).status).toBe(302)
    expect((await visit(env, limited.slug, { ip: '1.1.1.1' })).status).toBe(410)

    const admits = await api.make({ destinationUrl: 'https://example.com/admits', uniqueIpLimit: 1, fallbackUrl: 'https://example.com/full' })
    for (const ip of ['8.8.8.8', '8.8.4.4', '1.1.1.1']) await visit(env, admits.slug, { ip, ua: GOOGLEBOT })
    expect((await visit(env, admits.slug, { ip: '9.9.9.9' })).headers.get('location')).toBe('https://example.com/admits')
    expect((await visit(env, admits.slug, { ip: '8.8.8.8' })).headers.get('location')).toBe('https://example.com/full')
    await env.rt.modules.clicks.buffer.flush()
    expect((await sql(env, 'SELECT count(*) AS n FROM link_addresses WHERE link_id = ?', admits.id))[0].n).toBe(1)
    expect(await counters(env, limited.id)).toEqual({ total_clicks: 2, unique_clicks: 2 })
    expect(await sql(env, 'SELECT is_bot, count(*) AS n FROM clicks WHERE link_id = ? GROUP BY is_bot ORDER BY is_bot', limited.id)).toEqual([
      { is_bot: 0, n: 2 },
      { is_bot: 1, n: 6 },
    ])
  })

  test('a bot gets no lnk_cid from a link with conversion tracking; a person does', async () => {
    const link = await api.make({ destinationUrl: 'https://example.com/conv', conversionTracking: true })
    expect((await visit(env, link.slug, { ip: '8.8.8.8', ua: GOOGLEBOT })).headers.get('location')).toBe('https://example.com/conv')
    const person = new URL((await visit(env, link.slug, { ip: '8.8.8.8' })).headers.get('location')!)
    await env.rt.modules.clicks.buffer.flush()
    const rows = await rowsOf(env, link.id)
    expect(rows.map((r) => r.is_bot)).toEqual([1, 0])
    expect(person.searchParams.get('lnk_cid')).toBe(rows[1]!.id)
  })
})

/** A TestEnv around a runtime built here (setup() has no choice of click writer). */
function envOf(rt: Runtime, app: ReturnType<typeof createApp>, dir: string): TestEnv {
  return {
    rt,
    app,
    dir,
    config: rt.config,
    request(path, init = {}) {
      const headers = new Headers(init.headers)
      if (init.key) headers.set('authorization', `Bearer ${init.key}`)
      if (init.json !== undefined) headers.set('content-type', 'application/json')
      return app.handle(
        new Request(`http://localhost:8080${path}`, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body }),
      )
    },
    async cleanup() {},
  }
}

describe('LNK_GEOIP_DB', () => {
  const dir = tempDir('lnk-geoip-')
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const cityDb = join(dir, 'GeoLite2-City-test.mmdb')
  writeFileSync(
    cityDb,
    buildMmdb({
      '8.8.8.0/24': { country: { iso_code: 'US' }, city: { names: { en: 'Mountain View' } } },
      '81.2.69.142/32': { country: { iso_code: 'GB' }, city: { names: { en: 'London' } } },
    }),
  )

  const failure = (env: Record<string, string>, flags: Record<string, string> = {}) => {
    try {
      loadConfig({ LNK_DATA_DIR: dir, ...env }, flags)
    } catch (err) {
      return err
    }
    return null
  }

  test('a path that is missing, a directory or not an .mmdb stops loadConfig with one line naming it', () => {
    mkdirSync(join(dir, 'adir'))
    writeFileSync(join(dir, 'text.mmdb'), 'not a database')
    for (const [value, why] of [
      [join(dir, 'missing.mmdb'), 'no such file'],
      [join(dir, 'adir'), 'is a directory'],
      [join(dir, 'text.mmdb'), 'is not a MaxMind DB'],
    ] as const) {
      const err = failure({ LNK_GEOIP_DB: value })
      expect(err).toBeInstanceOf(ConfigError)
      const message = (err as Error).message
      expect(message).toContain('LNK_GEOIP_DB')
      expect(message).toContain(value)
      expect(message).toContain(why)
      expect(message.includes('\n')).toBe(false)
    }
    expect((failure({}, { 'geoip-db': join(dir, 'missing.mmdb') }) as Error).message).toContain('--geoip-db')
  })

  test('unset or empty: the embedded database; set: the absolute path', () => {
    expect(loadConfig({}).geoipDb).toBeNull()
    expect(loadConfig({ LNK_GEOIP_DB: '  ' }).geoipDb).toBeNull()
    expect(loadConfig({ LNK_GEOIP_DB: cityDb }).geoipDb).toBe(cityDb)
  })

  // SQLite's two click writers; the PostgreSQL pass sees the enricher through the flush in the tests above.
  test.skipIf(ON_PG)('a city database adds the city, written inline (tests) and by the writer thread (the server)', async () => {
    for (const clickWriter of ['inline', 'thread'] as const) {
      const data = tempDir()
      const config = loadConfig({
        LNK_DATA_DIR: data,
        LNK_BASE_URL: 'http://localhost:8080',
        LNK_LOG_LEVEL: 'silent',
        LNK_TRUST_PROXY: '1',
        LNK_GEOIP_DB: cityDb,
      })
      const rt = createRuntime(config, { log: silentLogger, clickWriter })
      const app = createApp(rt)
      try {
        const own = await account(envOf(rt, app, data))
        const link = await own.make({ destinationUrl: 'https://example.com/city' })
        for (const ip of ['8.8.8.8', '81.2.69.142', '1.1.1.1']) expect((await visit({ app }, link.slug, { ip, ua: UA.iphone })).status).toBe(302)
        await rt.modules.clicks.buffer.flush()
        expect({ clickWriter, rows: (await rowsOf({ rt }, link.id)).map((r) => [r.country, r.city, r.device]) }).toEqual({
          clickWriter,
          // 1.1.1.1 is not in this database: the embedded one is not consulted instead.
          rows: [
            ['US', 'Mountain View', 'mobile'],
            ['GB', 'London', 'mobile'],
            [null, null, 'mobile'],
          ],
        })
      } finally {
        await rt.modules.clicks.buffer.stop()
        rt.workerDb.close()
        rt.db.close()
        rmSync(data, { recursive: true, force: true })
      }
    }
  })
})
