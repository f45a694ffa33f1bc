// Analytics benchmark (run by hand: `bun run scripts/bench/analytics.ts`).
// Seeds BENCH_CLICKS (default 10,000,000) clicks over 1,000 links and the past year, rolled up by the same
// writer the click flush uses, then times the overview, a year's daily timeline (UTC and New York) and
// top links through the app: the first call after reopening the database (cold) and 30 more (warm).
// Then measures sustained ingestion: synthetic clicks pushed through the click buffer into the writer
// thread, with enrichment, visitor rows, link.clicked events and rollups, exactly as redirects hand them.
// Everything stays in a temp dir (or BENCH_DIR, kept and reused by the next run: seeding takes minutes);
// every loop is bounded.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createHmac } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { createRollupWriter, type RollupClick } from '../../src/modules/analytics/rollup-writer'
import { bootstrap } from '../../src/modules/identity/service'
import type { ClickRecord } from '../../src/modules/clicks/repo'
import { createRuntime, type Runtime } from '../../src/runtime'
import { sortableId } from '../../src/platform/random'

const CLICKS = Number(process.env.BENCH_CLICKS ?? 10_000_000)
const LINKS = 1_000
const VISITORS = 300_000
const INGEST = Number(process.env.BENCH_INGEST ?? 300_000)
const DAY = 86_400_000
const origin = 'http://127.0.0.1:8080'
const keep = process.env.BENCH_DIR
const dir = keep ?? mkdtempSync(join(tmpdir(), 'lnk-bench-analytics-'))
if (keep) mkdirSync(keep, { recursive: true })
const seedFile = join(dir, 'bench.json')
const reuse = keep !== undefined && existsSync(seedFile)
const config = loadConfig({ LNK_DATA_DIR: dir, LNK_BASE_URL: origin, LNK_LOG_LEVEL: 'warn' })

// A fixed-seed generator (mulberry32): the same data every run.
let seed = 42
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
}
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * rand() * xs.length)]!

const COUNTRIES = ['US', 'DE', 'GB', 'FR', 'IN', 'BR', 'JP', 'CA', 'NL', 'ES', 'IT', 'PL', 'SE', 'AU', 'MX', 'KR', 'TR', 'ID', 'AR', 'ZA', null]
const REFERRERS = [null, 'google.com', 't.co', 'news.ycombinator.com', 'reddit.com', 'linkedin.com', 'facebook.com', 'duckduckgo.com', 'bing.com', 'github.com']
const BROWSERS = ['Chrome', 'Safari', 'Firefox', 'Microsoft Edge', 'Samsung Internet', 'Opera']
const OSES = ['Windows', 'iOS', 'Android', 'macOS', 'Linux', 'ChromeOS']
const DEVICES = ['desktop', 'mobile', 'tablet']
const UAS = [
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
]

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
const ms = (x: number) => `${x.toFixed(1)} ms`

// --- seed --------------------------------------------------------------------------------------------
let rt: Runtime = createRuntime(config, { log: silentLogger })
let app = createApp(rt)
let key: string
let workspaceId: string
let linkIds: string[] = []
let seedSeconds = 0
const now = reuse ? (JSON.parse(readFileSync(seedFile, 'utf8')) as { now: number }).now : Date.now()
const start = now - 365 * DAY
if (reuse) {
  ;({ key, workspaceId, linkIds } = JSON.parse(readFileSync(seedFile, 'utf8')) as { key: string; workspaceId: string; linkIds: string[] })
} else {
  const account = await bootstrap(rt.modules.identity.ctx, { email: 'bench@example.com', workspace: 'Bench' })
  key = account.apiKey.key
  workspaceId = account.workspace.id
  for (let i = 0; i < LINKS / 500; i++) {
    const res = await app.handle(
      new Request(`${origin}/v1/links/bulk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ links: Array.from({ length: 500 }, (_, j) => ({ destinationUrl: `https://example.com/p/${i * 500 + j}`, tags: ['bench'] })) }),
      }),
    )
    for (const r of ((await res.json()) as any).data.results) linkIds.push(r.link.id)
  }
  seedSeconds = seedClicks(rt)
  writeFileSync(seedFile, JSON.stringify({ key, workspaceId, linkIds, now }))
}

/** Writes CLICKS clicks spread over the year, with their rollups, as the flush would; answers seconds. */
function seedClicks(rt: Runtime): number {
  const visitorPool = Array.from({ length: VISITORS }, (_, i) => createHmac('sha256', 'bench').update(`v|${i}`).digest('base64url').slice(0, 32))
  const sqlite = rt.db.sqlite
  const insert = sqlite.prepare(
    'INSERT INTO clicks (id, link_id, workspace_id, clicked_at, visitor_hash, user_agent, referrer, referrer_host, country, city, device, browser, os, is_bot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)',
  )
  const addToRollups = createRollupWriter(sqlite)
  const CHUNK = 20_000
  const seedStart = performance.now()
  for (let done = 0; done < CLICKS; done += CHUNK) {
    const n = Math.min(CHUNK, CLICKS - done)
    const batch: RollupClick[] = []
    sqlite.transaction(() => {
      for (let i = 0; i < n; i++) {
        const at = Math.floor(start + ((done + i) / CLICKS) * 365 * DAY)
        const c: RollupClick = {
          linkId: linkIds[Math.floor(rand() * LINKS)]!,
          workspaceId,
          clickedAt: at,
          visitor: visitorPool[Math.floor(rand() * VISITORS)]!,
          isBot: rand() < 0.03,
          country: pick(COUNTRIES),
          referrer: pick(REFERRERS),
          browser: pick(BROWSERS),
          os: pick(OSES),
          device: pick(DEVICES),
        }
        const referrer = c.referrer ? `https://${c.referrer}/` : null
        insert.run(sortableId('clk', at), c.linkId, workspaceId, at, c.visitor, UAS[i % UAS.length]!, referrer, c.referrer, c.country, c.isBot ? 'bot' : c.device, c.browser, c.os, c.isBot ? 1 : 0)
        batch.push(c)
      }
      addToRollups(batch)
    })()
    if ((done / CHUNK) % 50 === 0) console.error(`seeded ${done.toLocaleString()} clicks`)
  }
  sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)')
  return (performance.now() - seedStart) / 1000
}
const size = (f: string) => {
  try {
    return statSync(join(dir, f)).size
  } catch {
    return 0
  }
}
const dbBytes = size('lnk.db') + size('lnk.db-wal')

