// Analytics benchmark (run by hand: `bun run scripts/bench/analytics.ts`).
// Seeds BENCH_CLICKS (default 10,000,000) clicks over 1,000 links and the past year, rolled up by the same
// writer the click flush uses, sums the past months (the hourly job's work, timed), then times the
// overview, a year's daily timeline (UTC and New York) and top links through the app: the first call after
// reopening the database (cold) and 30 more (warm).
// Then a burst: BENCH_BURST (default 200,000) redirects through the app's redirect path
// (`app.handle(new Request(shortUrl))`), all in the current hour, and the questions whose range ends inside
// that hour, timed the same way (each run adds its burst to a kept BENCH_DIR, in the hour it ran).
// Sustained click ingestion has a benchmark of its own: scripts/bench/ingest.ts.
// Everything stays in a temp dir (or BENCH_DIR, kept and reused by the next run: seeding takes minutes);
// every loop is bounded.
//
// `bun run scripts/bench/analytics.ts rollups` measures only the rollup writer, in isolation: CPU per click
// of createRollupWriter() for 500-click batches (a flush) over 100,000 links, uniform and Zipf (s = 1).
// ONLY=uniform or ONLY=Zipf runs one of the two.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createHmac } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { rollMonths } from '../../src/modules/analytics/maintenance'
import type { RollupClick } from '../../src/modules/analytics/rollup-writer'
import { createRollupWriter } from '../../src/modules/analytics/rollup-writer-sqlite'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import { bootstrap } from '../../src/modules/identity/service'
import { seededRandom } from './random'
import { zipfSampler } from './zipf'
import { createRuntime, type Runtime } from '../../src/runtime'
import { sortableId } from '../../src/platform/random'

const CLICKS = Number(process.env.BENCH_CLICKS ?? 10_000_000)
const BURST = Number(process.env.BENCH_BURST ?? 200_000)
const LINKS = 1_000
const VISITORS = 300_000
const VISITOR_POOL = 200_000
const DAY = 86_400_000
const origin = 'http://127.0.0.1:8080'
const keep = process.env.BENCH_DIR
const dir = keep ?? mkdtempSync(join(tmpdir(), 'lnk-bench-analytics-'))
if (keep) mkdirSync(keep, { recursive: true })
const seedFile = join(dir, 'bench.json')
const reuse = keep !== undefined && existsSync(seedFile)
// Proxy trusted: the burst's visitors come as X-Forwarded-For addresses.
const config = loadConfig({ LNK_DATA_DIR: dir, LNK_BASE_URL: origin, LNK_LOG_LEVEL: 'warn', LNK_TRUST_PROXY: '1' })

const rand = seededRandom(42)
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

if (process.argv[2] === 'rollups') {
  await rollupWriterBench()
  if (!keep) rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}

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
    'INSERT INTO clicks (id, link_id, workspace_id, clicked_at, visitor_hash, user_agent, referrer, referrer_host, country, city, device, browser, os, ' +
      'is_bot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)',
  )
  // No second rollups: they are kept a day, and these clicks spread over a year (the burst below writes them).
  const addToRollups = createRollupWriter(sqlite, { seconds: false })
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
        insert.run(
          sortableId('clk', at),
          c.linkId,
          workspaceId,
          at,
          c.visitor,
          UAS[i % UAS.length]!,
          referrer,
          c.referrer,
          c.country,
          c.isBot ? 'bot' : c.device,
          c.browser,
          c.os,
          c.isBot ? 1 : 0,
        )
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

// What the hourly job does once a month (and quarter) is over (a first run: every past month and quarter).
const monthsStart = performance.now()
const monthRows = await rollMonths(sqliteEngine(rt.db.db), Date.now())
const monthSeconds = (performance.now() - monthsStart) / 1000

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
  await rt.close()
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

