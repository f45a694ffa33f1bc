// Routing micro-benchmark (run by hand: `bun run scripts/bench/routing.ts`): what routing adds to one
// redirect's CPU, in process, without HTTP. Per visit it does what the redirect handler does for a routed link:
// builds the visit's facts from the request (client address, headers, query string) and routes. Reported in
// ns of this process's CPU time per visit: a link with 10 rules whose last matches (country, device, language and query conditions, so
// the address is placed, the agent parsed and the language read), and a link with 3 variants (the keyed
// visitor hash, then the choice), each with warm caches (BENCH_VISITORS distinct visitors, default 1,000, that
// come back) and cold (every visit a new address and agent version, so every lookup misses); pickVariant
// alone; and route() on a link with neither, the cost a plain link would pay if it were not skipped before
// any facts are made. Every phase is bounded by BENCH_MAX_ITERATIONS (200,000) and BENCH_MAX_MS (3000).
//
// Then the same through the real redirect handler, in process on a temporary SQLite database: 1,000 plain
// links, 1,000 with the 10 rules and 1,000 with the 3 variants, the same requests to each set (the query the
// last rule matches, Accept-Language, X-Forwarded-For over 5,250 addresses), the click buffer left out as in
// floors/no-capture.ts so that only the redirect path is measured; five rounds of the three sets in turn,
// BENCH_REQUESTS (20,000) each, and the median CPU per request of each set, with what rules and variants add.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { bootstrap } from '../../src/modules/identity/service'
import { createRuntime } from '../../src/runtime'
import type { RoutingRule, Variant } from '../../src/db/json-shapes'
import { createEnricher } from '../../src/modules/analytics'
import { explain, pickVariant, route, type RoutedLink } from '../../src/modules/redirect/routing'
import { createFactSources, createVisitFacts } from '../../src/modules/redirect/visit-facts'
import { visitorHash } from '../../src/modules/clicks/visitor'

const MAX_MS = Number(process.env.BENCH_MAX_MS ?? 3000)
const MAX_ITERATIONS = Number(process.env.BENCH_MAX_ITERATIONS ?? 200_000)
const VISITORS = Number(process.env.BENCH_VISITORS ?? 1_000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000)

const rule = (n: number, conditions: RoutingRule['conditions'], match: 'all' | 'any' = 'all'): RoutingRule => ({
  id: `rr_bench${n}`,
  name: `rule ${n}`,
  match,
  conditions,
  destinationUrl: `https://example.com/rule-${n}`,
})

/** Ten rules over country, device, language and the query; only the last matches the benchmark's visitors. */
export const TEN_RULES: RoutingRule[] = [
  rule(1, [{ field: 'country', op: 'in', value: ['JP', 'KR', 'CN'] }]),
  rule(2, [{ field: 'device', op: 'eq', value: 'tablet' }]),
  rule(3, [{ field: 'language', op: 'eq', value: 'ja' }]),
  rule(4, [{ field: 'query.src', op: 'eq', value: 'never' }]),
  rule(5, [
    { field: 'country', op: 'eq', value: 'BR' },
    { field: 'device', op: 'eq', value: 'mobile' },
  ]),
  rule(6, [{ field: 'language', op: 'in', value: ['fr', 'es', 'it'] }]),
  rule(7, [{ field: 'query.campaign', op: 'starts_with', value: 'x-' }]),
  rule(8, [{ field: 'continent', op: 'eq', value: 'OC' }]),
  rule(
    9,
    [
      { field: 'device', op: 'eq', value: 'mobile' },
      { field: 'language', op: 'eq', value: 'pt' },
    ],
    'any',
  ),
  rule(10, [
    { field: 'query.src', op: 'eq', value: 'bench' },
    { field: 'device', op: 'eq', value: 'desktop' },
  ]),
]

export const THREE_VARIANTS: Variant[] = [
  { id: 'var_bench_a', destinationUrl: 'https://example.com/a', weight: 50 },
  { id: 'var_bench_b', destinationUrl: 'https://example.com/b', weight: 30 },
  { id: 'var_bench_c', destinationUrl: 'https://example.com/c', weight: 20 },
]

