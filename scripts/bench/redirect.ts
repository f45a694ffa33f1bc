// Redirect benchmark (run by hand: `bun run scripts/bench/redirect.ts`; needs Debian's `wrk`).
// Seeds 100,000 links, then drives random-slug redirects at lnk and, in the same run, at a bare Bun.serve
// answering a fixed 302. Reports requests/s, p50/p99 latency, RSS and server CPU per request (all threads,
// including the flush after the load stops) of both, and the ratio. Also times a
// bulk create of 1,000 links through the API. Everything stays on 127.0.0.1 and every phase is bounded.
import { spawn, spawnSync } from 'bun'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { bootstrap } from '../../src/modules/identity/service'
import { createRuntime } from '../../src/runtime'

const LINKS = Number(process.env.BENCH_LINKS ?? 100_000)
const DURATION = process.env.BENCH_DURATION ?? '10s'
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const ROOT = join(import.meta.dir, '../..')

if (spawnSync(['which', 'wrk']).exitCode !== 0) {
  console.error('bench: wrk is missing; install it with: apt-get install -y wrk')
  process.exit(1)
}

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

const dir = mkdtempSync(join(tmpdir(), 'lnk-bench-'))
const port = freePort()
const origin = `http://127.0.0.1:${port}`
const env = { LNK_DATA_DIR: dir, LNK_BASE_URL: origin, LNK_SHORT_DOMAINS: `127.0.0.1:${port}`, LNK_LOG_LEVEL: 'warn', LNK_HOST: '127.0.0.1', LNK_PORT: String(port) }

// --- seed --------------------------------------------------------------------------------------------
const rt = createRuntime(loadConfig(env), { log: silentLogger })
const app = createApp(rt)
const account = await bootstrap(rt.modules.identity.ctx, { email: 'bench@example.com', workspace: 'Bench' })
const post = (body: unknown) =>
  app.handle(new Request(`${origin}/v1/links/bulk`, { method: 'POST', headers: { authorization: `Bearer ${account.apiKey.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }))

const batch = (n: number, offset: number) => ({ links: Array.from({ length: n }, (_, i) => ({ destinationUrl: `https://example.com/page/${offset + i}?ref=bench`, tags: ['bench'] })) })
const bulkTimes: number[] = []
for (let i = 0; i < 5; i++) {
  const t0 = performance.now()
  const res = await post(batch(1000, i * 1000))
  bulkTimes.push(performance.now() - t0)
  if (res.status !== 200) throw new Error(`bulk create failed: ${res.status} ${await res.text()}`)
}
const seedStart = performance.now()
for (let offset = 5000; offset < LINKS; offset += 1000) {
  const res = await post(batch(Math.min(1000, LINKS - offset), offset))
  if (res.status !== 200) throw new Error(`seeding failed: ${res.status}`)
}
const seedMs = performance.now() - seedStart
const slugs = (rt.db.sqlite.query('SELECT slug FROM links').all() as { slug: string }[]).map((r) => r.slug)
rt.db.close()

const lua = join(dir, 'slugs.lua')
writeFileSync(
  lua,
  `local slugs = {${slugs.map((s) => `"${s}"`).join(',')}}\nmath.randomseed(42)\nrequest = function()\n  return wrk.format("GET", "/" .. slugs[math.random(#slugs)])\nend\n`,
)

// --- targets -----------------------------------------------------------------------------------------
function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
}

/** CPU seconds the process has used, all threads, user + system (/proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** After the load stops the server still flushes what it buffered: that CPU belongs to the requests too. */
const SETTLE_MS = 2_000

async function waitReady(url: string) {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url, { redirect: 'manual' })
      if (r.status < 500) return
    } catch {
      /* not up yet */
    }
    await Bun.sleep(100)
  }
  throw new Error(`${url} did not come up`)
}

interface Result {
  rps: number
  p50: string
  p99: string
  rssMb: number
  non3xx: number
  /** Server CPU per request over the measured run plus the settle after it, in µs. */
  cpuUs: number
}