// --- a burst of redirects, and questions ending inside its hour -----------------------------------------
const slugs = (rt.db.sqlite.query('SELECT id, slug FROM links WHERE workspace_id = ?').all(workspaceId) as { id: string; slug: string }[]).map((l) => l.slug)
// The first start of a version with second rollups writes them from two minutes on (a margin for an older
// process still flushing): a burst before that would measure the upgrade, not the steady state. At most 2 min.
const secondsFrom = Number((rt.db.sqlite.query("SELECT value FROM settings WHERE key = 'rollup_seconds_from'").get() as { value: string } | null)?.value ?? 0)
if (secondsFrom > Date.now()) {
  console.error(`waiting ${((secondsFrom - Date.now()) / 1000).toFixed(0)} s for second rollups to start`)
  await Bun.sleep(Math.min(secondsFrom - Date.now() + 1_000, 130_000))
}
const burstStart = performance.now()
let lastClick = 0
for (let i = 0; i < BURST; i++) {
  const res = await app.handle(
    new Request(`${origin}/${slugs[Math.floor(rand() * slugs.length)]}`, {
      headers: { 'user-agent': UAS[i % UAS.length]!, 'x-forwarded-for': `10.${Math.floor(rand() * 200)}.${Math.floor(rand() * 250)}.1`, accept: 'text/html' },
    }),
  )
  if (res.status !== 302) throw new Error(`redirect answered ${res.status}`)
  lastClick = Date.now()
  if (i % 5_000 === 4_999) await rt.modules.clicks.buffer.flush()
}
await rt.modules.clicks.buffer.flush()
const burstSeconds = (performance.now() - burstStart) / 1000
// `to` a little before the last click: inside the burst's hour, and before now (so its partial hour is read).
const burstTo = lastClick - 1_000
const burstHour = burstTo - (burstTo % 3_600_000)
const inHour = (
  rt.db.sqlite
    .query('SELECT COUNT(*) AS n FROM clicks WHERE workspace_id = ? AND clicked_at >= ? AND clicked_at < ?')
    .get(workspaceId, burstHour, burstHour + 3_600_000) as { n: number }
).n
const edge = `from=${new Date(burstTo - 30 * DAY).toISOString().slice(0, 10)}&to=${new Date(burstTo).toISOString()}`
const BURST_QUERIES: [string, string][] = [
  ['timeline (30 days, workspace, to inside the busy hour)', `/v1/analytics/timeline?${edge}`],
  ['overview (30 days, workspace, to inside the busy hour)', `/v1/analytics/overview?${edge}`],
  ['timeline (30 days, one link, to inside the busy hour)', `/v1/analytics/timeline?${edge}&linkId=${linkIds[7]}`],
  ['top-links (30 days, to inside the busy hour)', `/v1/analytics/top-links?${edge}`],
  ['top-links (30 days, by uniqueClicks, to inside the busy hour)', `/v1/analytics/top-links?${edge}&sort=uniqueClicks`],
]
const burstResults: string[] = []
for (const [name, path] of BURST_QUERIES) {
  const first = await call(path)
  const times: number[] = []
  for (let i = 0; i < 30; i++) times.push(await call(path))
  burstResults.push(`| ${name} | ${ms(first)} | ${ms(percentile(times, 50))} | ${ms(percentile(times, 99))} |`)
}

const check = (await (await app.handle(new Request(`${origin}/v1/analytics/overview?${year}`, { headers: { authorization: `Bearer ${key}` } }))).json()) as any

await rt.close()

console.log(`\n## Analytics benchmark (${CLICKS.toLocaleString()} clicks, ${LINKS} links, one year)\n`)
console.log(
  `${reuse ? 'reused the seeded database' : `seeded in ${seedSeconds.toFixed(0)} s`}; database ${(dbBytes / 1e9).toFixed(2)} GB; overview check: ` +
    `${check.data.totals.clicks.toLocaleString()} clicks, ${check.data.totals.uniqueVisitors.toLocaleString()} visitors (of ` +
    `${VISITORS.toLocaleString()}), ${check.data.totals.botHits.toLocaleString()} bot hits\n`,
)
console.log(`past months and quarters summed into ${monthRows.toLocaleString()} rows in ${monthSeconds.toFixed(1)} s\n`)
console.log('| query | cold | warm p50 | warm p99 |\n|---|---|---|---|')
for (const r of results) console.log(r)
console.log(
  `\nburst: ${BURST.toLocaleString()} redirects through app.handle in ${burstSeconds.toFixed(1)} s; the hour of \`to\` holds ${inHour.toLocaleString()} ` +
    `clicks\n`,
)
console.log('| query | first | warm p50 | warm p99 |\n|---|---|---|---|')
for (const r of burstResults) console.log(r)
if (!keep) rmSync(dir, { recursive: true, force: true })

