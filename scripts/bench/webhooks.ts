// Webhooks benchmark (run by hand: `bun run scripts/bench/webhooks.ts`). Two figures, in process, on a
// temporary database, against a receiver on 127.0.0.1 (plain http, with the loopback opt-ins):
//  1. Deliveries per second: BENCH_DELIVERIES events (default 5000) to one endpoint, sent by the real worker
//     loop (background timers, system clock), from publish to the last 2xx recorded. Run twice: an endpoint
//     with maxConcurrent 1 (one request at a time) and with 10, deliveries in their own lane of 64 slots.
//  2. Fan-out: 10,000 events to 10 matching endpoints: the outbox consumer alone (dispatch transactions of
//     200 events, as the worker runs them), i.e. 100,000 deliveries and their jobs written, nothing sent.
// Bounded: every wait has a deadline (BENCH_MAX_MS, default 120000).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/platform/config'
import { dispatchOutbox, publish } from '../../src/events/outbox'
import { silentLogger } from '../../src/platform/log'
import { bootstrap } from '../../src/modules/identity/service'
import { createFanout } from '../../src/modules/webhooks/fanout'
import { createEndpoint } from '../../src/modules/webhooks/service'
import { createRuntime, type Runtime } from '../../src/runtime'

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 5000)
const MAX_MS = Number(process.env.BENCH_MAX_MS ?? 120_000)
const FANOUT_EVENTS = 10_000
const FANOUT_ENDPOINTS = 10

let received = 0
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(request) {
    await request.arrayBuffer()
    received++
    return new Response('ok')
  },
})

const dirs: string[] = []
async function world() {
  const dir = mkdtempSync(join(tmpdir(), 'lnk-bench-webhooks-'))
  dirs.push(dir)
  const config = loadConfig({ LNK_DATA_DIR: dir, LNK_LOG_LEVEL: 'silent', LNK_WEBHOOK_ALLOW_HTTP: 'true', LNK_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', LNK_WEBHOOK_MAX_IN_FLIGHT: '64' })
  const rt = createRuntime(config, { log: silentLogger, worker: { pollMs: 50 } })
  const account = await bootstrap(rt.modules.identity.ctx, { email: `bench-${Math.random()}@example.com`, workspace: 'Bench' })
  const key = await rt.modules.identity.repo.findKeyByHash((await import('../../src/modules/identity/keys')).hashKey(account.apiKey.key), rt.clock.now())
  const caller = { key: key!, user: (await rt.modules.identity.repo.findUser(key!.userId))!, workspace: (await rt.modules.identity.repo.findWorkspace(account.workspace.id))!, role: 'owner' as const, mode: 'live' as const, ip: null }
  return { rt, caller, workspaceId: account.workspace.id }
}

const data = { id: '0190e0e0-0000-7000-8000-000000000001', slug: 'bench', domain: 'lnk.example', shortUrl: 'https://lnk.example/bench', destinationUrl: 'https://example.com/' }

function publishMany(rt: Runtime, workspaceId: string, n: number) {
  rt.db.db.transaction((tx) => {
    for (let i = 0; i < n; i++) publish(tx, { type: 'link.clicked', workspaceId, mode: 'live', data: { click: { id: `clk_${i}` }, link: data } }, rt.clock.now())
  })
}

async function until(cond: () => boolean, what: string) {
  const deadline = performance.now() + MAX_MS
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`${what}: not done within ${MAX_MS} ms`)
    await Bun.sleep(5)
  }
}

async function deliveriesPerSecond(maxConcurrent: number) {
  const { rt, caller, workspaceId } = await world()
  await createEndpoint(rt.modules.webhooks.ctx, caller, { url: `http://127.0.0.1:${server.port}/hook`, events: ['link.clicked'], maxConcurrent })
  received = 0
  const start = performance.now()
  publishMany(rt, workspaceId, DELIVERIES)
  rt.worker.start()
  rt.worker.notify()
  const row = () => rt.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'success'").get()!.n
  await until(() => received >= DELIVERIES && row() >= DELIVERIES, 'deliveries')
  const ms = performance.now() - start
  await rt.worker.stop(5000)
  rt.workerDb.close()
  rt.db.close()
  return { ms, perSecond: (DELIVERIES / ms) * 1000 }
}

async function fanout() {
  const { rt, caller, workspaceId } = await world()
  const ctx = rt.modules.webhooks.ctx
  for (let i = 0; i < FANOUT_ENDPOINTS; i++) {
    await createEndpoint(ctx, caller, { url: `http://127.0.0.1:${server.port}/e${i}`, events: i % 2 ? ['*'] : ['link.*'] })
  }
  publishMany(rt, workspaceId, FANOUT_EVENTS)
  const consumer = createFanout(rt.workerDb.db, ctx.state)
  const start = performance.now()
  let events = 0
  for (let pass = 0; pass < 1000 && events < FANOUT_EVENTS; pass++) {
    events += rt.workerDb.db.transaction((tx) => dispatchOutbox(tx, [consumer], rt.clock.now(), 200), { behavior: 'immediate' })
  }
  const ms = performance.now() - start
  const made = rt.db.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM webhook_deliveries').get()!.n
  const jobs = rt.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM jobs WHERE type = 'webhook.deliver'").get()!.n
  rt.workerDb.close()
  rt.db.close()
  return { ms, events, deliveries: made, jobs }
}

try {
  const f = await fanout()
  console.log(`fan-out: ${f.events} events x ${FANOUT_ENDPOINTS} endpoints -> ${f.deliveries} deliveries + ${f.jobs} jobs in ${f.ms.toFixed(0)} ms (${((f.events / f.ms) * 1000).toFixed(0)} events/s, ${((f.deliveries / f.ms) * 1000).toFixed(0)} deliveries/s)`)
  for (const maxConcurrent of [1, 10]) {
    const d = await deliveriesPerSecond(maxConcurrent)
    console.log(`deliveries to a local receiver (maxConcurrent ${maxConcurrent}, delivery lane 64): ${DELIVERIES} in ${d.ms.toFixed(0)} ms = ${d.perSecond.toFixed(0)}/s`)
  }
} finally {
  server.stop(true)
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
}
