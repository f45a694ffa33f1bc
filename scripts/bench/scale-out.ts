// Scale-out benchmark (run by hand: `bun run scripts/bench/scale-out.ts`; needs Debian's `wrk` and `postgresql`).
// One `lnk serve` on SQLite against one on PostgreSQL, and two on one PostgreSQL database against one.
//
// PostgreSQL: BENCH_DATABASE_URL (an admin URL of a server the caller runs; the script creates and drops a
// database of its own there), else a private cluster started here on a free 127.0.0.1 port with Debian's
// binaries, like test/setup/postgres.ts does, but with PostgreSQL's default durability (fsync and
// synchronous_commit on, as docs/scale-out.md tells operators to run), where the test cluster turns fsync off.
// BENCH_LINKS links (20,000) are seeded through POST /v1/links/bulk of a PostgreSQL node, then copied to a
// SQLite data directory with `lnk admin export` / `import`, so every scenario serves the same links.
//
// Scenarios, each BENCH_ROUNDS (3) rounds of BENCH_DURATION (10s) after a 3 s warm-up, slugs uniform over
// every link, 64 connections in all, a desktop Chrome user agent (every visit is a counted click):
//   sqlite  one node on SQLite;  pg-1  one node on PostgreSQL;  pg-2  two nodes on the same database, one
//   wrk each with 32 connections, run at the same time (requests/s is their sum, p99 the worse of the two).
// Reported: requests/s (median of the rounds), p99 (worst round), CPU per request (the lnk processes and, on
// PostgreSQL, the cluster's processes: the postmaster, its children, and the children it reaped meanwhile,
// from /proc/<pid>/stat; measured until everything is idle again, so the flush after the load counts), peak
// RSS of each lnk process, and whether every redirect was counted (the links' totalClicks read through the
// API against wrk's responses).
//
// Then click ingestion in-process, as scripts/bench/ingest.ts measures it (the click buffer and its writer,
// enrichment, visitors, rollups and link.clicked events on), for SQLite's writer thread against PostgreSQL's
// click repo: BENCH_CLICKS clicks (100,000) uniform over the same number of links. BENCH_ONLY=ingest runs
// only this part.
//
// Everything stays on 127.0.0.1, every phase is bounded, and the nodes, the database and the cluster are
// removed at the end, also on an error or Ctrl-C.
import { spawn, spawnSync, SQL } from 'bun'
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { bootstrap } from '../../src/modules/identity/service'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { openRuntime } from '../../src/runtime'
import { CHROME_UA, cpuSeconds, feedClicks, freePort, median, parseWrk, procStatus, waitReady } from './kit'
import { seededRandom } from './random'

const LINKS = Number(process.env.BENCH_LINKS ?? 20_000)
const DURATION = process.env.BENCH_DURATION ?? '10s'
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CLICKS = Number(process.env.BENCH_CLICKS ?? 100_000)
const CONNECTIONS = 64
const SHORT = 'bench.lnk'
const ROOT = join(import.meta.dir, '../..')
const MAIN = join(ROOT, 'src/main.ts')

if (spawnSync(['which', 'wrk']).exitCode !== 0) {
  console.error('bench: wrk is missing; install it with: apt-get install -y wrk')
  process.exit(1)
}