// --- queries ----------------------------------------------------------------------------------------
const year = `from=${new Date(start).toISOString().slice(0, 10)}&to=${new Date(now).toISOString().slice(0, 10)}`
const QUERIES: [string, string][] = [
  ['overview (year, workspace)', `/v1/analytics/overview?${year}`],
  ['overview (year, one link)', `/v1/analytics/overview?${year}&linkId=${linkIds[7]}`],
  ['timeline (year, daily, UTC)', `/v1/analytics/timeline?${year}&interval=day`],
  ['timeline (year, daily, America/New_York)', `/v1/analytics/timeline?${year}&interval=day&tz=America/New_York`],
  ['top-links (year, by clicks)', `/v1/analytics/top-links?${year}`],
  ['top-links (year, by uniqueClicks)', `/v1/analytics/top-links?${year}&sort=uniqueClicks`],
  ['overview (last 30 days, default)', '/v1/analytics/overview'],
]
const call = async (path: string) => {
  const t0 = performance.now()
  const res = await app.handle(new Request(`${origin}${path}`, { headers: { authorization: `Bearer ${key}` } }))
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`)
  await res.arrayBuffer()
  return performance.now() - t0
}

// Cold: a new runtime (fresh SQLite connection and page cache) for every query's first call.
const cold: Record<string, number> = {}
for (const [name, path] of QUERIES) {
  rt.workerDb.close()
  rt.db.close()
  rt = createRuntime(config, { log: silentLogger })
  app = createApp(rt)
  cold[name] = await call(path)
}
const results: string[] = []
for (const [name, path] of QUERIES) {
  const times: number[] = []
  for (let i = 0; i < 30; i++) times.push(await call(path))
  results.push(`| ${name} | ${ms(cold[name]!)} | ${ms(percentile(times, 50))} | ${ms(percentile(times, 99))} |`)
}
const check = (await (await app.handle(new Request(`${origin}/v1/analytics/overview?${year}`, { headers: { authorization: `Bearer ${key}` } }))).json()) as any

// --- ingestion ----------------------------------------------------------------------------------------
rt.workerDb.close()
rt.db.close()
rt = createRuntime(config, { log: silentLogger, clickWriter: 'thread' })
const ingestStart = performance.now()
for (let i = 0; i < INGEST; ) {
  // Backpressure like a real server under overload would not have: keep at most 20,000 clicks waiting.
  while (rt.modules.clicks.buffer.size > 20_000) await Bun.sleep(5)
  for (let j = 0; j < 500 && i < INGEST; j++, i++) {
    const id = linkIds[Math.floor(rand() * LINKS)]!
    const c: ClickRecord = {
      id: sortableId('clk', Date.now()),
      linkId: id,
      workspaceId,
      clickedAt: Date.now(),
      ip: `${1 + Math.floor(rand() * 223)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}`,
      userAgent: UAS[i % UAS.length]!,
      referrer: 'https://news.ycombinator.com/item',
      referrerHost: 'news.ycombinator.com',
      newAddress: null,
      isBot: false,
      announce: true,
    }
    rt.modules.clicks.buffer.add(c)
  }
  rt.modules.clicks.buffer.start()
  await Bun.sleep(0)
}
await rt.modules.clicks.buffer.stop()
const ingestSeconds = (performance.now() - ingestStart) / 1000
const ingested = (rt.db.sqlite.query('SELECT COUNT(*) AS n FROM clicks WHERE clicked_at >= ?').get(Math.floor(ingestStart + performance.timeOrigin) - 1000) as { n: number }).n
rt.workerDb.close()
rt.db.close()

console.log(`\n## Analytics benchmark (${CLICKS.toLocaleString()} clicks, ${LINKS} links, one year)\n`)
console.log(`${reuse ? 'reused the seeded database' : `seeded in ${seedSeconds.toFixed(0)} s`}; database ${(dbBytes / 1e9).toFixed(2)} GB; overview check: ${check.data.totals.clicks.toLocaleString()} clicks, ${check.data.totals.uniqueVisitors.toLocaleString()} visitors (of ${VISITORS.toLocaleString()}), ${check.data.totals.botHits.toLocaleString()} bot hits\n`)
console.log('| query | cold | warm p50 | warm p99 |\n|---|---|---|---|')
for (const r of results) console.log(r)
console.log(`\ningestion through the click buffer and writer thread: ${INGEST.toLocaleString()} clicks in ${ingestSeconds.toFixed(1)} s = ${Math.round(INGEST / ingestSeconds).toLocaleString()} clicks/s (${ingested.toLocaleString()} rows written)`)
if (!keep) rmSync(dir, { recursive: true, force: true })
