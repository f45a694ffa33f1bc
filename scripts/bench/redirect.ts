// Redirect benchmark (run by hand: `bun run scripts/bench/redirect.ts`; needs Debian's `wrk`).
// Seeds BENCH_LINKS links (default 100,000) through POST /v1/links/bulk, then drives redirects at lnk and,
// in the same run, at a bare Bun.serve answering a fixed 302: wrk with one thread and BENCH_CONNECTIONS
// connections (64), a desktop Chrome user agent (every visit is a counted click), BENCH_ROUNDS rounds (3)
// of BENCH_DURATION (10s) after a 3 s warm-up, for two slug distributions: uniform over every link (the
// adversarial case) and Zipf with s = 1 (the common case). Reported per distribution: requests/s (median of
// the rounds), p99 latency (worst round), peak RSS, and server CPU per request over all threads, including
// the flush after the load stops, and whether every redirect was recorded as a click. BENCH_DIR keeps the
// seeded database for the next run. Everything stays on 127.0.0.1 and every phase is bounded.
//
// Routing (issue 36), in one server run of its own: BENCH_ROUTED_LINKS links (10,000) with 10 routing rules
// each (country, device, language and query conditions, the last matching), as many with 3 A/B variants, and
// as many of the plain links, each set driven uniformly with the same requests (a query string, an
// Accept-Language header, X-Forwarded-For over 5,250 addresses); reported: CPU per request of each, and what
// the rules and the variants add over the plain links. BENCH_ONLY=routing runs that part alone.
import { spawn, spawnSync } from 'bun'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { bootstrap } from '../../src/modules/identity/service'
import { createRuntime } from '../../src/runtime'
import { CHROME_UA as UA, cpuSeconds, freePort, median, parseWrk, procStatus, waitReady } from './kit'
import { TEN_RULES, THREE_VARIANTS } from './routing'

const LINKS = Number(process.env.BENCH_LINKS ?? 100_000)
const DURATION = process.env.BENCH_DURATION ?? '10s'
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
const THREADS = Number(process.env.BENCH_THREADS ?? 1)
const ONLY = process.env.BENCH_ONLY // 'uniform' | 'zipf' | 'routing'
const ROUTED = Number(process.env.BENCH_ROUTED_LINKS ?? 10_000)
// off: the server never hands a visit to the click buffer (floors/no-capture.ts), the redirect path alone.
const CAPTURE = process.env.BENCH_CAPTURE !== 'off'
const ROOT = join(import.meta.dir, '../..')

if (spawnSync(['which', 'wrk']).exitCode !== 0) {
  console.error('bench: wrk is missing; install it with: apt-get install -y wrk')
  process.exit(1)
}

const keep = process.env.BENCH_DIR
const dir = keep ?? mkdtempSync(join(tmpdir(), 'lnk-bench-'))
mkdirSync(dir, { recursive: true })
// The short host is part of every link's identity: a reused database keeps the port it was seeded with.
const portFile = join(dir, 'port')
const port = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : freePort()
const origin = `http://127.0.0.1:${port}`
const env = {
  LNK_DATA_DIR: dir,
  LNK_BASE_URL: origin,
  LNK_SHORT_DOMAINS: `127.0.0.1:${port}`,
  LNK_LOG_LEVEL: 'warn',
  LNK_HOST: '127.0.0.1',
  LNK_PORT: String(port),
  // The routing runs send visitors' addresses in X-Forwarded-For; the others send none (the socket's then).
  LNK_TRUST_PROXY: '1',
}

// --- seed --------------------------------------------------------------------------------------------
const rt = createRuntime(loadConfig(env), { log: silentLogger })
const slugsTagged = (tag: string) =>
  (rt.db.sqlite.query('SELECT l.slug FROM links l JOIN link_tags t ON t.link_id = l.id WHERE t.tag = ? ORDER BY l.id').all(tag) as { slug: string }[]).map(
    (r) => r.slug,
  )
