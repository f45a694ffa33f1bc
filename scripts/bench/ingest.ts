// Click ingestion benchmark (run by hand: `bun run scripts/bench/ingest.ts`). Sustained clicks/s through the
// click buffer and the writer thread, as redirects hand them over, with everything on: enrichment (public
// addresses, real user agents), visitor rows and unique counts, rollups, and link.clicked events (a webhook
// endpoint listens in the workspace, so every click writes its event; the worker is not started, so
// nothing is sent). On disk: the data directory is
// BENCH_DIR or a directory under the system temp dir (check it is not tmpfs: `df $TMPDIR`).
// BENCH_LINKS links (1,000 and 100,000 by default), clicks spread uniformly and Zipf (s = 1) over them,
// BENCH_CLICKS (300,000) each. The producer keeps at most 20,000 clicks waiting (with as many being
// written, that stays under the buffer's cap of 50,000 in memory, so nothing is kept as counts only): the
// figure is what the writer sustains. Reports clicks/s and the process's CPU per click (all threads).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { bootstrap } from '../../src/modules/identity/service'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { createRuntime } from '../../src/runtime'
import { feedClicks } from './kit'
import { seededRandom } from './random'
import { zipfSampler } from './zipf'

const LINK_COUNTS = (process.env.BENCH_LINKS ?? '1000,100000').split(',').map(Number)
const CLICKS = Number(process.env.BENCH_CLICKS ?? 300_000)
const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
]

const rand = seededRandom(42)

async function run(links: number, distribution: 'uniform' | 'zipf') {
  const dir = process.env.BENCH_DIR ?? mkdtempSync(join(tmpdir(), 'lnk-ingest-'))
  const origin = 'http://127.0.0.1:8080'
  const config = loadConfig({
    LNK_DATA_DIR: join(dir, `${links}-${distribution}`),
    LNK_BASE_URL: origin,
    LNK_SHORT_DOMAINS: '127.0.0.1:8080',
    LNK_WEBHOOK_ALLOW_HTTP: 'true',
    LNK_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
  })
  let rt = createRuntime(config, { log: silentLogger })
  const app = createApp(rt)
  const account = await bootstrap(rt.modules.identity.ctx, { email: 'ingest@example.com', workspace: 'Ingest' })
  const auth = { authorization: `Bearer ${account.apiKey.key}`, 'content-type': 'application/json' }
  const hook = await app.handle(
    new Request(`${origin}/v1/webhooks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: 'http://127.0.0.1:9/never-sent', events: ['link.clicked'] }),
    }),
  )
  if (hook.status !== 201) throw new Error(`endpoint: ${hook.status} ${await hook.text()}`)
  const ids: string[] = []
  for (let offset = 0; offset < links; offset += 1000) {
    const body = { links: Array.from({ length: Math.min(1000, links - offset) }, (_, i) => ({ destinationUrl: `https://example.com/${offset + i}` })) }
    const res = await app.handle(new Request(`${origin}/v1/links/bulk`, { method: 'POST', headers: auth, body: JSON.stringify(body) }))
    if (res.status !== 200) throw new Error(`seeding: ${res.status}`)
    for (const r of ((await res.json()) as { data: { results: { link?: { id: string } }[] } }).data.results) if (r.link) ids.push(r.link.id)
  }
  const workspaceId = account.workspace.id
  await rt.close()

  rt = createRuntime(config, { log: silentLogger, clickWriter: 'thread' })
  const buffer = rt.modules.clicks.buffer
  const pick = distribution === 'zipf' ? zipfSampler(ids.length, rand) : () => Math.floor(rand() * ids.length)
  buffer.start()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await feedClicks(buffer, CLICKS, { linkId: () => ids[pick()]!, workspaceId, userAgent: (i) => UAS[i % UAS.length]!, rand })
  await buffer.stop()
  const seconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  const stored = (rt.db.sqlite.query('SELECT coalesce(sum(total_clicks), 0) AS n FROM links').get() as { n: number }).n
  const events = (rt.db.sqlite.query("SELECT count(*) AS n FROM outbox WHERE type = 'link.clicked'").get() as { n: number }).n
  // What the run spread its clicks over: the spread is what makes a click cost a random page, so it is
  // reported rather than assumed (a broken generator once made 100,000-link runs touch 4,400 links).
  const spread = rt.db.sqlite.query('SELECT (SELECT count(DISTINCT link_id) FROM clicks) AS links, (SELECT count(*) FROM link_visitors) AS visitors').get() as {
    links: number
    visitors: number
  }
  await rt.close()
  if (!process.env.BENCH_DIR) rmSync(dir, { recursive: true, force: true })
  console.log(
    `| ${links.toLocaleString()} | ${distribution} | ${Math.round(CLICKS / seconds).toLocaleString()} | ` +
      `${(((cpu.user + cpu.system) / CLICKS) | 0).toLocaleString()} | ${spread.links.toLocaleString()} | ${spread.visitors.toLocaleString()} | ` +
      `${stored === CLICKS && events === CLICKS ? 'all' : `MISMATCH: ${stored} counted, ${events} events`} |`,
  )
}

console.log(`\n## Click ingestion: ${CLICKS.toLocaleString()} clicks per run, writer thread, everything on\n`)
console.log(
  '| links | distribution | clicks/s | CPU µs/click (all threads) | links clicked | distinct visitors | clicks counted and events written ' +
    '|\n|---|---|---|---|---|---|---|',
)
for (const links of LINK_COUNTS) for (const d of ['uniform', 'zipf'] as const) await run(links, d)
