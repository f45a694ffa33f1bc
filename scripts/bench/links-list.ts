// GET /v1/links benchmark (run by hand: `bun run scripts/bench/links-list.ts`).
// Seeds BENCH_LINKS (default 1,000,000) links in one workspace with one set-based INSERT … SELECT (a recursive
// CTE on SQLite, generate_series on PostgreSQL), their link_tags likewise, then times pages through the app
// (`app.handle`, the JSON answer included): every sort in both orders and a set of filters, each at several
// cursor depths (the cursor taken from meta.nextCursor of a numbered page ending there), BENCH_REPS
// (default 30) requests each (BENCH_DEPTHS: the depths, comma-separated), p50 and p95, and the repo's query alone; then page numbers at deep pages (OFFSET
// and a count), 7 requests each.
// SQLite by default, in a temp dir (or BENCH_DIR, kept and reused: seeding takes a while). PostgreSQL with
// BENCH_DATABASE_URL: a database of the caller's (emptied of lnk's tables first by the migrations' own
// checks: use a fresh one). Every loop is bounded.
import { sql } from 'drizzle-orm'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { engineOf } from '../../src/db/store'
import { rawRun } from '../../src/db/engine'
import { bootstrap } from '../../src/modules/identity/service'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import type { ListFilter, ListRequest, SortField, SortOrder } from '../../src/modules/links/list-port'
import { createLinkListRepo } from '../../src/modules/links/repo-list'
import { openRuntime } from '../../src/runtime'

const LINKS = Number(process.env.BENCH_LINKS ?? 1_000_000)
const REPS = Number(process.env.BENCH_REPS ?? 30)
const PER_PAGE = 25
const origin = 'http://localhost:8080'
const databaseUrl = process.env.BENCH_DATABASE_URL
const keep = process.env.BENCH_DIR
const dir = keep ?? mkdtempSync(join(tmpdir(), 'lnk-bench-list-'))
if (keep) mkdirSync(keep, { recursive: true })
const seedFile = join(dir, 'bench-list.json')
const reuse = keep !== undefined && existsSync(seedFile) && !databaseUrl

const rt = await openRuntime(
  loadConfig({ LNK_DATA_DIR: dir, LNK_BASE_URL: origin, LNK_LOG_LEVEL: 'warn', ...(databaseUrl ? { LNK_DATABASE_URL: databaseUrl } : {}) }),
  { log: silentLogger },
)
const app = createApp(rt)
const engine = engineOf(rt.store)
const pg = engine.name === 'pg'
const list = createLinkListRepo(engine)

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!

let key: string
let workspaceId: string
let seedSeconds = 0
if (reuse) {
  ;({ key, workspaceId } = JSON.parse(readFileSync(seedFile, 'utf8')) as { key: string; workspaceId: string })
} else {
  const account = await bootstrap(rt.modules.identity.ctx, { email: 'bench@example.com', workspace: 'Bench' })
  key = account.apiKey.key
  workspaceId = account.workspace.id
  const t0 = performance.now()
  await seed(account.workspace.id)
  seedSeconds = (performance.now() - t0) / 1000
  writeFileSync(seedFile, JSON.stringify({ key, workspaceId }))
}

/**
 * Links n = 1..LINKS, one second apart, ids ordered like their creation (UUIDv7-shaped). Spread so filters
 * match different shares: folder (100 folders, 70 % filed), campaign (500), tag (50 tags, 80 % tagged),
 * archived 10 %, inactive ~6 %, test 2 %, another domain 5 %; title null 20 %; never clicked 40 %.
 */