let slugs = slugsTagged('bench')
const app = createApp(rt)
let account: Awaited<ReturnType<typeof bootstrap>> | null = null
const post = async (body: unknown) => {
  account ??= await bootstrap(rt.modules.identity.ctx, { email: `bench${Date.now()}@example.com`, workspace: 'Bench' })
  return app.handle(
    new Request(`${origin}/v1/links/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  )
}
if (slugs.length < LINKS) {
  const t0 = performance.now()
  for (let offset = slugs.length; offset < LINKS; offset += 1000) {
    const n = Math.min(1000, LINKS - offset)
    const res = await post({
      links: Array.from({ length: n }, (_, i) => ({ destinationUrl: `https://example.com/page/${offset + i}?ref=bench`, tags: ['bench'] })),
    })
    if (res.status !== 200) throw new Error(`seeding failed: ${res.status} ${await res.text()}`)
  }
  console.log(`seeded ${LINKS - slugs.length} links in ${((performance.now() - t0) / 1000).toFixed(1)} s through POST /v1/links/bulk`)
  slugs = slugsTagged('bench')
  writeFileSync(portFile, String(port))
}
// The routed links, through the bulk API like the others: rules or variants in each create body.
for (const [tag, fields] of [
  ['bench-rules', { routingRules: TEN_RULES }],
  ['bench-variants', { variants: THREE_VARIANTS }],
] as const) {
  // 200 a request: ten rules make a create body about 1.5 KB, and a request body is capped at 1 MiB.
  for (let have = slugsTagged(tag).length; have < ROUTED; have += 200) {
    const n = Math.min(200, ROUTED - have)
    const res = await post({
      links: Array.from({ length: n }, (_, i) => ({ destinationUrl: `https://example.com/${tag}/${have + i}`, tags: [tag], ...fields })),
    })
    const text = await res.text()
    if (res.status !== 200 || JSON.parse(text).data.failed) throw new Error(`seeding ${tag} failed: ${res.status} ${text.slice(0, 500)}`)
  }
}
writeFileSync(portFile, String(port))
const routedSlugs = { plain: slugs.slice(0, ROUTED), rules: slugsTagged('bench-rules'), variants: slugsTagged('bench-variants') }
await rt.close()

const totalClicks = () => {
  const { Database } = require('bun:sqlite') as typeof import('bun:sqlite')
  const db = new Database(join(dir, 'lnk.db'), { readonly: true })
  const row = db.query('SELECT coalesce(sum(total_clicks), 0) AS clicks FROM links').get() as { clicks: number }
  db.close()
  return row.clicks
}

// Slug choice happens in wrk's Lua, seeded, so every run sends the same sequence. Zipf(s = 1) by inverse
// CDF over the cumulative weights 1/k, a binary search per request.
const list = `local slugs = {${slugs.map((s) => `"${s}"`).join(',')}}\nmath.randomseed(42)\n`
const scripts = {
  uniform: `${list}request = function()\n  return wrk.format("GET", "/" .. slugs[math.random(#slugs)])\nend\n`,
  zipf:
    `${list}local cum = {}\nlocal acc = 0\nfor k = 1, #slugs do acc = acc + 1 / k; cum[k] = acc end\nrequest = function()\n  local u = ` +
    `math.random() * acc\n  local lo, hi = 1, #slugs\n  while lo < hi do\n    local mid = math.floor((lo + hi) / 2)\n    if cum[mid] < u then lo = ` +
    `mid + 1 else hi = mid end\n  end\n  return wrk.format("GET", "/" .. slugs[lo])\nend\n`,
}
for (const [name, text] of Object.entries(scripts)) writeFileSync(join(dir, `${name}.lua`), text)
// The routing runs: one set's slugs, uniformly, every request with the query the last rule matches, the
// language header and one of 5,250 visitor addresses (so variants split them and lookups hit warm caches).
const routedScript = (list: string[]) =>
  `local slugs = {${list.map((s) => `"${s}"`).join(',')}}\nmath.randomseed(42)\nlocal n = 0\n` +
  `local headers = { ["User-Agent"] = "${UA}", ["Accept-Language"] = "en-US,en;q=0.9" }\n` +
  `request = function()\n  n = n + 1\n  headers["X-Forwarded-For"] = "8." .. (n % 3) .. "." .. (n % 7) .. "." .. (n % 250)\n` +
  `  return wrk.format("GET", "/" .. slugs[math.random(#slugs)] .. "?src=bench", headers)\nend\n`