if (import.meta.main) {
  const key = randomBytes(32)
  const sources = createFactSources(createEnricher(), (ip, ua) => visitorHash(key, ip, ua))
  const base = { destinationUrl: 'https://example.com/default' }
  const ruled: RoutedLink = { ...base, routingRules: TEN_RULES, variants: null }
  const split: RoutedLink = { ...base, routingRules: null, variants: THREE_VARIANTS }
  const plain: RoutedLink = { ...base, routingRules: null, variants: null }

  /** A public address per visitor (8.x.y.z), and a Chrome version among 40, as wrk's visitors would send. */
  const visitor = (i: number) => {
    const request = new Request('http://127.0.0.1/abc?src=bench&campaign=spring', {
      headers: {
        'user-agent': `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${90 + (i % 40)}.0.0.0 Safari/537.36`,
        'accept-language': 'en-US,en;q=0.9',
      },
    })
    return { request, ip: `8.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, now: Date.now(), search: '?src=bench&campaign=spring' }
  }
  const warm = Array.from({ length: VISITORS }, (_, i) => visitor(i))
  let coldNext = 1_000_000

  function measure(name: string, visit: (i: number) => unknown) {
    for (let i = 0; i < 2_000; i++) visit(i)
    let n = 0
    const t0 = performance.now()
    const cpu0 = process.cpuUsage()
    while (n < MAX_ITERATIONS && (n & 1023 || performance.now() - t0 < MAX_MS)) visit(n++)
    // CPU time, not wall time: on a shared box the wall clock counts other processes' turns too.
    const cpu = process.cpuUsage(cpu0)
    const ns = ((cpu.user + cpu.system) * 1e3) / n
    console.log(`${name.padEnd(58)} ${ns.toFixed(0).padStart(6)} ns/visit  (${n} visits)`)
    return ns
  }

  const check = route(ruled, createVisitFacts({ live: warm[0]! }, sources))
  if (check.ruleId !== 'rr_bench10')
    throw new Error(`the last rule should match the benchmark's visitors, got ${JSON.stringify(explain(ruled, createVisitFacts({ live: warm[0]! }, sources)))}`)

  console.log(`\n## Routing per visit: facts from the request + route(), ${VISITORS} warm visitors\n`)
  measure('plain link: route() alone (the handler skips it)', (i) => route(plain, createVisitFacts({ live: warm[i % VISITORS]! }, sources)))
  const rulesWarm = measure('10 rules, last matches, warm caches', (i) => route(ruled, createVisitFacts({ live: warm[i % VISITORS]! }, sources)))
  measure('10 rules, last matches, cold (new address and agent)', () => route(ruled, createVisitFacts({ live: visitor(coldNext++) }, sources)))
  const splitWarm = measure('3 variants, warm caches (visitor hash + choice)', (i) => route(split, createVisitFacts({ live: warm[i % VISITORS]! }, sources)))
  const hashes = warm.map((v) => visitorHash(key, v.ip, v.request.headers.get('user-agent')))
  const choice = measure('3 variants: pickVariant alone', (i) => pickVariant(THREE_VARIANTS, hashes[i % VISITORS]!))
  measure('building the visit requests themselves (subtract from cold)', (i) => visitor(i))
  console.log(
    `\ntargets: 10 rules ≤ 2000 ns (${rulesWarm <= 2000 ? 'met' : 'NOT met'} warm); variant choice ≤ 1000 ns (${choice <= 1000 ? 'met' : 'NOT met'}: ` +
      `choice ${choice.toFixed(0)} ns, with the keyed visitor hash ${splitWarm.toFixed(0)} ns)`,
  )

  await throughHandler()
}

async function throughHandler() {
  await import('./floors/no-capture')
  const dir = mkdtempSync(join(tmpdir(), 'lnk-bench-routing-'))
  const origin = 'http://127.0.0.1:8080'
  const rt = createRuntime(
    loadConfig({ LNK_DATA_DIR: dir, LNK_BASE_URL: origin, LNK_SHORT_DOMAINS: '127.0.0.1:8080', LNK_TRUST_PROXY: '1', LNK_LOG_LEVEL: 'silent' }),
    {
      log: silentLogger,
    },
  )
  try {
    const app = createApp(rt)
    const account = await bootstrap(rt.modules.identity.ctx, { email: 'bench@example.com', workspace: 'Bench' })
    const sets = { plain: {}, rules: { routingRules: TEN_RULES }, variants: { variants: THREE_VARIANTS } }
    const requests: Record<string, Request[]> = {}
    for (const [name, fields] of Object.entries(sets)) {
      const slugs: string[] = []
      // 200 a request: ten rules make a create body about 1.5 KB, and a request body is capped at 1 MiB.
      for (let offset = 0; offset < 1000; offset += 200) {
        const res = await app.handle(
          new Request(`${origin}/v1/links/bulk`, {
            method: 'POST',
            headers: { authorization: `Bearer ${account.apiKey.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              links: Array.from({ length: 200 }, (_, i) => ({ destinationUrl: `https://example.com/${name}/${offset + i}`, ...fields })),
            }),
          }),
        )
        const created = (await res.json()) as { data: { failed: number; results: { link: { slug: string } }[] } }
        if (res.status !== 200 || created.data.failed) throw new Error(`seeding failed: ${res.status} ${JSON.stringify(created).slice(0, 500)}`)
        slugs.push(...created.data.results.map((r) => r.link.slug))
      }
      requests[name] = Array.from(
        { length: 5_000 },
        (_, n) =>
          new Request(`${origin}/${slugs[n % slugs.length]}?src=bench`, {
            headers: {
              'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
              'accept-language': 'en-US,en;q=0.9',
              'x-forwarded-for': `8.${n % 3}.${n % 7}.${n % 250}`,
            },
          }),
      )
    }
    const handle = rt.modules.redirect.handle
    const expect = { plain: '/plain/', rules: '/rule-10', variants: 'example.com/' } as Record<string, string>
    for (const [name, list] of Object.entries(requests)) {
      const location = (handle(list[0]!) as Response).headers.get('location') ?? ''
      if (!location.includes(expect[name]!)) throw new Error(`${name}: unexpected redirect to ${location}`)
    }
    const cpuPerRequest: Record<string, number[]> = { plain: [], rules: [], variants: [] }
    for (let round = 0; round < 6; round++) {
      for (const [name, list] of Object.entries(requests)) {
        const cpu0 = process.cpuUsage()
        for (let i = 0; i < REQUESTS; i++) handle(list[i % list.length]!)
        const cpu = process.cpuUsage(cpu0)
        // The first round warms the link cache, the compiled rules and the lookups' caches: not counted.
        if (round > 0) cpuPerRequest[name]!.push((cpu.user + cpu.system) / REQUESTS)
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    const plain = med(cpuPerRequest.plain!)
    console.log(`\n## Through the redirect handler, in process, click capture off: median of 5 rounds × ${REQUESTS} requests\n`)
    for (const [name, xs] of Object.entries(cpuPerRequest)) {
      const extra = name === 'plain' ? '' : `  (+${(med(xs) - plain).toFixed(2)} µs over plain)`
      console.log(`${name.padEnd(10)} ${med(xs).toFixed(2).padStart(6)} µs/request  (rounds ${xs.map((x) => x.toFixed(2)).join(', ')})${extra}`)
    }
  } finally {
    await rt.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