async function seed(workspaceId: string) {
  const T = Date.UTC(2024, 0, 1)
  // The expressions are the same on both engines but for the row source and string formatting.
  const n = 'n'
  const hex = (expr: string, width: number) => (pg ? `lpad(to_hex(${expr}), ${width}, '0')` : `printf('%0${width}x', ${expr})`)
  const id = `${hex(`${n} / 65536`, 8)} || '-' || ${hex(`${n} % 65536`, 4)} || '-7000-8000-' || ${hex(n, 12)}`
  const mix = `((${n} * 2654435761) % 4294967296)`
  const title = `CASE WHEN ${n} % 5 = 0 THEN NULL ELSE 'Title ' || ${hex(`${mix} % 1000003`, 6)} END`
  const tag = `CASE WHEN ${n} % 5 = 1 THEN NULL ELSE 't' || (${n} % 50) END`
  const ws = `'${workspaceId}'`
  const nl = pg ? 'chr(10)' : 'char(10)'
  const bool = (cond: string) => (pg ? `(${cond})` : `(CASE WHEN ${cond} THEN 1 ELSE 0 END)`)
  const select = `SELECT ${id}, ${ws}, CASE WHEN ${n} % 20 = 3 THEN 'go.example' ELSE 'localhost:8080' END, 's' || ${n},
      'https://example.com/p/' || ${n}, ${title},
      (CASE WHEN ${n} % 5 = 1 THEN '[]' ELSE '["t' || (${n} % 50) || '"]' END)${pg ? '::jsonb' : ''},
      CASE WHEN ${n} % 10 < 7 THEN 'fld_' || (${n} % 100) ELSE NULL END, 'cmp_' || (${n} % 500), 302,
      ${bool('false')}, ${bool('false')}, ${bool('false')}, ${bool('false')}, ${bool('false')},
      ${bool(`${n} % 17 <> 0`)}, ${bool(`${n} % 10 = 0`)}, ${bool(`${n} % 50 = 0`)},
      CASE WHEN ${n} % 5 < 2 THEN 0 ELSE ${mix} % 10000 END, 0,
      CASE WHEN ${n} % 5 < 2 THEN NULL ELSE ${T} + ${n} * 1000 + ${mix} % 86400000 END,
      lower('s' || ${n} || ${nl} || coalesce(${title}, '') || ${nl} || 'https://example.com/p/' || ${n} || ${nl} || coalesce(${tag}, '')),
      ${T} + ${n} * 1000, ${T} + ${n} * 1000 + ${mix} % 3600000`
  const columns = `id, workspace_id, domain, slug, destination_url, title, tags, folder_id, campaign_id, redirect_status,
      public_stats_enabled, deep_link_enabled, captcha_enabled, consent_required, conversion_tracking, is_active, is_archived, is_test,
      total_clicks, unique_clicks, last_clicked_at, search_text, created_at, updated_at`
  const source = pg
    ? `FROM generate_series(1, ${LINKS}::int8) AS g(n)`
    : `FROM (WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${LINKS}) SELECT n FROM g)`
  await engine.run(function* (db) {
    void db
    yield* rawRun(sql.raw(`INSERT INTO links (${columns}) ${select} ${source}`))
    yield* rawRun(sql.raw(`INSERT INTO link_tags (link_id, tag) SELECT ${id}, ${tag} ${source} WHERE ${n} % 5 <> 1`))
  })
  if (pg) await engine.run((db) => rawRun(sql.raw('VACUUM ANALYZE links')))
}