// --- clean-up, also on an error or a signal ------------------------------------------------------------
const cleanups: (() => unknown)[] = []
async function cleanUp() {
  while (cleanups.length) {
    try {
      await cleanups.pop()!()
    } catch (err) {
      console.error(`clean-up: ${(err as Error).message}`)
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void cleanUp().finally(() => process.exit(130)))

const work = mkdtempSync(join(tmpdir(), 'lnk-scale-'))
cleanups.push(() => rmSync(work, { recursive: true, force: true }))

// --- PostgreSQL -------------------------------------------------------------------------------------------
function run(argv: string[], timeoutMs = 60_000) {
  const r = spawnSync(argv, { timeout: timeoutMs, stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`${argv.join(' ')} failed (${r.exitCode}): ${r.stderr.toString() || r.stdout.toString()}`)
  return r.stdout.toString()
}

/** The admin URL of a private cluster with PostgreSQL's default durability, stopped at clean-up. */
function startCluster(): string {
  const root = '/usr/lib/postgresql'
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0]
  if (!version) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql')
  const bin = join(root, version, 'bin')
  // PostgreSQL refuses to run as root.
  const as = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : []
  // Its own directory: the postgres user cannot enter the run's (mode 0700, root's).
  const dir = mkdtempSync(join(tmpdir(), 'lnk-scale-pg-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  if (as.length) chownSync(dir, Number(run(['id', '-u', 'postgres']).trim()), Number(run(['id', '-g', 'postgres']).trim()))
  const data = join(dir, 'data')
  run([...as, join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'lnk', '-E', 'UTF8', '--locale=C.UTF-8'])
  const port = freePort()
  run([...as, join(bin, 'pg_ctl'), '-D', data, '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'])
  cleanups.push(() => run([...as, join(bin, 'pg_ctl'), '-D', data, '-m', 'fast', '-t', '30', 'stop']))
  return `postgres://lnk@127.0.0.1:${port}/postgres`
}

async function createDatabase(admin: string, name: string): Promise<string> {
  const sql = new SQL(admin, { max: 1 })
  try {
    await sql.unsafe(`CREATE DATABASE ${name}`)
  } finally {
    await sql.close()
  }
  cleanups.push(async () => {
    const again = new SQL(admin, { max: 1 })
    try {
      await again.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    } finally {
      await again.close()
    }
  })
  const url = new URL(admin)
  url.pathname = `/${name}`
  return url.toString()
}

function statFields(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  } catch {
    return null // gone, or not on this machine
  }
}

/** The postmaster's pid: the parent of a backend serving us, when the server runs on this machine. */
async function postmasterOf(url: string): Promise<number | null> {
  const sql = new SQL(url, { max: 1 })
  try {
    const [row] = (await sql`SELECT pg_backend_pid() AS pid`) as { pid: number }[]
    const fields = statFields(Number(row!.pid))
    return fields ? Number(fields[1]) : null
  } finally {
    await sql.close()
  }
}

/**
 * CPU seconds of the whole cluster: the postmaster, its living children, and (cutime + cstime of the
 * postmaster) the children it has reaped, so backends that ended meanwhile still count.
 */
function clusterCpu(postmaster: number | null): number {
  if (postmaster === null) return 0
  const own = statFields(postmaster)
  if (!own) return 0
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const f = statFields(Number(entry))
    if (f && Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])
  }
  return ticks / 100
}

// --- lnk processes ------------------------------------------------------------------------------------------
function lnkEnv(dataDir: string, databaseUrl: string | null, port = 0): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LNK_')) env[k] = v
  return {
    ...env,
    LNK_DATA_DIR: dataDir,
    LNK_BASE_URL: `http://${SHORT}`,
    LNK_SHORT_DOMAINS: SHORT,
    LNK_HOST: '127.0.0.1',
    ...(port ? { LNK_PORT: String(port) } : {}),
    LNK_LOG_LEVEL: 'warn',
    ...(databaseUrl ? { LNK_DATABASE_URL: databaseUrl } : {}),
  }
}