/** The rollup writer alone: CPU per click for flush-sized batches, uniform and Zipf over 100,000 links. */
async function rollupWriterBench() {
  const LINK_COUNT = 100_000
  const BATCH = 500
  const dir = mkdtempSync(join(process.env.BENCH_TMP ?? tmpdir(), 'lnk-bench-rollups-'))
  const rt = createRuntime(loadConfig({ LNK_DATA_DIR: dir, LNK_BASE_URL: origin, LNK_LOG_LEVEL: 'warn' }), { log: silentLogger })
  const ws = (await bootstrap(rt.modules.identity.ctx, { email: 'bench@example.com', workspace: 'Bench' })).workspace.id
  const sqlite = rt.db.sqlite
  // Links written directly: the writer only needs them to exist (foreign keys).
  const insertLink = sqlite.prepare(
    `INSERT INTO links (id, workspace_id, domain, slug, destination_url, tags, redirect_status, public_stats_enabled,
       deep_link_enabled, captcha_enabled, consent_required, conversion_tracking,
       is_active, is_archived, is_test, total_clicks, unique_clicks, search_text, created_at, updated_at)
     VALUES (?, ?, '127.0.0.1:8080', ?, 'https://example.com/', '[]', 302, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, '', 0, 0)`,
  )
  const ids = Array.from({ length: LINK_COUNT }, () => crypto.randomUUID())
  sqlite.transaction(() => ids.forEach((id, i) => insertLink.run(id, ws, `r${i}`)))()
  const zipf = zipfSampler(LINK_COUNT, rand)
  const visitorPool = Array.from({ length: VISITOR_POOL }, (_, i) => createHmac('sha256', 'bench').update(`v|${i}`).digest('base64url').slice(0, 32))
  const add = createRollupWriter(sqlite)
  // 50,000 clicks a second from 10:00 UTC on: the same hour and day, as under sustained load.
  let at = Date.UTC(2026, 5, 1, 10)
  const run = (n: number, linkOf: () => number) => {
    let cpu = 0
    for (let done = 0; done < n; done += BATCH) {
      const batch: RollupClick[] = []
      for (let i = 0; i < BATCH; i++) {
        at += 0.02
        batch.push({
          linkId: ids[linkOf()]!,
          workspaceId: ws,
          clickedAt: Math.floor(at),
          visitor: visitorPool[Math.floor(rand() * VISITOR_POOL)]!,
          isBot: rand() < 0.03,
          country: pick(COUNTRIES),
          referrer: pick(REFERRERS),
          browser: pick(BROWSERS),
          os: pick(OSES),
          device: pick(DEVICES),
        })
      }
      const before = process.cpuUsage()
      sqlite.transaction(() => add(batch))()
      const used = process.cpuUsage(before)
      cpu += used.user + used.system
    }
    return cpu / n
  }
  console.log('| distribution | CPU per click, 3 runs of 300,000 clicks (after 200,000 to warm up) |\n|---|---|')
  for (const [name, linkOf] of (
    [
      ['uniform', () => Math.floor(rand() * LINK_COUNT)],
      ['Zipf s=1', zipf],
    ] as const
  ).filter((x) => !process.env.ONLY || x[0].startsWith(process.env.ONLY))) {
    run(200_000, linkOf)
    const runs = [run(300_000, linkOf), run(300_000, linkOf), run(300_000, linkOf)]
    console.log(`| ${name} | ${runs.map((us) => `${us.toFixed(1)} µs`).join(' / ')} |`)
  }
  rt.workerDb.close()
  rt.db.close()
  rmSync(dir, { recursive: true, force: true })
}