for (const [name, list] of Object.entries(routedSlugs)) writeFileSync(join(dir, `routing-${name}.lua`), routedScript(list))

// --- measuring ---------------------------------------------------------------------------------------
/**
 * After the load stops the server still writes what it buffered: that CPU belongs to the requests. Waits
 * until the process is idle (under 2 % of a core for a second), at most 60 s.
 */
async function settle(pid: number) {
  const deadline = Date.now() + 60_000
  let quiet = 0
  let last = cpuSeconds(pid)
  while (Date.now() < deadline && quiet < 5) {
    await Bun.sleep(200)
    const now = cpuSeconds(pid)
    quiet = now - last <= 0.004 ? quiet + 1 : 0
    last = now
  }
}

function wrk(url: string, script: string, duration: string) {
  const out = spawnSync([
    'wrk',
    `-t${THREADS}`,
    `-c${CONNECTIONS}`,
    `-d${duration}`,
    '--latency',
    '-H',
    `User-Agent: ${UA}`,
    '-s',
    script,
    url,
  ]).stdout.toString()
  return parseWrk(out)
}

interface Result {
  rps: number[]
  p99: number[]
  peakRssMb: number
  cpuUs: number
  requests: number
  bad: number
}

async function drive(url: string, pid: number, script: string): Promise<Result> {
  const warm = wrk(url, script, '3s')
  await settle(pid)
  const cpuBefore = cpuSeconds(pid)
  const rounds = Array.from({ length: ROUNDS }, () => wrk(url, script, DURATION))
  await settle(pid)
  const requests = rounds.reduce((n, r) => n + r.requests, 0)
  return {
    rps: rounds.map((r) => r.rps),
    p99: rounds.map((r) => r.p99),
    peakRssMb: Math.round(procStatus(pid, 'VmHWM') / 102.4) / 10,
    cpuUs: Math.round(((cpuSeconds(pid) - cpuBefore) / requests) * 1e7) / 10,
    requests: requests + warm.requests,
    bad: rounds.reduce((n, r) => n + r.bad, warm.bad),
  }
}

function serveLnk() {
  const preload = CAPTURE ? [] : ['--preload', join(import.meta.dir, 'floors/no-capture.ts')]
  return spawn(['bun', 'run', ...preload, join(ROOT, 'src/main.ts'), 'serve'], { env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'inherit' })
}

async function runLnk(script: string) {
  const before = totalClicks()
  const lnk = serveLnk()
  try {
    await waitReady(`${origin}/readyz`)
    await settle(lnk.pid) // the link cache fills at start
    const idleRssMb = Math.round(procStatus(lnk.pid, 'VmRSS') / 102.4) / 10
    const result = await drive(origin, lnk.pid, script)
    const metrics = await (await fetch(`${origin}/metrics`)).text()
    const shed = Number(/^lnk_clicks_shed_total (\d+)/m.exec(metrics)?.[1] ?? 0)
    lnk.kill('SIGTERM')
    await lnk.exited
    return { ...result, idleRssMb, shed, recorded: totalClicks() - before }
  } finally {
    lnk.kill('SIGKILL')
  }
}