function lnkCommand(args: string[], env: Record<string, string>, timeoutMs = 120_000) {
  const r = spawnSync(['bun', 'run', MAIN, ...args], { env, timeout: timeoutMs, stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`lnk ${args.join(' ')} failed (${r.exitCode}): ${r.stderr.toString()}`)
  return r.stdout.toString()
}

interface Node {
  pid: number
  port: number
  /** SIGTERM (the node writes what it buffered), SIGKILL after 30 s: answers how long it took, and whether it was killed. */
  stop(): Promise<{ seconds: number; killed: boolean }>
}

let nodes = 0
async function startNode(databaseUrl: string | null, dataDir?: string): Promise<Node> {
  const port = freePort()
  const dir = dataDir ?? join(work, `node-${++nodes}`)
  const proc = spawn(['bun', 'run', MAIN, 'serve'], { env: lnkEnv(dir, databaseUrl, port), stdout: 'ignore', stderr: 'inherit' })
  const kill = () => proc.kill('SIGKILL')
  cleanups.push(kill)
  await waitReady(`http://127.0.0.1:${port}/readyz`)
  return {
    pid: proc.pid,
    port,
    async stop() {
      const t0 = performance.now()
      let killed = false
      proc.kill('SIGTERM')
      const timer = setTimeout(() => {
        killed = true
        kill()
      }, 30_000)
      await proc.exited
      clearTimeout(timer)
      return { seconds: Math.round((performance.now() - t0) / 100) / 10, killed }
    },
  }
}

/** An API call, waiting out the key's rate limit (600 a minute) when it answers 429. */
async function api(node: Node, key: string, path: string, body?: unknown): Promise<any> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const res = await fetch(`http://127.0.0.1:${node.port}/v1${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    if (res.status === 429) {
      await Bun.sleep(Math.min(60, Number(res.headers.get('ratelimit-reset') ?? 5) + 1) * 1000)
      continue
    }
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return res.json()
  }
  throw new Error(`${path}: still rate limited`)
}

/** The sum of every link's totalClicks, read through GET /v1/links a page of 100 at a time. */
async function totalClicks(node: Node, key: string): Promise<number> {
  let total = 0
  for (let page = 1; page <= Math.ceil(LINKS / 100) + 1; page++) {
    const { data } = (await api(node, key, `/links?perPage=100&page=${page}`)) as { data: { totalClicks: number }[] }
    for (const link of data) total += link.totalClicks
    if (data.length < 100) break
  }
  return total
}

// --- measuring ------------------------------------------------------------------------------------------------
/**
 * Waits until the measured processes are idle (under 2 % of a core for a second in all), at most 180 s: a
 * PostgreSQL node writes its backlog for over a minute after a saturating run, and that CPU belongs to it.
 */
async function settle(cpu: () => number) {
  const deadline = Date.now() + 180_000
  let quiet = 0
  let last = cpu()
  while (Date.now() < deadline && quiet < 5) {
    await Bun.sleep(200)
    const now = cpu()
    quiet = now - last <= 0.004 ? quiet + 1 : 0
    last = now
  }
}

async function wrkAt(node: Node, connections: number, duration: string, script: string) {
  const proc = spawn(
    [
      'wrk',
      '-t1',
      `-c${connections}`,
      `-d${duration}`,
      '--latency',
      '-H',
      `User-Agent: ${CHROME_UA}`,
      '-H',
      `Host: ${SHORT}`,
      '-s',
      script,
      `http://127.0.0.1:${node.port}`,
    ],
    {
      stdout: 'pipe',
      stderr: 'inherit',
    },
  )
  const timer = setTimeout(() => proc.kill('SIGKILL'), Number.parseFloat(duration) * 1000 + 30_000)
  const out = await new Response(proc.stdout).text()
  await proc.exited
  clearTimeout(timer)
  return parseWrk(out)
}

/** One round: one wrk per node, all at once, the connections split evenly. */
async function round(on: Node[], duration: string, script: string) {
  const parts = await Promise.all(on.map((n) => wrkAt(n, CONNECTIONS / on.length, duration, script)))
  return {
    requests: parts.reduce((s, p) => s + p.requests, 0),
    rps: parts.reduce((s, p) => s + p.rps, 0),
    p99: Math.max(...parts.map((p) => p.p99)),
    bad: parts.reduce((s, p) => s + p.bad, 0),
  }
}

interface Scenario {
  name: string
  rps: number[]
  p99: number[]
  lnkUs: number
  pgUs: number
  peakRssMb: number[]
  requests: number
  bad: number
  counted: number
  /** Clicks kept as counts only (lnk_clicks_shed_total): counted in totalClicks, but no click row, visitor, rollup share or event. */
  shed: number
  /** Seconds from the end of the last round until the totals held every response (null: not within 60 s). */
  countedAfter: number | null
  stopped: { seconds: number; killed: boolean }[]
}