async function get(path: string) {
  const t0 = performance.now()
  const res = await app.handle(new Request(`${origin}/v1/links${path}`, { headers: { authorization: `Bearer ${key}` } }))
  const payload = (await res.json()) as { data: unknown[]; meta: { nextCursor: string | null; pagination?: { total: number } } }
  const elapsed = performance.now() - t0
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(payload)}`)
  return { elapsed, payload }
}

async function timed(path: string, reps = REPS) {
  const times: number[] = []
  let rows = 0
  for (let i = 0; i < reps; i++) {
    const { elapsed, payload } = await get(path)
    times.push(elapsed)
    rows = payload.data.length
  }
  return { p50: percentile(times, 50), p95: percentile(times, 95), rows }
}

/** The same page asked of the repo alone (no HTTP, no JSON): the query's own time. */
async function timedQuery(query: string, cursor: string) {
  const q = new URLSearchParams(query)
  const bool = (k: string) => (q.has(k) ? q.get(k) === 'true' : undefined)
  const filter: ListFilter = {
    workspaceId,
    search: q.get('search') ?? undefined,
    tag: q.get('tag') ?? undefined,
    folderId: q.get('folderId') ?? undefined,
    campaignId: q.get('campaignId') ?? undefined,
    domain: q.get('domain') ?? undefined,
    isArchived: bool('isArchived'),
    isActive: bool('isActive'),
    isTest: bool('isTest') ?? false,
  }
  const [value, id] = cursor ? (JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [number | string | null, string]) : [null, '']
  const req: ListRequest = {
    filter,
    sort: q.get('sort') as SortField,
    order: q.get('order') as SortOrder,
    limit: PER_PAGE + 1,
    ...(cursor ? { after: { value, id } } : {}),
  }
  const times: number[] = []
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now()
    await list.page(req)
    times.push(performance.now() - t0)
  }
  return percentile(times, 50)
}

const fmt = (x: number) => x.toFixed(1).padStart(7)

/** The keyset page at `depth` rows into the list of `query`: its cursor from the numbered page ending there. */
async function cursorAt(query: string, depth: number, total: number): Promise<string | null> {
  if (depth === 0) return ''
  if (depth >= total) return null
  const { payload } = await get(`?${query}&perPage=100&page=${Math.ceil(depth / 100)}`)
  return payload.meta.nextCursor
}

console.log(
  `engine: ${engine.name}; ${LINKS.toLocaleString()} links${reuse ? ' (reused)' : `, seeded in ${seedSeconds.toFixed(1)} s`}; ${REPS} requests each, perPage ${PER_PAGE}`,
)
const lists: string[] = []
for (const sort of ['createdAt', 'updatedAt', 'totalClicks', 'lastClickedAt', 'title', 'slug']) {
  for (const order of ['desc', 'asc']) lists.push(`sort=${sort}&order=${order}`)
}
for (const filter of [
  'folderId=fld_3',
  'tag=t7',
  'campaignId=cmp_7',
  'domain=go.example',
  'isArchived=true',
  'isActive=false',
  'isTest=true',
  'search=title%2001',
]) {
  lists.push(`${filter}&sort=createdAt&order=desc`, `${filter}&sort=totalClicks&order=desc`)
}
lists.push('folderId=fld_3&tag=t3&isArchived=false&sort=lastClickedAt&order=desc', 'folderId=fld_3&sort=title&order=asc')

const DEPTHS = (process.env.BENCH_DEPTHS ?? '0,1000,100000,500000,990000').split(',').map(Number)
console.log(
  `\nkeyset pages (cursor), ms through the app p50 / p95 (the query alone p50) at depth ${DEPTHS.map((d) => d.toLocaleString()).join(', ')} (rows in):`,
)
const allP50: number[] = []
const queryP50: number[] = []
for (const query of lists) {
  const { payload } = await get(`?${query}&perPage=1`)
  const total = payload.meta.pagination!.total
  const cells: string[] = []
  for (const depth of DEPTHS) {
    const cursor = await cursorAt(query, depth, total)
    if (cursor === null) {
      cells.push('      -                ')
      continue
    }
    const r = await timed(`?${query}&perPage=${PER_PAGE}&cursor=${encodeURIComponent(cursor)}`)
    const own = await timedQuery(query, cursor)
    allP50.push(r.p50)
    queryP50.push(own)
    cells.push(`${fmt(r.p50)} /${fmt(r.p95)} (${own.toFixed(1)})`)
  }
  console.log(`${query.padEnd(72)} ${total.toLocaleString().padStart(9)}  ${cells.join('  ')}`)
}
console.log(`worst keyset p50: ${Math.max(...allP50).toFixed(1)} ms through the app, ${Math.max(...queryP50).toFixed(1)} ms the query alone`)

console.log(`\npage numbers (OFFSET, with the count), ms, p50 / p95 of ${Math.min(REPS, 7)}:`)
for (const query of ['sort=createdAt&order=desc', 'sort=totalClicks&order=desc', 'folderId=fld_3&sort=createdAt&order=desc']) {
  const cells: string[] = []
  for (const page of [1, 100, 4_000, 20_000, 39_600]) {
    // Fewer: a deep page takes a while.
    const r = await timed(`?${query}&perPage=${PER_PAGE}&page=${page}`, Math.min(REPS, 7))
    cells.push(`p${page}: ${fmt(r.p50)} /${fmt(r.p95)}`)
  }
  console.log(`${query.padEnd(44)} ${cells.join('  ')}`)
}

await rt.close()
if (!keep) rmSync(dir, { recursive: true, force: true })
