// Tag rename benchmark (run by hand: `bun run scripts/bench/tags.ts`). Contract 7.3 asks a rename of a tag on
// 100,000 links to take under 5 s. Seeds one workspace with BENCH_TAGGED (default 100,000) links carrying the
// tag among others, as many links without it, and another workspace whose links carry the same name (a rename
// must leave them alone); then renames the tag through the API (PATCH /v1/tags/{id}, app.handle) BENCH_ROUNDS
// times (default 3) back and forth, and deletes it once, each timed, and checks what a sample of links holds.
// SQLite in a temp dir always; PostgreSQL as well when BENCH_DATABASE_URL names a server (an admin URL: a
// database of the script's own is created there and dropped at the end). BENCH_ONLY=sqlite or pg runs one.
// Every loop is bounded.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { createApp } from '../../src/app'
import { rows as dbRows } from '../../src/db/engine'
import { engineOf } from '../../src/db/store'
import { searchTextOf } from '../../src/modules/links/fields'
import type { NewLink } from '../../src/modules/links/port'
import { bootstrap } from '../../src/modules/identity/service'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { openRuntime, type Runtime } from '../../src/runtime'

const TAGGED = Number(process.env.BENCH_TAGGED ?? 100_000)
const ROUNDS = Math.min(Number(process.env.BENCH_ROUNDS ?? 3), 20)
const ROWS_PER_INSERT = 500
const origin = 'http://127.0.0.1:8080'

function linkRow(workspaceId: string, i: number, tags: string[], now: number): NewLink {
  const slug = `b${workspaceId.slice(-6)}${i.toString(36)}`
  const destinationUrl = `https://example.com/landing/${i}`
  const title = i % 3 === 0 ? `Spring offer ${i}` : null
  return {
    id: Bun.randomUUIDv7(),
    workspaceId,
    domain: 'localhost:8080',
    slug,
    destinationUrl,
    title,
    tags,
    redirectStatus: 302,
    publicStatsEnabled: false,
    deepLinkEnabled: false,
    captchaEnabled: false,
    consentRequired: false,
    conversionTracking: false,
    isActive: true,
    isArchived: false,
    isTest: false,
    totalClicks: 0,
    uniqueClicks: 0,
    searchText: searchTextOf({ slug, title, destinationUrl, tags }),
    createdAt: now + i,
    updatedAt: now + i,
  }
}

/** Links straight into storage (the API's bulk create would take minutes here), with their link_tags rows and tag rows. */
async function seed(rt: Runtime, workspaceId: string, count: number, tagsOf: (i: number) => string[]) {
  const engine = engineOf(rt.store)
  const { links, linkTags, tags } = engine.t
  const now = Date.now()
  const names = new Set<string>()
  for (let start = 0; start < count; start += ROWS_PER_INSERT) {
    const rows = Array.from({ length: Math.min(ROWS_PER_INSERT, count - start) }, (_, j) => linkRow(workspaceId, start + j, tagsOf(start + j), now))
    const tagRows = rows.flatMap((r) => (r.tags ?? []).map((tag) => ({ linkId: r.id, tag })))
    for (const r of rows) for (const t of r.tags ?? []) names.add(t)
    await engine.transaction(function* (tx) {
      yield* dbRows(tx.insert(links).values(rows))
      for (let k = 0; k < tagRows.length; k += 5_000) yield* dbRows(tx.insert(linkTags).values(tagRows.slice(k, k + 5_000)))
    })
  }
  const tagRows = [...names].map((name) => ({
    id: `tag_${Bun.randomUUIDv7().replace(/-/g, '').slice(-20)}`,
    workspaceId,
    name,
    color: null,
    createdAt: now,
    updatedAt: now,
  }))
  await engine.transaction(function* (tx) {
    yield* dbRows(tx.insert(tags).values(tagRows).onConflictDoNothing())
  })
}