async function scenario(name: string, on: Node[], postmaster: number | null, key: string, script: string, countedBefore: number): Promise<Scenario> {
  const lnkCpu = () => on.reduce((s, n) => s + cpuSeconds(n.pid), 0)
  const allCpu = () => lnkCpu() + clusterCpu(postmaster)
  await settle(allCpu) // the link cache fills at start
  const warm = await round(on, '3s', script)
  await settle(allCpu)
  const lnk0 = lnkCpu()
  const pg0 = clusterCpu(postmaster)
  const rounds = []
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(on, DURATION, script))
  const loadEnded = performance.now()
  await settle(allCpu)
  const measured = rounds.reduce((s, r) => s + r.requests, 0)
  const us = (seconds: number) => Math.round((seconds / measured) * 1e7) / 10
  const result = {
    name,
    rps: rounds.map((r) => r.rps),
    p99: rounds.map((r) => r.p99),
    lnkUs: us(lnkCpu() - lnk0),
    pgUs: us(clusterCpu(postmaster) - pg0),
    peakRssMb: on.map((n) => Math.round(procStatus(n.pid, 'VmHWM') / 102.4) / 10),
    requests: measured + warm.requests,
    bad: rounds.reduce((s, r) => s + r.bad, warm.bad),
  }
  let shed = 0
  for (const n of on) shed += Number(/^lnk_clicks_shed_total (\d+)/m.exec(await (await fetch(`http://127.0.0.1:${n.port}/metrics`)).text())?.[1] ?? 0)
  // The totals are read again until they hold every response or stop moving (60 s at most): the flush may
  // still be writing after the processes looked idle.
  let counted = (await totalClicks(on[0]!, key)) - countedBefore
  let countedAfter: number | null = counted >= result.requests - result.bad ? (performance.now() - loadEnded) / 1000 : null
  for (const deadline = Date.now() + 60_000; countedAfter === null && Date.now() < deadline; ) {
    await Bun.sleep(2000)
    const again = (await totalClicks(on[0]!, key)) - countedBefore
    if (again >= result.requests - result.bad) countedAfter = (performance.now() - loadEnded) / 1000
    if (again === counted) break
    counted = again
  }
  return { ...result, counted, shed, countedAfter, stopped: [] }
}

// wrk counts the responses it read; requests cut off when a run ends were still served and counted, at most
// one per connection per run.
const countedAll = (s: Scenario) => s.counted >= s.requests - s.bad && s.counted <= s.requests + CONNECTIONS * (ROUNDS + 1)

// --- click ingestion, in-process ------------------------------------------------------------------------------
const rand = seededRandom(42)

