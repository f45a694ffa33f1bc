// The backlog after a saturating load on one PostgreSQL node (run by hand: `bun run scripts/bench/pg-backlog.ts`;
// needs Debian's `wrk` and `postgresql`). A private cluster with PostgreSQL's default durability and auto_explain
// (statements over 5 s, with their plans, and lock waits over 1 s go to its log, copied to BENCH_PG_LOG);
// one `lnk serve` on it with LINKS (20,000) links; wrk with 64 connections for LOAD_S (30) seconds of uniform
// visits; then every 2 s for up to WATCH_S (150) seconds: lnk_click_buffer, lnk_clicks_unwritten, the clicks
// shed so far, the links' total_clicks in the database, and what each of the node's sessions is doing. It ends
// when nothing is unwritten, then checks that SIGTERM leaves every served click in the totals.
// Found the quadratic link lock of the click flush (docs/performance.md, "The flush backlog on PostgreSQL").
import { spawn, spawnSync, SQL } from 'bun'
import { chownSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CHROME_UA, freePort, waitReady } from './kit'
const ROOT = join(import.meta.dir, '../..')
const MAIN = join(ROOT, 'src/main.ts')
const LINKS = Number(process.env.LINKS ?? 20000)
const LOAD_S = Number(process.env.LOAD_S ?? 30)
const WATCH_S = Number(process.env.WATCH_S ?? 150)
const work = mkdtempSync(join(tmpdir(), 'lnk-backlog-'))
// PostgreSQL refuses to run as root.
const as = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : []
const pgRoot = '/usr/lib/postgresql'
const bin = join(pgRoot, readdirSync(pgRoot).sort((a, b) => Number(b) - Number(a))[0]!, 'bin')
const dir = mkdtempSync(join(tmpdir(), 'lnk-backlog-pg-'))
if (as.length) chownSync(dir, Number(spawnSync(['id', '-u', 'postgres']).stdout.toString()), Number(spawnSync(['id', '-g', 'postgres']).stdout.toString()))
const run = (argv: string[]) => {
  const r = spawnSync(argv, { stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode) throw new Error(argv.join(' ') + r.stderr.toString())
  return r.stdout.toString()
}
run([...as, join(bin, 'initdb'), '-D', join(dir, 'data'), '-A', 'trust', '-U', 'lnk', '-E', 'UTF8', '--locale=C.UTF-8'])
const pgPort = freePort()
run([
  ...as,
  join(bin, 'pg_ctl'),
  '-D',
  join(dir, 'data'),
  '-o',
  `-p ${pgPort} -k ${dir} -c listen_addresses=127.0.0.1 -c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=5000 -c ` +
    `auto_explain.log_analyze=on -c auto_explain.log_buffers=on -c log_lock_waits=on`,
  '-l',
  join(dir, 'log'),
  '-w',
  'start',
])
const stopPg = () => run([...as, join(bin, 'pg_ctl'), '-D', join(dir, 'data'), '-m', 'immediate', 'stop'])
try {
  const admin = new SQL(`postgres://lnk@127.0.0.1:${pgPort}/postgres`, { max: 1 })
  await admin.unsafe('CREATE DATABASE repro')
  await admin.close()
  const url = `postgres://lnk@127.0.0.1:${pgPort}/repro`
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LNK_')) env[k] = v
  const port = freePort()
  Object.assign(env, {
    LNK_DATA_DIR: join(work, 'node'),
    LNK_BASE_URL: 'http://bench.lnk',
    LNK_SHORT_DOMAINS: 'bench.lnk',
    LNK_HOST: '127.0.0.1',
    LNK_PORT: String(port),
    LNK_LOG_LEVEL: 'info',
    LNK_DATABASE_URL: url,
  })
  const boot = spawnSync(['bun', 'run', MAIN, 'admin', 'bootstrap', '--email', 'b@example.com', '--workspace', 'B', '--json'], {
    env,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const key = JSON.parse(boot.stdout.toString()).apiKey.key
  const logFd = openSync(process.env.BENCH_NODE_LOG ?? join(work, 'node.log'), 'w')
  const node = spawn(['bun', 'run', MAIN, 'serve'], { env, stdout: logFd, stderr: logFd })
  await waitReady(`http://127.0.0.1:${port}/readyz`)
  const slugs: string[] = []
  for (let off = 0; off < LINKS; off += 1000) {
    const res = await fetch(`http://127.0.0.1:${port}/v1/links/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ links: Array.from({ length: 1000 }, (_, i) => ({ destinationUrl: `https://example.com/p/${off + i}` })) }),
    })
    const { data } = (await res.json()) as { data: { results: { link: { slug: string } }[] } }
    for (const r of data.results) slugs.push(r.link.slug)
  }
  console.log('seeded', slugs.length)
  const script = join(work, 'u.lua')
  writeFileSync(
    script,
    `local slugs = {${slugs.map((s) => `"${s}"`).join(',')}}\nmath.randomseed(42)\nrequest = function()\n  return wrk.format("GET", "/" .. ` +
      `slugs[math.random(#slugs)])\nend\n`,
  )
  const probe = new SQL(url, { max: 1 })
  const metrics = async () => {
    const t = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    const g = (name: string) => new RegExp(`^${name} (\\d+)$`, 'm').exec(t)?.[1]
    return { buffer: g('lnk_click_buffer'), unwritten: g('lnk_clicks_unwritten'), shed: g('lnk_clicks_shed_total') }
  }
  type Session = { state: string; wait_event: string | null; xact_s: number | null; q: string }
  const activity = async () =>
    (await probe.unsafe(`SELECT state, wait_event, extract(epoch from now() - xact_start)::int AS xact_s, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS q
      FROM pg_stat_activity WHERE datname = 'repro' AND pid <> pg_backend_pid()`)) as Session[]
  const dbTotal = async () => ((await probe.unsafe('SELECT sum(total_clicks)::int8 AS total FROM links')) as { total: string | null }[])[0]!.total
  const t0 = Date.now()
  const wrk = spawn(
    ['wrk', '-t1', '-c64', `-d${LOAD_S}s`, '-H', `User-Agent: ${CHROME_UA}`, '-H', 'Host: bench.lnk', '-s', script, `http://127.0.0.1:${port}`],
    { stdout: 'pipe' },
  )
  await wrk.exited
  console.log(
    (await new Response(wrk.stdout).text())
      .split('\n')
      .filter((l) => /Requests\/sec|requests in/.test(l))
      .join(' | '),
  )
  for (let s = 0; s < WATCH_S; s += 2) {
    const m = await metrics()
    const total = await dbTotal()
    const a = await activity()
    console.log(
      `t+${Math.round((Date.now() - t0) / 1000)}s buffer=${m.buffer} unwritten=${m.unwritten} shed=${m.shed} db_total=${total} conns=${a.length} active=${a
        .filter((r) => r.state !== 'idle')
        .map((r) => `${r.state}/${r.wait_event ?? '-'}/${r.xact_s}s:${r.q}`)
        .join(' ; ')}`,
    )
    if (m.unwritten === '0') break
    await Bun.sleep(2000)
  }
  node.kill('SIGTERM')
  await node.exited
  console.log('after SIGTERM db_total', await dbTotal())
  await probe.close()
} finally {
  spawnSync(['cp', join(dir, 'log'), process.env.BENCH_PG_LOG ?? join(tmpdir(), 'lnk-pg-backlog.log')])
  stopPg()
  rmSync(dir, { recursive: true, force: true })
  rmSync(work, { recursive: true, force: true })
}