/** CPU milliseconds of the processes, all threads, user + system (/proc/<pid>/stat, in ticks of 10 ms); absent ones count 0. */
function cpuMs(pids: number[]): number {
  let ticks = 0
  for (const pid of pids) {
    if (!existsSync(`/proc/${pid}/stat`)) continue
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticks * 10
}

/**
 * The PostgreSQL sessions of the runtime's database, when the server runs on this machine (their processes are
 * then in /proc): the rename's work is theirs, not this process's. Empty on SQLite or a server elsewhere.
 */
async function serverPids(url: string | undefined): Promise<number[]> {
  if (!url) return []
  const client = new SQL(url, { max: 1 })
  try {
    const found = (await client`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`) as { pid: number }[]
    return found.map((r) => Number(r.pid)).filter((pid) => existsSync(`/proc/${pid}/stat`))
  } finally {
    await client.close()
  }
}

async function bench(label: string, env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'lnk-bench-tags-'))
  const config = loadConfig({ LNK_DATA_DIR: dir, LNK_BASE_URL: origin, LNK_LOG_LEVEL: 'warn', ...env })
  const rt = await openRuntime(config, { log: silentLogger })
  try {
    const app = createApp(rt)
    const mine = await bootstrap(rt.modules.identity.ctx, { email: `bench-${label}@example.com`, workspace: `Bench ${label}` })
    const theirs = await bootstrap(rt.modules.identity.ctx, { email: `other-${label}@example.com`, workspace: `Other ${label}` })
    const seeded = performance.now()
    await seed(rt, mine.workspace.id, 2 * TAGGED, (i) => (i % 2 === 0 ? ['team', 'spring', `batch-${i % 7}`] : ['team', `batch-${i % 7}`]))
    await seed(rt, theirs.workspace.id, 10_000, () => ['spring'])
    console.log(`${label}: seeded ${2 * TAGGED + 10_000} links in ${((performance.now() - seeded) / 1000).toFixed(1)} s`)

    const call = async (method: string, path: string, json?: unknown) => {
      const res = await app.handle(
        new Request(`${origin}${path}`, {
          method,
          headers: { authorization: `Bearer ${mine.apiKey.key}`, 'content-type': 'application/json' },
          body: json === undefined ? undefined : JSON.stringify(json),
        }),
      )
      const body = (await res.json()) as { data: Record<string, unknown> }
      if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(body)}`)
      return body.data
    }
    const list = (await call('GET', '/v1/tags')) as unknown as { id: string; name: string; linkCount: number }[]
    const tag = list.find((t) => t.name === 'spring')!
    if (tag.linkCount !== TAGGED) throw new Error(`spring counts ${tag.linkCount} links, not ${TAGGED}`)
    const names = ['summer', 'spring']
    const times: number[] = []
    const cpu: number[] = []
    const server: number[] = []
    const pids = await serverPids(env.LNK_DATABASE_URL)
    for (let round = 0; round < ROUNDS; round++) {
      const name = names[round % 2]!
      const c0 = process.cpuUsage()
      const s0 = cpuMs(pids)
      const t0 = performance.now()
      const renamed = await call('PATCH', `/v1/tags/${tag.id}`, { name })
      times.push(performance.now() - t0)
      const c = process.cpuUsage(c0)
      cpu.push((c.user + c.system) / 1000)
      server.push(cpuMs(pids) - s0)
      if (renamed.linkCount !== TAGGED) throw new Error(`after the rename ${name} counts ${renamed.linkCount} links`)
    }
    const final = names[(ROUNDS - 1) % 2]!
    const engine = engineOf(rt.store)
    const sample = await engine.db.select({ tags: engine.t.links.tags, searchText: engine.t.links.searchText }).from(engine.t.links).limit(50)
    for (const s of sample) if (s.tags.includes(final) && !s.searchText.split('\n').includes(final)) throw new Error('a renamed link kept its old search text')
    const t0 = performance.now()
    const deleted = await call('DELETE', `/v1/tags/${tag.id}`)
    const deleteMs = performance.now() - t0
    if (deleted.linksChanged !== TAGGED) throw new Error(`the deletion changed ${deleted.linksChanged} links`)
    const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`
    console.log(`${label}: rename of a tag on ${TAGGED} links (of ${2 * TAGGED} in the workspace): ${times.map(fmt).join(', ')}; delete: ${fmt(deleteMs)}`)
    // On SQLite the work is this process's; on PostgreSQL it is the server's, and this figure is only the client's share.
    if (pids.length) console.log(`${label}: CPU of the database server's sessions per rename: ${server.map(fmt).join(', ')}`)
    console.log(
      `${label}: CPU of this process per rename: ${cpu.map(fmt).join(', ')}; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} on ${navigator.hardwareConcurrency} cores`,
    )
  } finally {
    await rt.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const only = process.env.BENCH_ONLY
if (only !== 'pg') await bench('sqlite', {})
const admin = process.env.BENCH_DATABASE_URL
if (only === 'sqlite') {
  // SQLite alone, as asked.
} else if (admin) {
  const name = `lnk_bench_tags_${process.pid}`
  const server = new SQL(admin, { max: 1 })
  await server.unsafe(`CREATE DATABASE ${name}`)
  try {
    const url = new URL(admin)
    url.pathname = `/${name}`
    await bench('postgres', { LNK_DATABASE_URL: url.toString() })
  } finally {
    await server.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await server.close()
  }
} else {
  console.log('postgres: skipped (set BENCH_DATABASE_URL to an admin URL of a server to run it)')
}
