// Webhooks benchmark (run by hand: `bun run scripts/bench/webhooks.ts`). Figures on a temporary database,
// against a receiver on 127.0.0.1 (plain http, with the loopback opt-ins) in a process of its own, as a real
// receiver is, so that lnk's CPU is measured apart from the receiver's:
//  1. Deliveries per second: BENCH_DELIVERIES events (default 20000) to one endpoint, sent by the real worker
//     loop (background timers, system clock), from the worker's start to the last 2xx recorded; the events
//     are published and fanned out before, untimed. For an endpoint with maxConcurrent 1 (one request at a
//     time) and with 10, deliveries in their own lane of 64 slots, BENCH_ROUNDS rounds each (default 3).
//     Reported per round: deliveries/s and CPU per delivery (user+sys, all threads) of lnk's process and of
//     the receiver's.
//  2. Fan-out: 10,000 events to 10 matching endpoints: the outbox consumer alone (dispatch transactions of
//     200 events, as the worker runs them), i.e. 100,000 deliveries and their jobs written, nothing sent.
// Bounded: every wait has a deadline (BENCH_MAX_MS, default 120000).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/platform/config'
import { engineOf } from '../../src/db/store'
import { dispatchOutbox, publish, type EventConsumer } from '../../src/events/outbox'
import { silentLogger } from '../../src/platform/log'
import { bootstrap } from '../../src/modules/identity/service'
import { hashKey } from '../../src/modules/identity/keys'
import { createEndpoint } from '../../src/modules/webhooks/service'
import { createRuntime, type Runtime } from '../../src/runtime'

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 20_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const MAX_MS = Number(process.env.BENCH_MAX_MS ?? 120_000)
const FANOUT_EVENTS = 10_000
const FANOUT_ENDPOINTS = 10

// The receiver: reads each body and answers 200 "ok"; GET answers how many it took. It prints its port.
const RECEIVER = `let n = 0
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, async fetch(req) {
  if (req.method === 'GET') return new Response(String(n))
  await req.arrayBuffer(); n++; return new Response('ok') } })
console.log(server.port)`
const receiver = Bun.spawn([process.execPath, '-e', RECEIVER], { stdout: 'pipe', stderr: 'inherit' })
const port = await (async () => {
  const reader = receiver.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { done, value } = await reader.read()
    if (done) throw new Error('the receiver ended before saying its port')
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return Number(text.trim())
})()
const receivedCount = async () => Number(await (await fetch(`http://127.0.0.1:${port}/`)).text())