async function load(url: string, pid: number, script?: string): Promise<Result> {
  // Warm-up, then the measured run.
  spawnSync(['wrk', '-t2', `-c${CONNECTIONS}`, '-d3s', '-H', `User-Agent: ${UA}`, ...(script ? ['-s', script] : []), url])
  const cpuBefore = cpuSeconds(pid)
  const out = spawnSync(['wrk', '-t2', `-c${CONNECTIONS}`, `-d${DURATION}`, '--latency', '-H', `User-Agent: ${UA}`, ...(script ? ['-s', script] : []), url]).stdout.toString()
  const rss = rssKb(pid)
  await Bun.sleep(SETTLE_MS)
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0)
  const cpuUs = requests ? Math.round(((cpuSeconds(pid) - cpuBefore) / requests) * 1e7) / 10 : 0
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0)
  const p50 = /\s50%\s+(\S+)/.exec(out)?.[1] ?? '?'
  const p99 = /\s99%\s+(\S+)/.exec(out)?.[1] ?? '?'
  const non3xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0)
  return { rps, p50, p99, rssMb: Math.round(rss / 102.4) / 10, non3xx, cpuUs }
}

const lnk = spawn(['bun', 'run', join(ROOT, 'src/main.ts'), 'serve'], { env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'inherit' })
let lnkResult: Result
try {
  await waitReady(`${origin}/readyz`)
  lnkResult = await load(origin, lnk.pid, lua)
} finally {
  lnk.kill('SIGTERM')
  await lnk.exited
}

const barePort = freePort()
const bareScript = join(dir, 'bare.ts')
writeFileSync(bareScript, `Bun.serve({ port: ${barePort}, hostname: '127.0.0.1', fetch: () => new Response(null, { status: 302, headers: { location: 'https://example.com/page' } }) })\n`)
const bare = spawn(['bun', 'run', bareScript], { stdout: 'ignore', stderr: 'inherit' })
let bareResult: Result
try {
  await waitReady(`http://127.0.0.1:${barePort}/`)
  bareResult = await load(`http://127.0.0.1:${barePort}`, bare.pid, lua)
} finally {
  bare.kill('SIGTERM')
  await bare.exited
}

const counted = (() => {
  const { Database } = require('bun:sqlite') as typeof import('bun:sqlite')
  const db = new Database(join(dir, 'lnk.db'), { readonly: true })
  const row = db.query('SELECT sum(total_clicks) AS clicks FROM links').get() as { clicks: number }
  db.close()
  return row.clicks
})()

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`links in database:        ${slugs.length} (seeded in ${(seedMs / 1000).toFixed(1)} s through POST /v1/links/bulk)`)
console.log(`bulk create of 1000 links: median ${median(bulkTimes).toFixed(0)} ms (runs: ${bulkTimes.map((t) => t.toFixed(0)).join(', ')} ms)`)
console.log(`load: wrk -t2 -c${CONNECTIONS} -d${DURATION}, random slugs, desktop Chrome user agent`)
console.log(`lnk redirect:   ${lnkResult.rps.toFixed(0)} req/s  p50 ${lnkResult.p50}  p99 ${lnkResult.p99}  RSS ${lnkResult.rssMb} MB  CPU ${lnkResult.cpuUs} µs/req  non-3xx ${lnkResult.non3xx}`)
console.log(`bare Bun 302:   ${bareResult.rps.toFixed(0)} req/s  p50 ${bareResult.p50}  p99 ${bareResult.p99}  RSS ${bareResult.rssMb} MB  CPU ${bareResult.cpuUs} µs/req`)
console.log(`ratio lnk/bare: ${(lnkResult.rps / bareResult.rps).toFixed(2)} (target >= 0.6)`)
console.log(`clicks recorded by lnk:   ${counted}`)
rmSync(dir, { recursive: true, force: true })