async function runBare(script: string) {
  const barePort = freePort()
  const file = join(dir, 'bare.ts')
  writeFileSync(
    file,
    `Bun.serve({ port: ${barePort}, hostname: '127.0.0.1', fetch: () => new Response(null, { status: 302, headers: { location: ` +
      `'https://example.com/page' } }) })\n`,
  )
  const bare = spawn(['bun', 'run', file], { stdout: 'ignore', stderr: 'inherit' })
  try {
    await waitReady(`http://127.0.0.1:${barePort}/`)
    return await drive(`http://127.0.0.1:${barePort}`, bare.pid, script)
  } finally {
    bare.kill('SIGKILL')
    await bare.exited
  }
}

// wrk counts the responses it read; requests cut off when a run ends were still served and counted, at
// most one per connection per run.
const recordedAll = (r: Result & { recorded: number }) => r.recorded >= r.requests - r.bad && r.recorded <= r.requests + CONNECTIONS * (ROUNDS + 1)
const fmt = (r: Result) =>
  `${median(r.rps).toFixed(0).padStart(7)} req/s (rounds ${r.rps.map((x) => x.toFixed(0)).join(', ')})  p99 ${Math.max(...r.p99).toFixed(2)} ms  peak ` +
  `RSS ${r.peakRssMb} MB  CPU ${r.cpuUs} µs/req`

console.log(
  `\n## Redirect benchmark: ${slugs.length} links, wrk -t${THREADS} -c${CONNECTIONS}, ${ROUNDS} × ${DURATION}, desktop Chrome ` +
    `UA${CAPTURE ? '' : ', click capture off'}\n`,
)
for (const name of Object.keys(scripts) as (keyof typeof scripts)[]) {
  if (ONLY && ONLY !== name) continue
  const script = join(dir, `${name}.lua`)
  const lnk = await runLnk(script)
  const bare = await runBare(script)
  console.log(`${name}:`)
  console.log(`  lnk  ${fmt(lnk)}  (idle RSS ${lnk.idleRssMb} MB)`)
  console.log(`  bare ${fmt(bare)}`)
  const recorded = CAPTURE
    ? `clicks recorded ${lnk.recorded}${recordedAll(lnk) ? ' (every one)' : ' (MISSING CLICKS)'}`
    : `clicks recorded ${lnk.recorded} (capture off)`
  console.log(
    `  ratio ${(median(lnk.rps) / median(bare.rps)).toFixed(2)}; redirects ${lnk.requests}, ${recorded}, errors ${lnk.bad}; kept as counts only (writer ` +
      `behind): ${lnk.shed}`,
  )
}

/** The three routed sets, one after the other on one server: what rules and variants cost over plain links. */
async function runRouting() {
  const before = totalClicks()
  const lnk = serveLnk()
  try {
    await waitReady(`${origin}/readyz`)
    await settle(lnk.pid)
    const results: Record<string, Result> = {}
    for (const name of Object.keys(routedSlugs)) results[name] = await drive(origin, lnk.pid, join(dir, `routing-${name}.lua`))
    lnk.kill('SIGTERM')
    await lnk.exited
    return { results, recorded: totalClicks() - before }
  } finally {
    lnk.kill('SIGKILL')
  }
}

if (!ONLY || ONLY === 'routing') {
  const { results, recorded } = await runRouting()
  const plain = results.plain!
  console.log(`routing (${ROUTED} links per set, one server, the same requests):`)
  for (const [name, r] of Object.entries(results)) {
    const extra = name === 'plain' ? '' : `  (+${(r.cpuUs - plain.cpuUs).toFixed(1)} µs/req over plain)`
    console.log(`  ${name.padEnd(8)} ${fmt(r)}${extra}`)
  }
  const requests = Object.values(results).reduce((n, r) => n + r.requests, 0)
  console.log(`  redirects ${requests}, clicks recorded ${recorded}, errors ${Object.values(results).reduce((n, r) => n + r.bad, 0)}`)
}
if (!keep) rmSync(dir, { recursive: true, force: true })