const TICKS_PER_S = 100
/** The receiver's CPU (user+sys, all threads) in µs, from /proc (Linux). */
function receiverCpuUs(): number {
  const fields = readFileSync(`/proc/${receiver.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_S
}
const ownCpuUs = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

const dirs: string[] = []
async function world() {
  const dir = mkdtempSync(join(tmpdir(), 'lnk-bench-webhooks-'))
  dirs.push(dir)
  const config = loadConfig({
    LNK_DATA_DIR: dir,
    LNK_LOG_LEVEL: 'silent',
    LNK_WEBHOOK_ALLOW_HTTP: 'true',
    LNK_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    LNK_WEBHOOK_MAX_IN_FLIGHT: '64',
  })
  const rt = createRuntime(config, { log: silentLogger, worker: { pollMs: 50 } })
  const account = await bootstrap(rt.modules.identity.ctx, { email: `bench-${Math.random()}@example.com`, workspace: 'Bench' })
  const key = await rt.modules.identity.repo.findKeyByHash(hashKey(account.apiKey.key), rt.clock.now())
  const caller = {
    key: key!,
    user: (await rt.modules.identity.repo.findUser(key!.userId))!,
    workspace: (await rt.modules.identity.repo.findWorkspace(account.workspace.id))!,
    role: 'owner' as const,
    mode: 'live' as const,
    ip: null,
  }
  return { rt, caller, workspaceId: account.workspace.id }
}

const data = {
  id: '0190e0e0-0000-7000-8000-000000000001',
  slug: 'bench',
  domain: 'lnk.example',
  shortUrl: 'https://lnk.example/bench',
  destinationUrl: 'https://example.com/',
}

function publishMany(rt: Runtime, workspaceId: string, n: number) {
  rt.db.db.transaction((tx) => {
    for (let i = 0; i < n; i++)
      publish(tx, { type: 'link.clicked', workspaceId, mode: 'live', data: { click: { id: `clk_${i}` }, link: data } }, rt.clock.now())
  })
}

/** Fans the outbox out on the worker's connection, as the worker does, until it is empty. */
async function fanOutAll(rt: Runtime, consumers: EventConsumer[], events: number): Promise<number> {
  const engine = engineOf(rt.store, 'worker')
  let done = 0
  for (let pass = 0; pass < 10_000 && done < events; pass++) done += await dispatchOutbox(engine, consumers, rt.clock.now(), undefined, { limit: 200 })
  return done
}

async function until(cond: () => boolean | Promise<boolean>, what: string) {
  const deadline = performance.now() + MAX_MS
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`${what}: not done within ${MAX_MS} ms`)
    await Bun.sleep(5)
  }
}

async function deliveriesPerSecond(maxConcurrent: number) {
  const { rt, caller, workspaceId } = await world()
  const ctx = rt.modules.webhooks.ctx
  await createEndpoint(ctx, caller, { url: `http://127.0.0.1:${port}/hook`, events: ['link.clicked'], maxConcurrent })
  publishMany(rt, workspaceId, DELIVERIES)
  await fanOutAll(rt, rt.modules.webhooks.consumers ?? [], DELIVERIES)
  const receivedBefore = await receivedCount()
  // Polled cheaply (a job is removed in the transaction that records its attempt), counted once at the end.
  const jobLeft = rt.db.sqlite.query<{ one: number }, []>("SELECT 1 AS one FROM jobs WHERE type = 'webhook.deliver' LIMIT 1")
  const succeeded = rt.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'success'")
  const cpu0 = ownCpuUs()
  const rcpu0 = receiverCpuUs()
  const start = performance.now()
  rt.worker.start()
  rt.worker.notify()
  // Polled with the database only: asking the receiver would add to what is measured.
  await until(() => jobLeft.get() === null && succeeded.get()!.n >= DELIVERIES, 'deliveries')
  const ms = performance.now() - start
  const cpu = ownCpuUs() - cpu0
  const rcpu = receiverCpuUs() - rcpu0
  const received = (await receivedCount()) - receivedBefore
  await rt.worker.stop(5000)
  rt.workerDb.close()
  rt.db.close()
  return { ms, perSecond: (DELIVERIES / ms) * 1000, cpuUs: cpu / DELIVERIES, receiverCpuUs: rcpu / DELIVERIES, received }
}

async function fanout() {
  const { rt, caller, workspaceId } = await world()
  const ctx = rt.modules.webhooks.ctx
  for (let i = 0; i < FANOUT_ENDPOINTS; i++) {
    await createEndpoint(ctx, caller, { url: `http://127.0.0.1:${port}/e${i}`, events: i % 2 ? ['*'] : ['link.*'] })
  }
  publishMany(rt, workspaceId, FANOUT_EVENTS)
  const consumers = rt.modules.webhooks.consumers ?? []
  const start = performance.now()
  const events = await fanOutAll(rt, consumers, FANOUT_EVENTS)
  const ms = performance.now() - start
  const made = rt.db.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM webhook_deliveries').get()!.n
  const jobs = rt.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM jobs WHERE type = 'webhook.deliver'").get()!.n
  rt.workerDb.close()
  rt.db.close()
  return { ms, events, deliveries: made, jobs }
}

try {
  // BENCH_ONLY=fanout|deliveries runs one part; BENCH_MAX_CONCURRENT=n one endpoint setting.
  const only = process.env.BENCH_ONLY
  if (only !== 'deliveries') {
    const f = await fanout()
    console.log(
      `fan-out: ${f.events} events x ${FANOUT_ENDPOINTS} endpoints -> ${f.deliveries} deliveries + ${f.jobs} jobs in ${f.ms.toFixed(0)} ms ` +
        `(${((f.events / f.ms) * 1000).toFixed(0)} events/s, ${((f.deliveries / f.ms) * 1000).toFixed(0)} deliveries/s)`,
    )
  }
  if (only !== 'fanout') {
    const caps = process.env.BENCH_MAX_CONCURRENT ? [Number(process.env.BENCH_MAX_CONCURRENT)] : [1, 10]
    for (const maxConcurrent of caps) {
      for (let round = 1; round <= ROUNDS; round++) {
        const d = await deliveriesPerSecond(maxConcurrent)
        if (d.received !== DELIVERIES) console.log(`  note: the receiver took ${d.received} requests for ${DELIVERIES} deliveries`)
        console.log(
          `deliveries (maxConcurrent ${maxConcurrent}, lane 64), round ${round}: ${DELIVERIES} in ${d.ms.toFixed(0)} ms = ${d.perSecond.toFixed(0)}/s; ` +
            `CPU per delivery: lnk ${d.cpuUs.toFixed(0)} µs, receiver ${d.receiverCpuUs.toFixed(0)} µs`,
        )
      }
    }
  }
} finally {
  receiver.kill()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
}