async function ingest(databaseUrl: string | null) {
  const config = loadConfig({
    ...lnkEnv(join(work, databaseUrl ? 'ingest-pg' : 'ingest-sqlite'), databaseUrl),
    LNK_WEBHOOK_ALLOW_HTTP: 'true',
    LNK_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
  })
  let rt = await openRuntime(config, { log: silentLogger })
  const app = createApp(rt)
  const account = await bootstrap(rt.modules.identity.ctx, { email: 'ingest@example.com', workspace: 'Ingest' })
  const auth = { authorization: `Bearer ${account.apiKey.key}`, 'content-type': 'application/json' }
  // A listening endpoint, so every click also writes its link.clicked event (the worker is never started).
  const hook = await app.handle(
    new Request(`http://${SHORT}/v1/webhooks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: 'http://127.0.0.1:9/never-sent', events: ['link.clicked'] }),
    }),
  )
  if (hook.status !== 201) throw new Error(`endpoint: ${hook.status} ${await hook.text()}`)
  const ids: string[] = []
  for (let offset = 0; offset < LINKS; offset += 1000) {
    const body = { links: Array.from({ length: Math.min(1000, LINKS - offset) }, (_, i) => ({ destinationUrl: `https://example.com/${offset + i}` })) }
    const res = await app.handle(new Request(`http://${SHORT}/v1/links/bulk`, { method: 'POST', headers: auth, body: JSON.stringify(body) }))
    if (res.status !== 200) throw new Error(`seeding: ${res.status}`)
    for (const r of ((await res.json()) as { data: { results: { link?: { id: string } }[] } }).data.results) if (r.link) ids.push(r.link.id)
  }
  await rt.close()

  rt = await openRuntime(config, { log: silentLogger, clickWriter: 'thread' })
  const postmaster = databaseUrl ? await postmasterOf(databaseUrl) : null
  const buffer = rt.modules.clicks.buffer
  buffer.start()
  const pg0 = clusterCpu(postmaster)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await feedClicks(buffer, CLICKS, { linkId: () => ids[Math.floor(rand() * ids.length)]!, workspaceId: account.workspace.id, userAgent: () => CHROME_UA, rand })
  await buffer.stop()
  const seconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  const pgSeconds = clusterCpu(postmaster) - pg0
  let stored: number
  let events: number
  if (databaseUrl) {
    const sql = new SQL(databaseUrl, { max: 1 })
    try {
      stored = Number(((await sql`SELECT coalesce(sum(total_clicks), 0) AS n FROM links`) as { n: string }[])[0]!.n)
      events = Number(((await sql`SELECT count(*) AS n FROM outbox WHERE type = 'link.clicked'`) as { n: string }[])[0]!.n)
    } finally {
      await sql.close()
    }
  } else {
    stored = (rt.db.sqlite.query('SELECT coalesce(sum(total_clicks), 0) AS n FROM links').get() as { n: number }).n
    events = (rt.db.sqlite.query("SELECT count(*) AS n FROM outbox WHERE type = 'link.clicked'").get() as { n: number }).n
  }
  await rt.close()
  return {
    perSecond: Math.round(CLICKS / seconds),
    processUs: Math.round((cpu.user + cpu.system) / CLICKS),
    pgUs: Math.round((pgSeconds * 1e6) / CLICKS),
    exact: stored === CLICKS && events === CLICKS ? 'all' : `MISMATCH: ${stored} counted, ${events} events`,
  }
}

// --- the run --------------------------------------------------------------------------------------------------
async function main() {
  const admin = process.env.BENCH_DATABASE_URL || startCluster()
  const dbUrl = await createDatabase(admin, `lnk_bench_${process.pid}`)
  const postmaster = await postmasterOf(dbUrl)
  const clusterCpu = postmaster === null ? 'not measured (server not on this machine)' : `from postmaster ${postmaster} and its children`
  const server = process.env.BENCH_DATABASE_URL ? 'from BENCH_DATABASE_URL' : 'private cluster'
  console.log(`PostgreSQL ${server}; cluster CPU ${clusterCpu}; nproc ${navigator.hardwareConcurrency}`)
  if (process.env.BENCH_ONLY !== 'ingest') await redirects(dbUrl, postmaster)
  await ingestion(admin)
}

async function redirects(dbUrl: string, postmaster: number | null) {
  // Seed through a PostgreSQL node's API (it migrates the database), then copy to SQLite.
  const seeder = await startNode(dbUrl)
  const { apiKey } = JSON.parse(
    lnkCommand(['admin', 'bootstrap', '--email', 'bench@example.com', '--workspace', 'Bench', '--json'], lnkEnv(join(work, 'cli'), dbUrl)),
  ) as { apiKey: { key: string } }
  const key = apiKey.key
  const slugs: string[] = []
  const t0 = performance.now()
  for (let offset = 0; offset < LINKS; offset += 1000) {
    const n = Math.min(1000, LINKS - offset)
    const { data } = await api(seeder, key, '/links/bulk', {
      links: Array.from({ length: n }, (_, i) => ({ destinationUrl: `https://example.com/page/${offset + i}?ref=bench`, tags: ['bench'] })),
    })
    for (const r of (data as { results: { link?: { slug: string } }[] }).results) if (r.link) slugs.push(r.link.slug)
  }
  if (slugs.length !== LINKS) throw new Error(`seeding: ${slugs.length} of ${LINKS} links created`)
  console.log(`seeded ${LINKS} links in ${((performance.now() - t0) / 1000).toFixed(1)} s through POST /v1/links/bulk on a PostgreSQL node`)
  await seeder.stop()
  const file = join(work, 'export.ndjson')
  lnkCommand(['admin', 'export', file], lnkEnv(join(work, 'cli'), dbUrl))
  const sqliteDir = join(work, 'sqlite')
  lnkCommand(['admin', 'import', file], lnkEnv(sqliteDir, null))

  const script = join(work, 'uniform.lua')
  writeFileSync(
    script,
    `local slugs = {${slugs.map((s) => `"${s}"`).join(',')}}\nmath.randomseed(42)\nrequest = function()\n  return wrk.format("GET", "/" .. ` +
      `slugs[math.random(#slugs)])\nend\n`,
  )

  const results: Scenario[] = []
  const sqliteNode = await startNode(null, sqliteDir)
  results.push(await scenario('sqlite, one node', [sqliteNode], null, key, script, 0))
  results[0]!.stopped.push(await sqliteNode.stop())

  const one = await startNode(dbUrl)
  results.push(await scenario('PostgreSQL, one node', [one], postmaster, key, script, 0))
  results[1]!.stopped.push(await one.stop())

  const pair = [await startNode(dbUrl), await startNode(dbUrl)]
  results.push(await scenario('PostgreSQL, two nodes', pair, postmaster, key, script, results[1]!.counted))
  results[2]!.stopped.push(...(await Promise.all(pair.map((n) => n.stop()))))
  // After every PostgreSQL node stopped (each writes what it buffered at SIGTERM): the database's own sum
  // against every response the PostgreSQL nodes gave.
  const sql = new SQL(dbUrl, { max: 1 })
  const inDb = Number(((await sql`SELECT coalesce(sum(total_clicks), 0) AS n FROM links`) as { n: string }[])[0]!.n)
  await sql.close()

  console.log(
    `\n## Scale-out: ${LINKS} links, ${CONNECTIONS} connections in all, ${ROUNDS} × ${DURATION} after 3 s warm-up, uniform slugs, desktop Chrome UA\n`,
  )
  console.log(
    '| scenario | req/s (median; rounds) | p99 (worst round) | CPU µs/req: lnk + PostgreSQL = total | peak RSS (lnk) | every redirect counted | kept as ' +
      'counts only | stop (SIGTERM) |\n|---|---|---|---|---|---|---|---|',
  )
  for (const s of results) {
    const when = s.countedAfter === null ? 'not within 60 s' : `${s.countedAfter.toFixed(1)} s after the load`
    const counted = `${countedAll(s) ? 'yes' : 'NO'}: ${s.counted} counted, ${s.requests} responses${s.bad ? `, ${s.bad} errors` : ''} (${when})`
    const stops = s.stopped.map((x) => `${x.seconds} s${x.killed ? ' KILLED' : ''}`).join(', ')
    console.log(
      `| ${s.name} | ${median(s.rps).toFixed(0)} (${s.rps.map((x) => x.toFixed(0)).join(', ')}) | ${Math.max(...s.p99).toFixed(2)} ms | ${s.lnkUs} + ` +
        `${s.pgUs} = ${(s.lnkUs + s.pgUs).toFixed(1)} | ${s.peakRssMb.map((m) => `${m} MB`).join(', ')} | ${counted} | ${s.shed} | ${stops} |`,
    )
  }
  const pgResponses = results[1]!.requests + results[2]!.requests
  console.log(
    `\nPostgreSQL after every node stopped: ${inDb} clicks in links.total_clicks against ${pgResponses} responses of both PostgreSQL scenarios ` +
      `(${inDb - pgResponses >= 0 ? '+' : ''}${inDb - pgResponses})`,
  )
}

async function ingestion(admin: string) {
  console.log(`\n## Click ingestion in-process: ${CLICKS} clicks uniform over ${LINKS} links, everything on\n`)
  console.log('| engine | clicks/s | CPU µs/click: process + PostgreSQL | clicks counted and events written |\n|---|---|---|---|')
  const sqlite = await ingest(null)
  console.log(`| SQLite (writer thread) | ${sqlite.perSecond} | ${sqlite.processUs} | ${sqlite.exact} |`)
  const pg = await ingest(await createDatabase(admin, `lnk_ingest_${process.pid}`))
  console.log(`| PostgreSQL (inline flush) | ${pg.perSecond} | ${pg.processUs} + ${pg.pgUs} = ${pg.processUs + pg.pgUs} | ${pg.exact} |`)
}

try {
  await main()
} finally {
  await cleanUp()
}
